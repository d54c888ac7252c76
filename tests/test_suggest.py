"""Suggested rules: classification by arguments and sizes (tools never seen before), min_tokens
from the size distribution, the preview, the "no rule matched" sentence, and the measurements
the issue asks for on the real traces."""

from __future__ import annotations

import json

import pytest

from playground import formats
from playground.compaction import Settings, apply_rules, compact
from playground.errorpatterns import error_detail
from playground.errors import InputError
from playground.model import Conversation, Message, ToolCall, ToolResult, link, pairs
from playground.rules import Rules, load_rules, rules_to_json
from playground.rulesets import RULESETS
from playground.suggest import LARGE_ARGUMENT, add_rows, min_tokens, no_match_message, preview, suggest_rules
from playground.tokens import Meter

from .conftest import SHARED, TRACES, shared

TRACE_FILES = ["sweagent_marshmallow-1867_function_calling.openai.json",
               "invariant_explorer_webarena_trace2.openai.json",
               "miniswe_pr_astropy-12907.openai.json"]
BIG = "\n".join(f"line {n}: some output the agent already used, long enough to matter" for n in range(120))


def _run(*uses: tuple[str, dict, str]) -> Conversation:
    """A conversation: a user message, then for each (tool, arguments, output) a call, its
    result and an assistant turn that read it."""
    items: list = [Message(role="user", content="Do the work.")]
    for n, (tool, arguments, output) in enumerate(uses):
        items += [ToolCall(call_id=f"c{n}", name=tool, arguments=json.dumps(arguments)),
                  ToolResult(call_id=f"c{n}", content=output),
                  Message(role="assistant", content="Noted.")]
    return Conversation(items=link(items), format="chat", model="gpt-4o")


def _rows(conversation: Conversation) -> dict[tuple[str, str], dict]:
    suggestion = suggest_rules(conversation, Meter("gpt-4o"))
    return {(row.table, row.tool): dict(row.rule) for row in suggestion.rows}


def test_unseen_tools_are_classified_by_their_arguments():
    rows = _rows(_run(("fetch_doc", {"uri": "https://example.com/a"}, BIG),
                      ("lookup", {"q": "solar output 2024", "path": "docs/"}, BIG),
                      ("run_it", {"cmd": "make test"}, BIG),
                      ("store", {"target": "a.txt", "patch": BIG}, "ok"),
                      ("frobnicate", {"level": 3}, BIG)))
    assert rows[("tool_results", "fetch_doc")]["template"] == "Page content from {uri}. Fetch it again if needed."
    assert "{q}" in rows[("tool_results", "lookup")]["template"]  # a query beats a path: it is a search
    assert "{cmd}" in rows[("tool_results", "run_it")]["template"]
    assert rows[("tool_calls", "store")]["argument"] == "patch"
    assert ("tool_results", "store") not in rows  # "ok" is too small for a reference
    assert rows[("tool_results", "frobnicate")]["template"].startswith("Output of {tool}")


def test_small_tools_and_small_arguments_get_no_rule():
    conversation = _run(("Bash", {"command": "ls -la /tmp && echo done, sixty characters or so"}, "a\nb"),
                        ("Read", {"file_path": "a.py"}, BIG))
    suggestion = suggest_rules(conversation, Meter("gpt-4o"))
    assert [(row.table, row.tool) for row in suggestion.rows] == [("tool_results", "Read")]
    assert any(note.startswith("Bash:") for note in suggestion.notes)


def test_two_large_arguments_of_one_call_are_both_replaced():
    edits = [("Edit", {"file_path": f"f{n}.py", "old_string": BIG[: 2000 + 300 * n], "new_string": BIG[:3000]}, "ok")
             for n in range(4)]
    conversation = _run(*edits)
    rules = suggest_rules(conversation, Meter("gpt-4o")).rules()
    assert [rule.argument for rule in rules.tool_calls] == ["new_string", "old_string"]
    out = compact(conversation, rules, Settings(threshold=0), meter=Meter("gpt-4o")).conversation
    for call in (item for item in out.items if isinstance(item, ToolCall)):
        arguments = call.parsed_arguments()
        assert arguments["old_string"].startswith("[old_string (")  # sized after new_string went
        assert arguments["new_string"].endswith(f"the call succeeded. Read {arguments['file_path']} to see the file.]")


