"""The run as it ran: where a log shows the agent compacting its own context, the readers record it
(``Conversation.compactions``) and the ``as-it-ran`` policy replays what the agent really sent.

The real log: the shared Claude Code session 624a4a58 (one ``compact_boundary``, line 158; 196820da has
none); tests/data/codex-rollout.jsonl, written after Codex's format (tests/data/README.md), has a ``compacted``
line 17 (no real Codex log with one is in the repository). Small logs made here for the other
shapes, each after the agent's own code: Claude Code's ``preservedSegment`` (anthropics/claude-code#87602
and the 2.x ``compactMetadata``), Codex's remote compaction (``codex-rs/core/src/compact_remote.rs``: an
empty ``message`` and a ``replacement_history``) and its 20,000-token budget for user messages
(``compact.rs``, ``build_compacted_history_with_limit``), and an OpenHands V1 ``Condensation``
(``openhands-sdk/openhands/sdk/event/condenser.py``, ``context/view.py``).
"""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from playground import formats
from playground.conversation import Message, ToolCall, ToolResult, content_text
from playground.corpus.evaluate import Setup, evaluate_run
from playground.meter.tokens import Meter
from playground.policies import make
from playground.run.compare import compare
from playground.run.prices import read_prices
from playground.run.replay import compaction_marks, replay

from .conftest import ROOT, SHARED, shared
from .strategies import REQUESTS
from .test_cli import cli

DATA = ROOT / "tests" / "data"
SESSIONS = SHARED / "sessions"
COMPACTED = SESSIONS / "claude-code-session-624a4a58.jsonl"
NEVER_COMPACTED = SESSIONS / "claude-code-session-196820da.jsonl"
SONNET = read_prices().get("claude-sonnet-4-5")


def _read(path: Path):
    return formats.read_path(shared(path) if SHARED in path.parents else path)


def _jsonl(tmp_path: Path, name: str, lines: list[dict]) -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


# --- the readers record where the agent compacted -------------------------------------------------

def test_the_real_claude_code_log_records_its_one_compaction_at_the_summary_after_line_158():
    conversation = _read(COMPACTED)
    (record,) = conversation.compactions
    summary = conversation.items[record.position]
    assert isinstance(summary, Message) and summary.role == "user" and record.summary
    assert content_text(summary.content).startswith("This session is being continued from a previous conversation")
    assert (record.where, record.trigger, record.tokens_before, record.kept, record.added) == (
        "line 158", "auto", 155_979, (), ())
    assert any("compacted its context at line 158" in note for note in conversation.notes), "the note stays"
    assert _read(NEVER_COMPACTED).compactions == ()


def _claude_line(kind: str, uuid: str, content, **extra) -> dict:
    message = {"role": kind, "content": content, **({"model": "claude-sonnet-4-5", "id": f"m-{uuid}"}
                                                    if kind == "assistant" else {})}
    return {"type": kind, "uuid": uuid, "sessionId": "s", "isSidechain": False, "message": message, **extra}


def test_a_claude_code_boundary_that_preserves_a_segment_keeps_those_messages(tmp_path):
    lines = [_claude_line("user", "u1", "Fix the parser."),
             _claude_line("assistant", "a1", [{"type": "text", "text": "Reading it."}]),
             _claude_line("user", "u2", "Also the tests."),
             _claude_line("assistant", "a2", [{"type": "text", "text": "Will do."}]),
             {"type": "system", "subtype": "compact_boundary", "uuid": "b", "content": "Conversation compacted",
              "compactMetadata": {"trigger": "manual", "preTokens": 61_895,
                                  "preservedSegment": {"headUuid": "u2", "anchorUuid": "u2", "tailUuid": "a2"}}},
             _claude_line("user", "s", "This session is being continued… Summary: parser fixed.",
                          isCompactSummary=True),
             _claude_line("assistant", "a3", [{"type": "text", "text": "Continuing with the tests."}])]
    conversation = _read(_jsonl(tmp_path, "session.jsonl", lines))
    (record,) = conversation.compactions
    assert [content_text(conversation.items[p].content) for p in record.kept] == ["Also the tests.", "Will do."]
    assert (record.trigger, record.tokens_before) == ("manual", 61_895)
    assert content_text(conversation.items[record.position].content).startswith("This session is being continued")


def test_the_codex_rollout_records_what_codex_rebuilds_after_its_compacted_line():
    conversation = _read(DATA / "codex-rollout.jsonl")
    (record,) = conversation.compactions
    kept = [content_text(conversation.items[p].content) for p in record.kept]
    assert kept[0].startswith("<environment_context>"), "the initial context"
    assert kept[1].startswith("parse_date rejects dates"), "the user's message"
    assert content_text(conversation.items[record.position].content).startswith("Summary so far")
    assert record.where == "line 17" and record.added == ()
    run = replay(conversation, make("as-it-ran"), Meter("gpt-5"), read_prices().get("gpt-5"))
    last = run.calls[-1].position
    assert run.final.items == (*(conversation.items[p] for p in record.kept), *conversation.items[record.position:last])


