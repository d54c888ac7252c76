"""Compaction behind a threshold: the book's behaviour, the guards it lacks, and invariants
checked on generated conversations and on the real traces."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from playground import formats, tokens
from playground.compaction import Settings, compact
from playground.errors import InputError
from playground.model import Message, ToolCall, ToolResult, content_text, role_of
from playground.rules import book_rules, load_rules

from .strategies import REQUESTS


def call(call_id: str, name: str, **arguments) -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


REPORT_TEXT = "Solar power converts sunlight into electricity. " * 60
PAGE = "def main():\n    print('hello')\n" * 40
RESULTS = "1. IEA: solar additions reached 447 GW in 2023. 2. IRENA: three quarters of new capacity. " * 10


def book_scenario(**changes) -> dict:
    """The book's example: a report saved with create_file, a web search, a file read."""
    messages = [
        {"role": "system", "content": "You are a research assistant."},
        {"role": "user", "content": "Write a report on solar power, then check it."},
        {"role": "assistant", "content": None, "tool_calls": [call("c1", "create_file", file_path="report.md",
                                                                   content=REPORT_TEXT)]},
        {"role": "tool", "tool_call_id": "c1", "content": "Saved report.md"},
        {"role": "assistant", "content": None, "tool_calls": [call("c2", "search_web", query="solar 2024")]},
        {"role": "tool", "tool_call_id": "c2", "content": RESULTS},
        {"role": "assistant", "content": None, "tool_calls": [call("c3", "read_file", path="main.py")]},
        {"role": "tool", "tool_call_id": "c3", "content": PAGE},
        {"role": "assistant", "content": "Done: the report is saved and checked."},
    ]
    for index, message in changes.items():
        messages[int(index.removeprefix("m"))] = message
    return {"model": "gpt-4o", "messages": messages}


def run(body, threshold=0, rules=None, **settings):
    return compact(formats.read(body), rules or book_rules(), Settings(threshold=threshold, **settings))


def test_below_the_threshold_nothing_changes():
    body = book_scenario()
    result = run(body, threshold=10**9)
    assert result.report.stage == "below_threshold"
    assert formats.write(result.conversation) == body
    assert result.report.edits == () and result.report.first_changed is None
    assert result.report.cached_prefix_tokens == result.report.tokens_before


def test_the_books_scenario_compacts_every_reference():
    result = run(book_scenario(), threshold=1000)
    report = result.report
    assert report.stage == "compacted"
    messages = formats.write(result.conversation)["messages"]
    assert json.loads(messages[2]["tool_calls"][0]["function"]["arguments"]) == {
        "file_path": "report.md", "content": "[Content saved to file]"}
    assert messages[5]["content"] == "Search results processed. Query: solar 2024. Re-search if needed."
    assert messages[7]["content"] == "File content from main.py. Re-read if needed."
    assert [(e.origin.index, e.origin.block, e.kind) for e in report.edits] == [(2, 0, "call"), (5, None, "result"),
                                                                                (7, None, "result")]
    assert all(e.tokens_after < e.tokens_before for e in report.edits)
    assert report.tokens_after == report.tokens_before - sum(e.tokens_before - e.tokens_after for e in report.edits)


def test_cache_effect_counts_the_prefix_before_the_first_edit():
    conversation = formats.read(book_scenario())
    result = compact(conversation, book_rules(), Settings(threshold=0))
    before = tokens.count(conversation)
    first = result.report.first_changed_position
    assert result.report.first_changed.index == 2
    assert result.report.cached_prefix_tokens == sum(before.items[:first]) + before.tools + before.instructions


def test_a_result_the_model_has_not_read_is_left_alone():
    body = book_scenario(m8={"role": "user", "content": "and?"})
    report = run(body).report
    assert ("not_processed", 7) in [(s.reason, s.origin.index) for s in report.skipped]
    assert 7 not in [e.origin.index for e in report.edits]


def test_a_call_is_compacted_only_once_its_result_is_in():
    body = {"messages": [{"role": "user", "content": "save it"},
                         {"role": "assistant", "tool_calls": [call("c1", "create_file", path="a", content=PAGE)]}]}
    report = run(body).report
    assert [s.reason for s in report.skipped] == ["result_pending"] and report.edits == ()


def test_error_results_are_left_alone_by_default():
    body = {"system": "s", "messages": [
        {"role": "user", "content": "read"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "read_file",
                                           "input": {"path": "missing.txt"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "is_error": True,
                                      "content": "File not found: missing.txt. " * 20}]},
        {"role": "assistant", "content": "It does not exist."}]}
    assert [s.reason for s in run(body).report.skipped] == ["error_result"]
    assert [e.kind for e in run(body, compact_errors=True).report.edits] == ["result"]


def test_a_call_whose_result_failed_keeps_its_arguments():
    body = book_scenario(m3={"role": "tool", "tool_call_id": "c1", "content": "Permission denied"})
    native = formats.write(formats.read(body), "native")
    native["items"][3]["status"] = "error"
    report = run(native).report
    assert ("error_result", "call") in [(s.reason, s.kind) for s in report.skipped]


def test_keep_recent_protects_the_newest_tool_uses():
    report = run(book_scenario(), keep_recent=2).report
    assert [e.tool for e in report.edits] == ["create_file"]
    assert sorted(s.tool for s in report.skipped if s.reason == "keep_recent") == ["read_file", "search_web"]


