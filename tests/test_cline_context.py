"""Cline's own context management read from its task: every bill at its call, the UI log alone, and the
truncations its context manager made, recorded or inferred, replayed by ``as-it-ran`` as Cline sent them.

The tasks are made here in Cline's shapes (``tests/data/cline-task-handmade``'s: ``metrics.tokens``,
``modelInfo``, ``[tool for 'x'] Result:`` text blocks, ``<environment_details>``) and truncated by Cline's rule
as ``src/core/context/context-management/ContextManager.ts`` @ 9fd2b99be4 writes it (``getNextTruncationRange``,
ported below on its own, so the reader's port is checked against it): each bill is what the truncated request
counts, plus a system prompt, so a reconstruction that sends anything else misses it. The threshold is
``maxAllowedSize`` for a 64k window (64,000 - 27,000), which keeps the task small.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from playground import formats
from playground.conversation import ToolCall, ToolResult, content_text
from playground.errors import InputError
from playground.meter.tokens import Meter
from playground.policies import make
from playground.run.prices import read_prices
from playground.run.replay import replay

from .conftest import ROOT

DATA = ROOT / "tests" / "data"
MODEL = "claude-sonnet-4-5-20250929"
SYSTEM = 9_000  # what Cline's system prompt and tools add to every bill
MAX_ALLOWED = 37_000
NOTICE = ("[NOTE] Some previous conversation history with the user has been removed to maintain optimal context "
          "window length. The initial user task has been retained for continuity, while intermediate conversation "
          "history has been removed. Keep this in mind as you continue assisting the user. Pay special attention "
          "to the user's latest messages.")
ENVIRONMENT = "<environment_details>\n# Visual Studio Code Visible Files\nsrc/app.py\n</environment_details>"


def _next_range(messages: int, deleted: tuple[int, int] | None, keep: str) -> tuple[int, int]:
    """getNextTruncationRange, as ContextManager.ts writes it."""
    start = deleted[1] + 1 if deleted else 2
    remove = (messages - start) // 4 * 2 if keep == "half" else (messages - start) * 3 // 4 // 2 * 2
    end = start + remove - 1
    return (2, end - 1 if end % 2 == 0 else end)  # the last one removed is an assistant message (odd)


def _noticed(reply: dict) -> dict:
    """The first reply as Cline sends it after a truncation: its first text block is the notice."""
    return {"role": "assistant", "content": [{"type": "text", "text": NOTICE}, *reply["content"][1:]]}


def _file(number: int) -> str:
    return "\n".join(f"{line} | def handler_{number}_{line}(request): return render(request, 'page_{line}.html')"
                     for line in range(1, 60))


def _task(calls: int = 40) -> tuple[list[dict], list[tuple[int, tuple[int, int]]], list[int]]:
    """A Cline task of ``calls`` requests, each reading a file, truncated as Cline would: the history, the
    ranges (the request's reply index and the range in force from it on), and the bills."""
    meter = Meter(MODEL)
    history: list[dict] = [{"role": "user", "content": [
        {"type": "text", "text": "<task>\nFind why the page handlers render the wrong templates.\n</task>"},
        {"type": "text", "text": ENVIRONMENT}]}]
    deleted: tuple[int, int] | None = None
    ranges, bills, total = [], [], 0
    for call in range(calls):
        if total >= MAX_ALLOWED:  # the previous request neared the window: Cline cuts before this one
            deleted = _next_range(len(history), deleted, "quarter" if total / 2 > MAX_ALLOWED else "half")
            ranges.append((len(history), deleted))
        sent = history if deleted is None else [history[0], _noticed(history[1]), *history[deleted[1] + 1:]]
        billed = SYSTEM + meter.count(formats.read({"model": MODEL, "messages": sent}, "anthropic")).total
        bills.append(billed)
        path = f"src/handlers_{call}.py"
        history.append({"role": "assistant", "content": [
            {"type": "text", "text": f"Next I read {path} to see which template it renders."},
            {"type": "tool_use", "id": f"toolu_{call:04d}", "name": "read_file", "input": {"path": path}}],
            "modelInfo": {"modelId": MODEL, "providerId": "anthropic", "mode": "act"},
            "metrics": {"tokens": {"prompt": 10, "completion": 120, "cached": billed - 10}, "cost": 0.01}})
        history.append({"role": "user", "content": [
            {"type": "text", "text": f"[read_file for '{path}'] Result:\n{_file(call)}"},
            {"type": "text", "text": ENVIRONMENT}]})
        total = billed + 120
    return history[:-1], ranges, bills


def _ui(history: list[dict], ranges: list[tuple[int, tuple[int, int]]], bills: list[int]) -> list[dict]:
    """The UI log Cline writes beside it: each request's api_req_started (conversationHistoryIndex the last
    message before it), its reply's text, and the range in force on every message from its truncation on."""
    ui: list[dict] = [{"ts": 1, "type": "say", "say": "task", "text": "Find why the page handlers render…"}]
    in_force = None
    for number, billed in enumerate(bills):
        reply = 2 * number + 1
        started = {"ts": 10 * reply, "type": "say", "say": "api_req_started", "conversationHistoryIndex": reply - 2,
                   "text": json.dumps({"request": "…", "tokensIn": 10, "tokensOut": 120, "cacheWrites": 0,
                                       "cacheReads": billed - 10, "cost": 0.01})}
        if in_force:
            started["conversationHistoryDeletedRange"] = list(in_force)
        in_force = next((deleted for at, deleted in ranges if at == reply), in_force)
        said = {"ts": 10 * reply + 1, "type": "say", "say": "text", "conversationHistoryIndex": reply - 1,
                "text": history[reply]["content"][0]["text"]}
        if in_force:
            said["conversationHistoryDeletedRange"] = list(in_force)
        ui += [started, said]
    return ui


def _write(folder: Path, history: list[dict], ui: list[dict] | None = None) -> Path:
    folder.mkdir()
    (folder / "api_conversation_history.json").write_text(json.dumps(history))
    if ui is not None:
        (folder / "ui_messages.json").write_text(json.dumps(ui))
    return folder


def _after_cut(conversation, ranges) -> list[tuple[int, int, int]]:
    """(call, as-it-ran count + the system prompt, bill) at every call from the first truncation on."""
    run = replay(conversation, make("as-it-ran"), Meter(MODEL), read_prices().get("claude-sonnet-4-5"))
    first_cut = ranges[0][0] // 2
    return [(number, call.tokens_with + SYSTEM, billed) for number, (call, billed)
            in enumerate(zip(run.calls, [t for _, t in conversation.billed], strict=True)) if number >= first_cut]


def test_a_cline_task_whose_bills_drop_is_cut_where_cline_cut_it_and_as_it_ran_sends_what_cline_sent(tmp_path):
    history, ranges, bills = _task()
    assert len(ranges) >= 2 and ranges[1][1][1] > ranges[0][1][1], "the task truncates twice, the second cumulative"
    conversation = formats.read_path(_write(tmp_path / "task", history))
    assert [tokens for _, tokens in conversation.billed] == bills
    found = conversation.compactions
    assert [(r.inferred, r.summary, r.trigger) for r in found] == [(True, False, "truncation")] * len(ranges)
    assert [f"deleting messages 2-{deleted[1]}" in r.where for (_, deleted), r in zip(ranges, found, strict=True)] \
        == [True] * len(ranges)
    assert any("inferred from the bills" in note for note in conversation.notes)
    misses = [(call, abs(count - billed) / billed) for call, count, billed in _after_cut(conversation, ranges)]
    assert max(miss for _, miss in misses) < 0.05, misses
    none = replay(conversation, make("none"), Meter(MODEL), read_prices().get("claude-sonnet-4-5"))
    assert none.calls[-1].tokens_with + SYSTEM > 1.5 * bills[-1], "the full history is far from what Cline sent"


def test_the_ranges_the_ui_log_records_are_taken_as_they_are_and_nothing_is_inferred(tmp_path):
    history, ranges, bills = _task()
    conversation = formats.read_path(_write(tmp_path / "task", history, _ui(history, ranges, bills)))
    assert [(r.inferred, r.where) for r in conversation.compactions] == [
        (False, f"ui_messages.json: conversationHistoryDeletedRange [2, {deleted[1]}]") for _, deleted in ranges]
    misses = [abs(count - billed) / billed for _, count, billed in _after_cut(conversation, ranges)]
    assert max(misses) < 0.05


def test_a_task_that_never_neared_its_window_has_no_cut():
    conversation = formats.read_path(DATA / "cline-task-handmade")
    assert conversation.compactions == () and len(conversation.billed) == 5


def test_a_provider_whose_tokens_in_holds_the_cache_is_billed_tokens_in_alone(tmp_path):
    history, _, bills = _task(calls=3)
    for message in history:
        if "metrics" in message:  # an OpenAI-compatible endpoint: prompt_tokens, the cached part beside it
            message["modelInfo"]["providerId"] = "openai"
            message["metrics"]["tokens"] = {"prompt": message["metrics"]["tokens"]["cached"] + 10, "completion": 120,
                                            "cached": 4_000}
    conversation = formats.read_path(_write(tmp_path / "task", history))
    assert [tokens for _, tokens in conversation.billed] == bills
    assert any("whose tokensIn holds the cache" in note for note in conversation.notes)


def _said(ts: int, kind: str, text: str, at: int, ask: bool = False) -> dict:
    return {"ts": ts, "type": "ask" if ask else "say", "ask" if ask else "say": kind, "text": text,
            "conversationHistoryIndex": at, "modelInfo": {"modelId": MODEL, "providerId": "anthropic", "mode": "act"}}


def _request(ts: int, request: str, at: int, read: int) -> dict:
    return _said(ts, "api_req_started", json.dumps({"request": request, "tokensIn": 10, "tokensOut": 90,
                                                    "cacheWrites": 300, "cacheReads": read, "cost": 0.01}), at)


UI_ALONE = [  # as Cline writes a task's ui_messages.json (the shapes of the real ones studied: tests/data/README.md)
    _said(1, "task", "Fix parse_date: it rejects a trailing space.", -1),
    _request(2, f"<task>\nFix parse_date: it rejects a trailing space.\n</task>\n\n{ENVIRONMENT}", -1, 9_000),
    _said(3, "reasoning", "Read the file first.", -1),
    _said(4, "text", "I'll read src/dates.py.", -1),
    _said(5, "tool", json.dumps({"tool": "readFile", "path": "src/dates.py", "content": "/home/dev/src/dates.py",
                                 "operationIsLocatedInWorkspace": True}), -1),
    _request(6, f"[read_file for 'src/dates.py'] Result:\ndef parse_date(text):\n    return date.fromisoformat(text)"
                f"\n\n{ENVIRONMENT}", 1, 9_400),
    _said(7, "command", "python -m pytest -q", 1, ask=True),
    _said(8, "command_output", "4 passed in 0.02s", 1, ask=True),
    _request(9, f"[execute_command for 'python -m pytest -q'] Result:\nCommand executed.\nOutput:\n4 passed in 0.02s"
                f"\n\n{ENVIRONMENT}", 3, 9_800),
    _said(10, "completion_result", "parse_date now strips surrounding spaces.", 3),
    _said(11, "completion_result", "", 3, ask=True),
]


def test_the_ui_log_alone_reads_as_a_run_with_its_calls_results_and_bills():
    conversation = formats.read(UI_ALONE)
    assert (conversation.source, conversation.model) == ("cline", MODEL)
    calls = [item for item in conversation.items if isinstance(item, ToolCall)]
    assert [call.name for call in calls] == ["read_file", "execute_command", "attempt_completion"]
    answered = {result.name: content_text(result.content) for result in conversation.items
                if isinstance(result, ToolResult)}
    assert "def parse_date" in answered["read_file"] and "4 passed" in answered["execute_command"]
    assert not any("<environment_details>" in text for text in answered.values()), "its own block, as Cline sent it"
    assert [tokens for _, tokens in conversation.billed] == [9_310, 9_710, 10_110]
    assert [type(conversation.items[p]).__name__ for p, _ in conversation.billed] == ["Message", "ToolCall", "ToolCall"]
    assert any("ui_messages.json alone" in note for note in conversation.notes)


def test_the_hand_made_ui_log_alone_reads_too():
    conversation = formats.read_path(DATA / "cline-task-handmade" / "ui_messages.json")
    assert [item.name for item in conversation.items if isinstance(item, ToolCall)] == [
        "read_file", "replace_in_file", "execute_command", "attempt_completion"]
    assert len(conversation.billed) == 4, "the request whose reply was only an error joins the next"


def test_the_ui_log_alone_of_a_truncated_task_takes_its_ranges(tmp_path):
    history, ranges, bills = _task()
    conversation = formats.read(_ui(history, ranges, bills))
    found = zip(ranges, conversation.compactions, strict=True)
    assert [(r.inferred, r.where.endswith(f"[2, {d[1]}]")) for (_, d), r in found] == [(False, True)] * len(ranges)


@pytest.mark.parametrize(("name", "says"), [
    ("task_metadata.json", "Cline task's task_metadata.json"), ("taskHistory.json", "Cline's taskHistory.json")])
def test_a_part_of_a_cline_task_alone_names_the_agent_and_what_to_give(tmp_path, name, says):
    data = {"task_metadata.json": {"files_in_context": [{"path": "src/app.py", "record_state": "active"}],
                                   "model_usage": [], "environment_history": []},
            "taskHistory.json": [{"id": "1769064454592", "ts": 1769064454592, "task": "Fix it", "tokensIn": 10,
                                  "tokensOut": 5, "totalCost": 0.1, "conversationHistoryDeletedRange": [2, 17]}]}[name]
    path = tmp_path / name
    path.write_text(json.dumps(data))
    with pytest.raises(InputError) as refused:
        formats.read_path(path)
    assert says in str(refused.value) and "give the task folder" in str(refused.value)
    assert len(str(refused.value)) < 300, "not the list of every format"


def test_the_last_range_in_task_history_sets_the_last_inferred_cut(tmp_path):
    history, ranges, _ = _task()
    folder = _write(tmp_path / "task", history)
    (folder / "taskHistory.json").write_text(json.dumps([{"id": "1", "ts": 1, "task": "x", "tokensIn": 1,
                                                           "conversationHistoryDeletedRange": list(ranges[-1][1])}]))
    assert formats.read_path(folder).compactions[-1].where.endswith(f"deleting messages 2-{ranges[-1][1][1]}")


def _user(*texts: str) -> dict:
    return {"role": "user", "content": [{"type": "text", "text": text} for text in texts]}


def test_every_read_of_a_file_but_the_last_is_rewritten_as_cline_rewrites_it():
    from playground.formats.cline_truncation import FILE_NOTICE, file_reads

    final = '<final_file_content path="src/a.py">\nprint(2)\n</final_file_content>'
    history = {0: _user("<task>x</task>"), 1: {"role": "assistant", "content": []},
               2: _user("[read_file for 'src/a.py'] Result:\nprint(1)", ENVIRONMENT),
               4: _user("[read_file for 'src/b.py'] Result:\nprint('b')", ENVIRONMENT),
               6: _user(f"[replace_in_file for 'src/a.py'] Result:\nThe content was saved.\n\n{final}\n\nIMPORTANT"),
               8: _user("Look again", '<file_content path="src/a.py">\nprint(2)\n</file_content>'),
               10: _user("[read_file for 'src/c.py'] Result:\nprint('c')")}
    edits = file_reads(history, 2, 11, set())
    assert [(edit.index, edit.replace) for edit in edits] == [
        (2, FILE_NOTICE), (6, f'<final_file_content path="src/a.py"> {FILE_NOTICE} </final_file_content>')], \
        "a.py's read and edit give way to its last mention; b.py and c.py are read once"
    assert edits[1].search == final
    assert file_reads(history, 2, 11, {2, 6}) == [], "a message rewritten before is not looked at again"
    assert file_reads(history, 4, 11, set())[0].index == 6, "nothing before the start (the range deleted) counts"


def test_a_ui_log_without_a_request_is_no_run_and_says_what_to_give():
    with pytest.raises(InputError) as refused:
        formats.read([{"ts": 1, "type": "say", "say": "task", "text": "Fix it"}])
    assert "records no request" in str(refused.value) and "give the task folder" in str(refused.value)
