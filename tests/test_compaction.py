"""Compaction behind a threshold: the book's behaviour, the guards it lacks, and invariants
checked on generated conversations and on the real traces."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from playground import formats
from playground.compaction import Settings, apply_rules, compact, final_items, walk
from playground.conversation import Message, ToolCall, ToolResult, content_text, pairs, role_of
from playground.errors import InputError
from playground.meter import tokens
from playground.present import report, view
from playground.rules.errorpatterns import DATA_FILE as DEFAULT_ERROR_PATTERNS_FILE
from playground.rules.errorpatterns import DEFAULT_ERROR_PATTERNS, error_detail
from playground.rules.ruleset import book_rules, load_rules
from playground.workbench.presets import list_presets

from .conftest import TRACES, shared
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


def tool_run(output: str, tool: str = "read_file") -> dict:
    """A Chat Completions run (no error flag) whose one tool result says ``output``."""
    return {"model": "gpt-4o", "messages": [
        {"role": "user", "content": "Look at it."},
        {"role": "assistant", "content": None, "tool_calls": [call("c1", tool, path="src/app.py", command="make")]},
        {"role": "tool", "tool_call_id": "c1", "content": output},
        {"role": "assistant", "content": "Done."}]}


ERRORS = {
    "python traceback": "Traceback (most recent call last):\n  File \"app.py\", line 1\nNameError: x\n" + PAGE,
    "non-zero returncode": "<returncode>1</returncode>\n<output>\n" + PAGE + "</output>",
    "no such file or directory": "cat: src/app.py: No such file or directory\n" + RESULTS,
    "command not found": "bash: foo: command not found\n" + RESULTS,
    "starts with error": "Error: the path src/app.py is outside the workspace. " + RESULTS,
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_error_results_without_a_flag_are_recognised_and_kept(name):
    rules = load_rules({"tool_results": [{"tool": "read_file", "template": "File content from {path}."}]})
    result = run(tool_run(ERRORS[name]), rules=rules)
    assert result.report.edits == ()
    [skip] = result.report.skipped
    assert (skip.reason, skip.detail) == ("error_result", f"matched: {name}")
    [row] = [r for r in view.rows(formats.read(tool_run(ERRORS[name])), result) if r.skipped]
    assert row.skipped == (f"error result (matched: {name})",)
    assert [e.tool for e in run(tool_run(ERRORS[name]), rules=rules, detect_errors=False).report.edits] == [
        "read_file"]


def test_a_file_that_mentions_errors_is_compacted():
    page = "def handle():\n    try:\n        run()\n    except OSError as error:\n        log('error: %s', error)\n"
    rules = load_rules({"tool_results": [{"tool": "read_file", "template": "File content from {path}."}]})
    assert [e.tool for e in run(tool_run(page * 20), rules=rules).report.edits] == ["read_file"]
    log = "".join(f"2024-06-12T15:06:4{i}Z INFO request status=200\n" for i in range(6)) + ERRORS["python traceback"]
    assert [e.tool for e in run(tool_run(log), rules=rules).report.edits] == ["read_file"]  # a log quoting one


def test_a_call_whose_recognised_result_failed_keeps_its_arguments():
    rules = load_rules({"tool_calls": [{"tool": "bash", "argument": "command", "replacement": "[ran]"}]})
    report = run(tool_run("Exit code 2\n" + RESULTS, tool="bash"), rules=rules).report
    assert [(s.kind, s.reason, s.detail) for s in report.skipped] == [("call", "error_result",
                                                                      "matched: non-zero exit code")]


def test_error_patterns_come_from_the_rules_file():
    custom = load_rules({"tool_results": [{"tool": "read_file", "template": "File content from {path}."}],
                         "error_patterns": [{"name": "lint failure", "pattern": "^LINT FAILED"}]})
    assert run(tool_run("LINT FAILED\n" + PAGE), rules=custom).report.skipped[0].detail == "matched: lint failure"
    assert [e.tool for e in run(tool_run(ERRORS["python traceback"]), rules=custom).report.edits] == ["read_file"]
    none = load_rules({"tool_results": [{"tool": "read_file", "template": "x"}], "error_patterns": []})
    assert none.error_patterns.patterns == ()


@pytest.mark.parametrize(("patterns", "where"), [
    ([{"name": "bad", "pattern": "(unclosed"}], "error_patterns[0].pattern"),
    ([{"name": "", "pattern": "x"}], "error_patterns[0].name"),
    ([{"name": "a", "pattern": "x"}, "y"], "error_patterns[1]"),
    ({"name": "a"}, "error_patterns"),
])
def test_bad_error_patterns_are_refused_where_they_are(patterns, where):
    with pytest.raises(InputError) as caught:
        load_rules({"tool_results": [], "error_patterns": patterns})
    assert caught.value.where == where


def test_every_shipped_pattern_matches_its_documented_example():
    data = json.loads(DEFAULT_ERROR_PATTERNS_FILE.read_text())
    assert [DEFAULT_ERROR_PATTERNS.match(row["example"]) for row in data] == [row["name"] for row in data]
    assert error_detail(ToolResult(call_id="c", name="x", content="fine", is_error=True)) == "is_error flag"


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


def test_keep_recent_above_the_number_of_tool_uses_protects_them_all():
    # 3 answered tool uses; 4 and 5 used to protect only the newest (a negative slice).
    for keep in (3, 4, 5, 100):
        report = run(book_scenario(), keep_recent=keep).report
        assert report.edits == ()
        assert len([s for s in report.skipped if s.reason == "keep_recent"]) == 3


def test_a_call_still_waiting_for_its_result_takes_no_keep_recent_slot():
    body = book_scenario(m8={"role": "assistant", "content": None,
                             "tool_calls": [call("c4", "create_file", path="b.md", content=REPORT_TEXT)]})
    report = run(body, keep_recent=1).report
    reasons = {(s.tool, s.kind): s.reason for s in report.skipped}
    assert reasons[("create_file", "call")] == "result_pending"  # only the pending one, c4, is named here
    assert reasons[("read_file", "result")] == "keep_recent"  # the newest answered use keeps its slot
    assert [e.tool for e in report.edits] == ["create_file", "search_web"]


WILD = load_rules({"tool_calls": [{"tool": "*", "argument": "content", "replacement": "[saved]"}],
                   "tool_results": [{"tool": "*", "template": "[{tool} output omitted]"}]})


def _tool_uses(conversation):
    """The (call, result) pairs the model has read — an assistant turn after the result — oldest
    first, and the positions of the tool uses it has not read (a call without a result too)."""
    items = conversation.items
    last = max((p for p, item in enumerate(items) if role_of(item) == "assistant"), default=-1)
    answered = pairs(items)
    read = sorted((call, result) for call, result in answered.items() if result < last)
    unread = {p for call, result in answered.items() if result >= last for p in (call, result)}
    unread |= {p for p, item in enumerate(items) if isinstance(item, ToolCall) and p not in answered}
    return read, unread


@pytest.mark.parametrize("name", sorted(REQUESTS))
@given(data=st.data())
def test_keep_recent_keeps_exactly_the_newest_read_tool_uses(name, data):
    conversation = formats.read(data.draw(REQUESTS[name]))
    read, unread = _tool_uses(conversation)
    calls = sum(isinstance(item, ToolCall) for item in conversation.items)
    keep = data.draw(st.integers(0, calls + 4))  # often above the number of calls
    newest = {p for pair in read[len(read) - min(keep, len(read)):] for p in pair}
    free = compact(conversation, WILD, Settings(threshold=0))
    kept = compact(conversation, WILD, Settings(threshold=0, keep_recent=keep))
    for position in newest | unread:  # what the model has not read is kept whatever keep_recent says
        assert kept.conversation.items[position] == conversation.items[position]
    assert not {e.position for e in free.report.edits} & unread
    assert {e.position for e in kept.report.edits} == {e.position for e in free.report.edits} - newest


@pytest.mark.parametrize("name", sorted(REQUESTS))
@given(data=st.data())
def test_each_step_of_keep_recent_keeps_one_more_read_tool_use(name, data):
    conversation = formats.read(data.draw(REQUESTS[name]))
    read, _ = _tool_uses(conversation)
    keep = data.draw(st.integers(0, max(0, len(read) - 1)))
    if keep >= len(read):
        return
    fewer = compact(conversation, WILD, Settings(threshold=0, keep_recent=keep)).report
    more = compact(conversation, WILD, Settings(threshold=0, keep_recent=keep + 1)).report
    call, result = read[len(read) - keep - 1]  # the one more kept: the newest read use older than those kept
    newly = {s.position for s in more.skipped if s.reason == "keep_recent"} - {
        s.position for s in fewer.skipped if s.reason == "keep_recent"}
    assert newly <= {call, result}
    edited = {e.position for e in fewer.edits}
    assert {e.position for e in more.edits} == edited - {call, result}  # only that use's edits go
    assert edited & {call, result} <= newly


def test_keep_recent_1_is_not_0_when_the_request_ends_in_results():
    """The issue's case: the request ends in a result the model has not read. That use is kept
    anyway, so keep_recent 1 keeps the one before it — it used to take that slot, and 1 did what 0 does."""
    body = book_scenario()
    body["messages"] = body["messages"][:-1]  # drop the final answer: the request ends in read_file's result
    zero, one = run(body).report, run(body, keep_recent=1).report
    assert [(s.tool, s.reason) for s in zero.skipped if s.kind == "result"][-1] == ("read_file", "not_processed")
    assert len(one.edits) == len(zero.edits) - 1
    assert [s.tool for s in one.skipped if s.reason == "keep_recent"] == ["search_web"]


def test_a_replacement_that_is_not_smaller_is_skipped():
    body = book_scenario(m7={"role": "tool", "tool_call_id": "c3", "content": "x = 1"})
    report = run(body).report
    assert ("not_smaller", "read_file") in [(s.reason, s.tool) for s in report.skipped]


def test_skip_figures_are_the_tokens_the_row_shows():
    body = book_scenario(m7={"role": "tool", "tool_call_id": "c3", "content": "x = 1"})
    result = run(body)
    [skip] = [s for s in result.report.skipped if s.reason == "not_smaller"]
    shown = result.report.before.items[skip.position]
    replaced = tokens.Meter("gpt-4o").item(ToolResult(call_id="c3", name="read_file",
                                                      content="File content from main.py. Re-read if needed."))
    assert skip.detail == f"{replaced} ≥ {shown} tokens"
    rules = load_rules({"tool_results": [{"tool": "read_file", "template": "Read {path}.", "min_tokens": 500}]})
    result = run(book_scenario(), rules=rules)
    [skip] = result.report.skipped
    assert skip.detail == f"item {result.report.before.items[skip.position]} tokens < min_tokens 500"
    assert skip.measured == result.report.before.items[skip.position]
    edit = run(book_scenario()).report.edits[-1]
    assert edit.tokens_before == result.report.before.items[edit.position]


def test_min_tokens_leaves_small_items():
    rules = load_rules({"tool_results": [{"tool": "search_web", "template": "Searched {query}.", "min_tokens": 10**6}]})
    assert [s.reason for s in run(book_scenario(), rules=rules).report.skipped] == ["below_min_tokens"]


def test_a_call_rules_min_tokens_is_compared_with_the_argument_it_replaces():
    # Used to be the whole call's tokens: then a large neighbour (content) lifted a 3-token path over
    # any bar below the call's size, and "never replace a small argument" did not hold.
    argument = tokens.Meter("gpt-4o").text(json.dumps(REPORT_TEXT))  # the value as the call carries it
    call_tokens = run(book_scenario()).report.before.items[3]
    assert call_tokens > argument + 1  # the name and the path make the call larger than its content

    def content_rule(minimum):
        return load_rules({"tool_calls": [{"tool": "create_file", "argument": "content", "replacement": "[saved]",
                                           "min_tokens": minimum}]})

    assert [e.argument for e in run(book_scenario(), rules=content_rule(argument)).report.edits] == ["content"]
    result = run(book_scenario(), rules=content_rule(argument + 1))
    [skip] = result.report.skipped
    assert (skip.reason, skip.measured) == ("below_min_tokens", argument)
    assert skip.detail == f"argument 'content' is {argument} tokens < min_tokens {argument + 1}"
    assert report.report_to_json(result.report)["skipped"][0]["measured_tokens"] == argument
    path_rule = load_rules({"tool_calls": [{"tool": "create_file", "argument": "file_path", "replacement": "[p]",
                                            "min_tokens": 10}]})
    assert [s.reason for s in run(book_scenario(), rules=path_rule).report.skipped] == ["below_min_tokens"]


def test_a_call_rule_at_min_tokens_0_never_counts_the_argument_it_replaces():
    """Nothing is smaller than 0 tokens: counting a written file's content only to print its size
    re-encoded a third of a large run (every create_file content) in ``compact``."""
    meter = tokens.Meter("gpt-4o")
    asked: list[str] = []
    counted = meter.text
    meter.text = lambda text: asked.append(text) or counted(text)  # type: ignore[method-assign]
    conversation = formats.read(book_scenario())
    steps = list(walk(conversation, book_rules(), Settings(threshold=0), meter))
    assert json.dumps(REPORT_TEXT) not in asked
    [guard] = [s for s in steps if s.phase == "guard" and s.guard == "below_min_tokens" and s.kind == "call"]
    assert guard.passed and guard.detail == "min_tokens 0: every size passes"
    assert [e.argument for e in compact(conversation, book_rules(), Settings(threshold=0), meter=meter).report.edits
            if e.kind == "call"] == ["content"]


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


def test_template_values_are_capped_but_builtins_are_not():
    command = "python -m pytest " + "tests/test_a.py " * 20
    body = tool_run(RESULTS * 3, tool="bash")
    body["messages"][1]["tool_calls"] = [call("c1", "bash", command=command)]
    template = {"tool": "bash", "template": "Ran {command} ({chars} chars)."}
    capped = run(body, rules=load_rules({"tool_results": [template], "value_limit": 30}))
    assert formats.write(capped.conversation)["messages"][2]["content"] == (
        f"Ran {command[:29]}… ({len(RESULTS * 3)} chars).")
    uncapped = run(body, rules=load_rules({"tool_results": [template], "value_limit": 0}))
    assert formats.write(uncapped.conversation)["messages"][2]["content"] == (
        f"Ran {command} ({len(RESULTS * 3)} chars).")
    default = run(body, rules=load_rules({"tool_results": [template]}))
    assert f"Ran {command[:79]}… (" in formats.write(default.conversation)["messages"][2]["content"]


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
    # capped values, patterns, and a call rule whose text names the argument it replaces
    load_rules({"tool_calls": [{"tool": "create_*", "argument": "content", "replacement": "[saved: {content}]"},
                               {"tool": "*", "argument": "query", "replacement": "{query}{path}"}],
                "tool_results": [{"tool": "read_file|bash", "template": "{tool} {path}{command} ({lines} lines)"},
                                 {"tool": "*", "template": "Searched {query}: {chars} chars."}],
                "value_limit": 5}),
    load_rules({"tool_results": [{"tool": "*", "template": "[{tool}: {file_path} {query}]"}], "value_limit": 2,
                "error_patterns": [{"name": "x", "pattern": "x"}]}),
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
            failed = error_detail(item, rules.error_patterns, settings.detect_errors)
            assert edit.position < last_assistant and (settings.compact_errors or failed is None)
    again = compact(out, rules, settings)
    assert again.conversation == out and again.report.edits == (), "a second pass changes nothing"
    return result


@pytest.mark.parametrize("name", sorted(REQUESTS))
@given(data=st.data(), rules=rules_strategy, threshold=st.sampled_from([0, 50, 10**9]),
       keep_recent=st.integers(0, 3), compact_errors=st.booleans(), detect_errors=st.booleans())
def test_invariants_on_generated_conversations(name, data, rules, threshold, keep_recent, compact_errors,
                                               detect_errors):
    conversation = formats.read(data.draw(REQUESTS[name]))
    settings = Settings(threshold=threshold, keep_recent=keep_recent, compact_errors=compact_errors,
                        detect_errors=detect_errors)
    result = check_invariants(conversation, rules, settings)
    if threshold == 10**9:
        assert result.report.stage == "below_threshold" and result.conversation == conversation


def test_a_result_reads_its_call_as_the_pass_left_it_so_a_second_pass_changes_nothing():
    """A result's template that names an argument a call rule replaced: read from the call as it came
    in, "Searched 0000ˠ" was no smaller than the result, and a second pass, reading the replaced
    call ("0000ˠunknown", cut to "0000…"), compacted it (found by the invariants' property test)."""
    rules = load_rules({"tool_calls": [{"tool": "*", "argument": "query", "replacement": "{query}{path}"}],
                        "tool_results": [{"tool": "*", "template": "Searched {query}: {chars} chars."}],
                        "value_limit": 5})
    conversation = formats.read({"model": "gpt-4o", "messages": [
        {"role": "assistant", "content": None, "tool_calls": [{"id": "call_a", "type": "function", "function": {
            "name": "search_web", "arguments": json.dumps({"query": "0000\u02e0"}, ensure_ascii=True)}}]},
        {"role": "tool", "tool_call_id": "call_a", "content": "a.aa\na.aa\na.aa."},
        {"role": "assistant", "content": "Done."}]})
    result = check_invariants(conversation, rules, Settings(threshold=0))
    [searched] = [item for item in result.conversation.items if isinstance(item, ToolResult)]
    assert content_text(searched.content) == "Searched 0000…: 15 chars."


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


# ---------------------------------------------------------------------------------------------
# The pass as steps: the same decisions compact() makes, one step at a time


def check_walk(conversation, rules, settings):
    """walk's final state is compact()'s result, and each candidate's steps tell its story."""
    meter = tokens.Meter(conversation.model)
    steps = list(walk(conversation, rules, settings, meter))
    result = compact(conversation, rules, settings, meter=meter)
    assert final_items(steps) == result.conversation.items
    verdicts = [s for s in steps if s.phase == "verdict"]
    assert tuple(s.edit for s in verdicts if s.edit) == result.report.edits
    assert tuple(s.skip for s in verdicts if s.skip) == result.report.skipped
    assert [s for s in walk(conversation, rules, settings, meter, detail=False) if s.phase != "done"] == verdicts
    story: list = []
    for step in steps:
        story.append(step)
        if step.phase != "verdict":
            continue
        lookup, *checks, verdict = [s for s in story if s.rule is not None]
        assert lookup.phase == "lookup" and lookup.position == verdict.position
        guards = [s for s in checks if s.phase == "guard"]
        assert all(g.passed for g in guards[:-1])
        if verdict.skip:
            assert (guards[-1].guard, guards[-1].passed, guards[-1].detail) == (
                verdict.skip.reason, False, verdict.skip.detail)
        else:
            assert guards[-1].guard == "not_smaller" and guards[-1].passed
            assert guards[-1].detail == f"{verdict.tokens_after} < {verdict.tokens_before} tokens"
            assert verdict.tokens_after < verdict.tokens_before == verdict.edit.tokens_before
        story = []
    return steps


def test_walk_shows_every_guard_of_the_books_scenario():
    conversation = formats.read(book_scenario())
    steps = check_walk(conversation, book_rules(), Settings(threshold=0, keep_recent=1))
    read = [s for s in steps if s.tool == "read_file" and s.kind == "result"]
    assert [(s.phase, s.guard) for s in read] == [
        ("lookup", None), ("guard", "rule_disabled"), ("guard", "no_argument"), ("template", None),
        ("guard", "already_compacted"), ("guard", "not_processed"), ("guard", "error_result"),
        ("guard", "keep_recent"), ("verdict", None)]
    assert read[0].arguments == {"path": "main.py"} and read[0].pattern == "read_file"
    assert read[3].values == {"file_path": "main.py"}
    assert read[3].text == "File content from main.py. Re-read if needed."
    assert read[-1].skip.reason == "keep_recent" and read[-2].detail == "keep_recent = 1"
    unmatched = [s for s in steps if s.tool == "create_file" and s.kind == "result"]  # no rule for it
    assert [(s.phase, s.rule) for s in unmatched] == [("lookup", None)]
    assert steps[-1].phase == "done" and steps[-1].position == len(conversation.items)


@pytest.mark.parametrize("preset", list_presets(), ids=lambda p: p.key)
def test_walk_ends_where_compact_does_on_every_preset(preset):
    for keep_recent in (0, preset.keep_recent, 2):
        check_walk(preset.conversation, preset.rules, Settings(threshold=0, keep_recent=keep_recent))


@pytest.mark.parametrize("name", ["sweagent_marshmallow-1867_function_calling.openai.json",
                                  "invariant_explorer_webarena_trace2.openai.json",
                                  "miniswe_pr_astropy-12907.openai.json"])
def test_walk_ends_where_compact_does_on_every_real_trace(name):
    conversation = formats.read(json.loads(shared(TRACES / name).read_text()))
    check_walk(conversation, WILD, Settings(threshold=0, keep_recent=3))
    check_walk(conversation, book_rules(), Settings(threshold=0))


def test_apply_rules_is_the_walk_run_to_the_end():
    conversation = formats.read(book_scenario())
    meter = tokens.Meter("gpt-4o")
    compacted, edits, skipped = apply_rules(conversation, book_rules(), Settings(threshold=0), meter)
    steps = list(walk(conversation, book_rules(), Settings(threshold=0), meter))
    assert compacted.items == final_items(steps) and len(edits) == 3 and skipped == ()