def test_a_replacement_that_is_not_smaller_is_skipped():
    body = book_scenario(m7={"role": "tool", "tool_call_id": "c3", "content": "x = 1"})
    report = run(body).report
    assert ("not_smaller", "read_file") in [(s.reason, s.tool) for s in report.skipped]


def test_min_tokens_leaves_small_items():
    rules = load_rules({"tool_results": [{"tool": "search_web", "template": "Searched {query}.", "min_tokens": 10**6}]})
    assert [s.reason for s in run(book_scenario(), rules=rules).report.skipped] == ["below_min_tokens"]


def test_disabled_rules_report_themselves():
    rules = load_rules({"tool_results": [{"tool": "read_file", "template": "Read.", "enabled": False}]})
    assert [s.reason for s in run(book_scenario(), rules=rules).report.skipped] == ["rule_disabled"]


def test_missing_template_fields_render_unknown_and_are_reported():
    rules = load_rules({"tool_results": [{"tool": "read_file", "template": "Read {file_path} at {revision}."}]})
    edit = run(book_scenario(), rules=rules).report.edits[0]
    assert edit.missing_fields == ("revision",)


def test_still_over_when_the_rules_cannot_get_below():
    result = run(book_scenario(), threshold=100)
    assert result.report.stage == "still_over" and result.report.edits


@pytest.mark.parametrize("template", ["Read {path}: {lines} lines.", "Read {path}: {tokens} tokens, {chars} chars."])
def test_compacting_twice_changes_nothing_even_with_counting_fields(template):
    rules = load_rules({"tool_results": [{"tool": "read_file", "template": template}]})
    once = run(book_scenario(), rules=rules)
    twice = compact(once.conversation, rules, Settings(threshold=0))
    assert twice.conversation == once.conversation
    assert twice.report.edits == ()
    assert [s.reason for s in twice.report.skipped] == ["already_compacted"]


def test_negative_settings_are_refused():
    with pytest.raises(InputError, match="threshold"):
        Settings(threshold=-1)
    with pytest.raises(InputError, match="keep_recent"):
        Settings(keep_recent=-2)


def _shape(conversation):
    return [(type(i).__name__, role_of(i), getattr(i, "call_id", None), getattr(i, "name", None), i.origin)
            for i in conversation.items]


rules_strategy = st.sampled_from([
    book_rules(),
    load_rules({"tool_calls": [{"tool": "create_file", "argument": "content", "replacement": "[{chars} chars saved]"}],
                "tool_results": [{"tool": t, "template": "{tool} output omitted ({lines} lines)."}
                                 for t in ("read_file", "search_web", "bash", "tavily_search")]}),
    load_rules({"tool_results": [{"tool": "bash", "template": "{command}: {tokens} tokens", "min_tokens": 5}]}),
])


def check_invariants(conversation, rules, settings):
    result = compact(conversation, rules, settings)
    out = result.conversation
    assert _shape(out) == _shape(conversation), "ids, order, roles and item count never change"
    assert formats.read(formats.write(out)) == out, "the output is a valid request in its own format"
    report = result.report
    assert report.tokens_after <= report.tokens_before
    assert report.tokens_after == tokens.count(out).total
    changed = {p for p, (a, b) in enumerate(zip(conversation.items, out.items, strict=True)) if a != b}
    assert changed == {e.position for e in report.edits}
    last_assistant = max((p for p, i in enumerate(conversation.items) if role_of(i) == "assistant"), default=-1)
    for edit in report.edits:
        assert edit.tokens_after < edit.tokens_before
        item = conversation.items[edit.position]
        if isinstance(item, ToolResult):
            assert edit.position < last_assistant and (settings.compact_errors or not item.is_error)
    again = compact(out, rules, settings)
    assert again.conversation == out and again.report.edits == (), "a second pass changes nothing"
    return result


@pytest.mark.parametrize("name", sorted(REQUESTS))
@given(data=st.data(), rules=rules_strategy, threshold=st.sampled_from([0, 50, 10**9]),
       keep_recent=st.integers(0, 3), compact_errors=st.booleans())
def test_invariants_on_generated_conversations(name, data, rules, threshold, keep_recent, compact_errors):
    conversation = formats.read(data.draw(REQUESTS[name]))
    settings = Settings(threshold=threshold, keep_recent=keep_recent, compact_errors=compact_errors)
    result = check_invariants(conversation, rules, settings)
    if threshold == 10**9:
        assert result.report.stage == "below_threshold" and result.conversation == conversation


def test_invariants_on_the_real_traces(trace):
    conversation = formats.read(trace)
    rules = load_rules({"tool_results": [{"tool": t, "template": "Output of {tool} omitted ({lines} lines)."}
                                         for t in ("bash", "open", "find_file", "click", "type", "edit", "create")]})
    result = check_invariants(conversation, rules, Settings(threshold=0, keep_recent=1))
    assert result.report.edits
    assert result.report.tokens_after < result.report.tokens_before


def test_compaction_of_a_message_only_request_is_a_no_op():
    conversation = formats.read([{"role": "user", "content": "hi"}])
    result = compact(conversation, book_rules(), Settings(threshold=0))
    assert result.report.stage == "still_over" and result.conversation == conversation
    assert isinstance(result.conversation.items[0], Message)
    assert content_text(result.conversation.items[0].content) == "hi"
    assert not any(isinstance(i, ToolCall) for i in result.conversation.items)