def _codex(kind: str, payload: dict) -> dict:
    return {"timestamp": "2025-10-29T09:10:00.000Z", "type": kind, "payload": payload}


def _user(text: str) -> dict:
    return _codex("response_item", {"type": "message", "role": "user",
                                    "content": [{"type": "input_text", "text": text}]})


def _reply(text: str) -> dict:
    return _codex("response_item", {"type": "message", "role": "assistant",
                                    "content": [{"type": "output_text", "text": text}]})


def test_a_codex_remote_compaction_sends_its_replacement_history(tmp_path):
    replacement = [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Fix the parser."}]},
                   {"type": "compaction", "encrypted_content": "gAAAA-opaque"}]
    lines = [_codex("turn_context", {"model": "gpt-5-codex"}), _user("Fix the parser."), _reply("Done reading."),
             _codex("compacted", {"message": "", "replacement_history": replacement}),
             _user("Now the tests."), _reply("Tests pass.")]
    conversation = _read(_jsonl(tmp_path, "rollout.jsonl", lines))
    (record,) = conversation.compactions
    assert record.kept == () and not record.summary
    assert [item.role for item in record.added] == ["user", "assistant"]  # the user message, the opaque item
    assert content_text(conversation.items[record.position].content) == "Now the tests."
    run = replay(conversation, make("as-it-ran"), Meter("gpt-5"), read_prices().get("gpt-5"))
    assert run.final.items[:2] == record.added


def test_codex_keeps_the_newest_user_messages_up_to_20000_of_its_tokens_and_cuts_the_one_that_overflows(tmp_path):
    old, middle, new = "a" * 60_000, "b" * 40_000, "c" * 8_000  # 15,000, 10,000 and 2,000 of Codex's tokens
    lines = [_user(old), _reply("ok"), _user(middle), _reply("ok"), _user(new), _reply("ok"),
             _codex("compacted", {"message": "Summary: three requests."}), _user("Go on."), _reply("Going on.")]
    conversation = _read(_jsonl(tmp_path, "rollout.jsonl", lines))
    (record,) = conversation.compactions
    assert [content_text(conversation.items[p].content) for p in record.kept] == [middle, new]
    (cut,) = record.added  # 8,000 of Codex's tokens were left for the oldest
    assert content_text(cut.content) == "a" * 32_000 + "…[7,000 tokens truncated]"


def _openhands_events() -> list[dict]:
    def message(id_: str, role: str, text: str) -> dict:
        return {"id": id_, "kind": "MessageEvent", "source": "user" if role == "user" else "agent",
                "llm_message": {"role": role, "content": [{"type": "text", "text": text}]}}

    def action(id_: str, call: str, response: str) -> dict:
        return {"id": id_, "kind": "ActionEvent", "source": "agent", "thought": [{"type": "text", "text": "Next."}],
                "tool_call": {"id": call, "name": "terminal", "arguments": json.dumps({"command": "ls"})},
                "llm_response_id": response}

    def observation(id_: str, call: str, text: str) -> dict:
        return {"id": id_, "kind": "ObservationEvent", "source": "environment", "tool_call_id": call,
                "observation": {"content": [{"type": "text", "text": text}], "is_error": False}}

    system = {"type": "text", "text": "You are OpenHands."}
    return [{"id": "sys", "kind": "SystemPromptEvent", "source": "agent", "system_prompt": system},
            message("u1", "user", "List the files."),
            action("a1", "c1", "r1"), observation("o1", "c1", "a.py b.py"),
            action("a2", "c2", "r2"), observation("o2", "c2", "c.py"),
            {"id": "k1", "kind": "Condensation", "source": "environment", "forgotten_event_ids": ["a1", "o1", "o2"],
             "summary": "The agent listed the files.", "summary_offset": 2, "llm_response_id": "r3"},
            action("a3", "c3", "r4"), observation("o3", "c3", "d.py"), message("m", "assistant", "Done.")]


def test_an_openhands_condensation_keeps_what_it_did_not_forget_and_no_call_without_its_result():
    conversation = formats.read(_openhands_events())
    (record,) = conversation.compactions
    kept = [conversation.items[p] for p in record.kept]
    assert [content_text(item.content) for item in kept if isinstance(item, Message)][:2] == [
        "You are OpenHands.", "List the files."]
    assert not any(isinstance(item, ToolCall | ToolResult) for item in kept), "o2 forgotten: its call goes too"
    assert conversation.items[record.position].content == "The agent listed the files."
    assert record.where == "event 6"
    run = replay(conversation, make("as-it-ran"), Meter("gpt-4o"), read_prices().get("gpt-4o"), mode="per-call")
    sent = [content_text(item.content) for item in run.final.items if isinstance(item, ToolResult)]
    assert sent == ["d.py"], "the forgotten observations are not sent, the one after the condensation is"