def test_min_tokens_follows_the_size_distribution():
    assert min_tokens([1000, 500, 10, 5], reference=10) == 500  # 1000 + 500 hold 99% of the tokens
    assert min_tokens([50, 40], reference=20) == 60  # never below three references
    assert min_tokens([300], reference=10) == 300


def test_suggested_rules_load_and_round_trip():
    conversation = _run(("Read", {"file_path": "a.py"}, BIG), ("Write", {"file_path": "b.py", "content": BIG}, "ok"))
    suggestion = suggest_rules(conversation, Meter("gpt-4o"))
    rules = load_rules(json.loads(json.dumps(suggestion.rules_json())))
    assert rules == suggestion.rules()
    assert load_rules(rules_to_json(rules)) == rules
    assert RULESETS["suggested"][1](conversation) == rules
    assert "Read {file_path}" in rules.tool_calls[0].replacement.text  # the write says where to look


def test_preview_shows_the_largest_edit_and_what_the_row_saves():
    conversation = _run(("Read", {"file_path": "a.py"}, BIG), ("Read", {"file_path": "b.py"}, BIG[: len(BIG) // 2]))
    meter = Meter("gpt-4o")
    suggestion = suggest_rules(conversation, meter)
    (shown,) = preview(conversation, suggestion, Settings(threshold=0), meter)
    _, edits, _ = apply_rules(conversation, suggestion.rules(), Settings(threshold=0), meter)
    assert shown.edits == len(edits) == 2
    assert shown.saved == sum(e.tokens_before - e.tokens_after for e in edits)
    assert shown.before == BIG and shown.after == "File content from a.py. Re-read if needed."
    guarded = preview(conversation, suggestion, Settings(threshold=0, keep_recent=2), meter)
    assert guarded[0].edits == 0 and guarded[0].saved == 0


def test_add_rows_replaces_rows_for_the_same_tool_and_keeps_the_others():
    results = [{"enabled": True, "tool": "Read", "template": "old", "min_tokens": 0},
               {"enabled": True, "tool": "Other", "template": "{bad.attr}", "min_tokens": 0}]  # kept, to be fixed
    calls = [{"enabled": True, "tool": "Write", "argument": None, "replacement": "old", "min_tokens": 0}]
    conversation = _run(("Read", {"file_path": "a.py"}, BIG), ("Write", {"file_path": "b", "content": BIG}, "ok"))
    new_calls, new_results = add_rows(calls, results, suggest_rules(conversation, Meter("gpt-4o")))
    assert [(r["tool"], r["template"]) for r in new_results] == [
        ("Other", "{bad.attr}"), ("Read", "File content from {file_path}. Re-read if needed.")]
    assert [(r["tool"], r["argument"]) for r in new_calls] == [("Write", "content")]  # blank argument = content


def test_no_match_message_names_the_largest_tools():
    conversation = _run(("Bash", {"command": "cat big.log"}, BIG), ("Read", {"file_path": "a"}, BIG[:300]))
    meter = Meter("gpt-4o")
    count = meter.count(conversation)
    message = no_match_message(conversation, count, Rules(), edits=0, threshold=0)
    assert message is not None and message.startswith("No rule matched any tool; the largest are Bash (")
    assert message.index("Bash") < message.index("Read")
    assert no_match_message(conversation, count, Rules(), edits=0, threshold=count.total + 1) is None
    assert no_match_message(conversation, count, Rules(), edits=1, threshold=0) is None
    book = load_rules({"tool_results": [{"tool": "Bash", "template": "x", "min_tokens": 10**6}]})
    assert no_match_message(conversation, count, book, edits=0, threshold=0).startswith("No rule made an edit")


# ---------------------------------------------------------------------------------------------
# "Done when", on the real traces: threshold 0, keep_recent 3, no summarization


def _errors(conversation: Conversation) -> set[int]:
    """Positions of error results as the engine sees them: the format's flag or an error pattern."""
    return {p for p, item in enumerate(conversation.items) if isinstance(item, ToolResult) and error_detail(item)}


def _blank_every_result(conversation: Conversation) -> Rules:
    """The most any result rule could save: every tool's results become one character."""
    tools = dict.fromkeys(item.name for item in conversation.items if isinstance(item, ToolCall))
    return load_rules({"tool_results": [{"tool": tool, "template": "x"} for tool in tools]})


SESSIONS = SHARED / "sessions"
SESSION_FILES = ["claude-code-session-196820da.jsonl", "claude-code-session-624a4a58.jsonl"]


def _load(name: str) -> Conversation:
    """A trace, or an agent's session log once ``formats`` reads them (skipped until then)."""
    if name in TRACE_FILES:
        return formats.loads(shared(TRACES / name).read_bytes())
    try:
        return formats.loads(shared(SESSIONS / name).read_bytes())
    except InputError as exc:
        pytest.skip(f"formats cannot read {name} on this branch yet ({exc})")


@pytest.mark.parametrize("name", TRACE_FILES + SESSION_FILES)
def test_suggested_rules_halve_a_trace_or_reach_what_guards_allow(name):
    conversation = _load(name)
    meter = Meter(conversation.model)
    settings = Settings(threshold=0, keep_recent=3)
    result = compact(conversation, suggest_rules(conversation, meter).rules(), settings, meter=meter)
    report = result.report
    # Every pair intact: same ids in the same places, every call still answered by its result.
    assert [(type(a), getattr(a, "call_id", None)) for a in conversation.items] == [
        (type(b), getattr(b, "call_id", None)) for b in result.conversation.items]
    assert pairs(result.conversation.items) == pairs(conversation.items)
    formats.read(formats.write(result.conversation))  # still a valid request in its format
    # Every error result kept, and the call that failed.
    answered_by = {r: c for c, r in pairs(conversation.items).items()}
    for position in _errors(conversation):
        assert result.conversation.items[position] == conversation.items[position]
        assert result.conversation.items[answered_by[position]] == conversation.items[answered_by[position]]
    # Half the tokens, or — where the guards leave less than half to take (keep_recent 3 on a
    # short run, errors kept) — at least 90% of what blanking every eligible result would save.
    ceiling = compact(conversation, _blank_every_result(conversation), settings, meter=meter).report.saved
    assert report.saved >= 0.5 * report.tokens_before or report.saved >= 0.9 * ceiling, (report.saved, ceiling)


@pytest.mark.parametrize("name", TRACE_FILES + SESSION_FILES)
def test_no_suggested_edit_touches_a_small_argument(name):
    conversation = _load(name)
    meter = Meter(conversation.model)
    _, edits, _ = apply_rules(conversation, RULESETS["suggested"][1](conversation), Settings(threshold=0), meter)
    calls = [edit for edit in edits if edit.kind == "call"]
    for edit in calls:  # the argument replaced, measured as the engine does (its value as the call carries it)
        value = conversation.items[edit.position].parsed_arguments()[edit.argument]
        assert meter.text(json.dumps(value, ensure_ascii=False)) >= LARGE_ARGUMENT, (edit.argument, value[:80])
        assert len(value) > 250, (edit.argument, value)  # never a short command or a one-line edit


@pytest.mark.parametrize("name", TRACE_FILES + SESSION_FILES)
def test_compacting_twice_with_suggested_rules_changes_nothing(name):
    conversation = _load(name)
    meter = Meter(conversation.model)
    rules, settings = RULESETS["suggested"][1](conversation), Settings(threshold=0, keep_recent=3)
    once = compact(conversation, rules, settings, meter=meter)
    again = compact(once.conversation, rules, settings, meter=meter)
    assert again.report.edits == () and again.conversation == once.conversation


def test_cli_prints_loadable_rules_and_explains_each_row_on_stderr(tmp_path, capsys):
    from playground import cli

    path = tmp_path / "run.json"
    path.write_text(json.dumps(formats.write(_run(("Read", {"file_path": "a.py"}, BIG),
                                                  ("Bash", {"command": "ls"}, "a")))))
    assert cli.main(["rules", "--suggest", str(path)]) == 0
    out, err = capsys.readouterr()
    rules = load_rules(json.loads(out))
    assert [r.tool for r in rules.tool_results] == ["Read"]
    assert "tool_results · Read: read-like (a 'file_path' argument)" in err
    assert "no rule · Bash:" in err
    assert cli.main(["compact", str(path), "--preset", "suggested", "--threshold", "0", "--no-summarize"]) == 0
    compacted = formats.read(json.loads(capsys.readouterr().out))
    (read,) = [item for item in compacted.items if isinstance(item, ToolResult) and item.name == "Read"]
    assert read.content == "File content from a.py. Re-read if needed."
    with pytest.raises(SystemExit) as exit_:
        cli.main(["compact", str(path), "--preset", "book", "--rules", str(path)])
    assert exit_.value.code == 2 and "not allowed with" in capsys.readouterr().err