# --- the policy -----------------------------------------------------------------------------------

@settings(max_examples=40)
@given(st.one_of(*REQUESTS.values()), st.sampled_from(["stored", "per-call"]),
       st.sampled_from(["openai", "anthropic", "none"]))
def test_without_an_agent_compaction_as_it_ran_is_none_call_by_call(body, mode, cache):
    conversation = formats.read(body)
    price = SONNET if cache == "anthropic" else read_prices().get("gpt-4o")
    runs = [replay(conversation, make(name), Meter("gpt-4o"), price, mode=mode, cache=cache)
            for name in ("none", "as-it-ran")]
    assert runs[0].calls == runs[1].calls
    assert runs[1].tokens_lost == 0 and runs[1].final.items == runs[0].final.items


def test_after_claude_codes_compaction_each_request_is_its_summary_and_what_followed():
    conversation = _read(COMPACTED)
    (record,) = conversation.compactions
    meter = Meter(conversation.model)
    runs = {mode: replay(conversation, make("as-it-ran"), meter, SONNET, mode=mode) for mode in ("stored", "per-call")}
    none = replay(conversation, make("none"), meter, SONNET)
    stored = runs["stored"]
    assert [c.tokens_with for c in stored.calls] == [c.tokens_with for c in runs["per-call"].calls], "one agent"
    after = next(n for n, call in enumerate(stored.calls) if call.position > record.position)
    assert [c.tokens_with for c in stored.calls[:after]] == [c.tokens_with for c in none.calls[:after]]
    first = stored.calls[after]
    sent = conversation.with_items(conversation.items[record.position:first.position])
    assert first.tokens_with == meter.count(sent).total  # the summary and what followed, nothing before
    summary = meter.items((conversation.items[record.position],))[0]
    assert summary <= first.tokens_with < summary + 200 < none.calls[after].tokens_with // 20
    assert first.fired == "agent compaction" and sum(1 for c in stored.calls if c.fired) == 1
    # the agent's summarization call, billed once: what it had before compacting in, the summary out
    assert first.summarization_output_tokens == summary and first.summarization_cost > 0
    read = first.summarization_input_tokens
    assert abs(read - none.calls[after - 1].tokens_with) < 0.05 * read
    assert sum(c.summarization_cost for c in stored.calls) == first.summarization_cost
    # lost: the items it dropped, as that call's whole request counts them
    assert stored.tokens_lost == sum(meter.items(conversation.items[:first.position])[:record.position])


def test_the_run_chart_marks_the_first_call_after_the_agent_compacted():
    conversation = _read(COMPACTED)
    run = replay(conversation, make("none"), Meter(conversation.model), SONNET)
    (mark,) = compaction_marks(run, conversation)
    position = conversation.compactions[0].position
    assert run.calls[mark["call"]].position > position >= run.calls[mark["call"] - 1].position
    assert (mark["where"], mark["tokens_before"]) == ("line 158", 155_979)
    assert compaction_marks(run, _read(NEVER_COMPACTED)) == []


# --- compare, the command line and evaluate -------------------------------------------------------

def test_compare_has_the_row_only_where_the_log_shows_a_compaction():
    done = cli("compare", str(shared(COMPACTED)), "--strategy", "none", "--strategy", "as-it-ran", "--json")
    assert done.returncode == 0, done.stderr
    rows = {row["strategy"]: row for row in json.loads(done.stdout)}
    assert rows["as-it-ran"]["cost"] < rows["none"]["cost"] and rows["as-it-ran"]["summarization_cost"] > 0
    assert rows["as-it-ran"]["fired"] == 1 and "compact.rs" in rows["as-it-ran"]["source"]
    table = cli("compare", str(shared(COMPACTED)), "--strategy", "as-it-ran")
    assert "as-it-ran" in table.stdout
    quiet = cli("compare", str(shared(NEVER_COMPACTED)), "--strategy", "none", "--strategy", "as-it-ran", "--json")
    assert [row["strategy"] for row in json.loads(quiet.stdout)] == ["none"]
    assert "as-it-ran left out: the log records no compaction" in quiet.stderr


def test_evaluate_has_the_row_for_the_runs_whose_agent_compacted():
    setup = Setup(policies=("none", "as-it-ran"))
    compacted = evaluate_run(_read(COMPACTED), setup, "624a4a58")
    assert [result.row.policy for result in compacted.policies] == ["none", "as-it-ran"]
    rows = compare(_read(COMPACTED), [make("as-it-ran")], Meter("claude-sonnet-4-5"), SONNET)
    assert compacted.policies[1].row == rows[0], "exactly compare's row"
    assert [result.row.policy for result in evaluate_run(_read(NEVER_COMPACTED), setup, "196820da").policies] == [
        "none"]
