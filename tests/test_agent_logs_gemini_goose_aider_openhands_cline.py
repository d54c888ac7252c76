"""The Gemini CLI, Goose, Aider, OpenHands and Cline readers, and log folders and zips: each on real files
from the agent's users' public repositories where one exists (tests/data/README.md names source, commit
and licence), and on hand-made files built from the agent's own source where none does (said so there
too).

Every reader is held to the same four things: each tool call in the log is read once (and its
result pairs with it), the log's errors are recognised, the request written out is one an API
takes, and the format is detected without being named (``count --json`` names the agent)."""

from __future__ import annotations

import contextlib
import json
from collections import Counter
from itertools import pairwise
from pathlib import Path

import pytest

from playground import formats
from playground.conversation import Conversation, ToolCall, ToolResult, pairs, turn_starts
from playground.errors import InputError
from playground.export import exports
from playground.formats import aider
from playground.formats._reader import text_of
from playground.meter.tokens import Meter
from playground.policies.as_it_ran import AsItRanPolicy
from playground.present.report import count_to_json
from playground.rules.errorpatterns import error_detail

DATA = Path(__file__).resolve().parent / "data"


def calls(conversation: Conversation) -> list[ToolCall]:
    return [item for item in conversation.items if isinstance(item, ToolCall)]


def results(conversation: Conversation) -> list[ToolResult]:
    return [item for item in conversation.items if isinstance(item, ToolResult)]


def errors(conversation: Conversation) -> int:
    """Results the compactor would treat as errors (a flag, or a shipped error pattern)."""
    return sum(error_detail(result) is not None for result in results(conversation))


def assert_valid_chat_request(conversation: Conversation) -> dict:
    """The Chat request the conversation amounts to: every assistant tool call is answered by tool
    messages right after it, in order (but a log may end on a call: the agent's last, "finish")."""
    body, _ = exports.request_body(conversation, "chat")
    messages = body["messages"]
    assert body["model"] and messages
    for position, message in enumerate(messages):
        ids = [call["id"] for call in message.get("tool_calls") or []]
        answers = [m.get("tool_call_id") for m in messages[position + 1:position + 1 + len(ids)]]
        assert answers == ids or position == len(messages) - 1, f"messages[{position}]: {ids} answered by {answers}"
        assert all(isinstance(json.loads(c["function"]["arguments"]), dict) for c in message.get("tool_calls") or [])
    return body


def assert_valid_anthropic_request(conversation: Conversation) -> dict:
    body, _ = exports.request_body(conversation, "anthropic")
    roles = [message["role"] for message in body["messages"]]
    assert roles[0] == "user" and all(a != b for a, b in pairwise(roles))
    for before, message in pairwise(body["messages"]):
        uses = {b["id"] for b in before["content"] if isinstance(b, dict) and b.get("type") == "tool_use"}
        answered = {b["tool_use_id"] for b in message["content"]
                    if isinstance(b, dict) and b.get("type") == "tool_result"}
        assert uses <= answered, "each tool_use is answered in the next message"
    return body


def assert_count_names(conversation: Conversation, source: str) -> None:
    data = count_to_json(Meter(conversation.model).count(conversation), conversation)
    assert data["format"] == source and data["total"] > 0


def assert_detected_only_as(data, name: str) -> None:
    assert formats.detect(data) == name
    rivals = {other: reader.looks_like(data) for other, reader in formats.READERS.items() if other != name}
    assert max(rivals.values()) < 6, rivals


# Codex, older rollout form ------------------------------------------------------------------------

def test_one_openhands_event_is_not_an_older_codex_rollout():
    """An OpenHands V1 event file (``{id, timestamp, source, kind, …}``) met the older rollout's head
    test (id and timestamp, no type) and read as a Codex log of 0 items, with no error."""
    event = {"id": "fa7668e4-a43d-4fa4-b75c-ffd642afb5b5", "timestamp": "2026-02-05T11:24:47.123456",
             "source": "agent", "kind": "ActionEvent", "thought": [], "action": {"kind": "FinishAction"}}
    with pytest.raises(InputError, match=r"^unrecognised format"):
        formats.read(event)
    with pytest.raises(InputError, match=r"^unrecognised format"):
        formats.read([{"id": "x", "timestamp": "2026-02-05T11:24:47"}])  # a head and nothing after it


def test_an_older_codex_rollout_is_read_as_responses():
    """It failed with "input[0]: missing 'role'" (read as a bare Responses input list)."""
    raw = formats.parse_text((DATA / "codex-rollout-old.jsonl").read_bytes())
    assert_detected_only_as(raw, "codex")
    conversation = formats.read(raw)
    # it names no model: Codex's default on the day it started (2025-05-07: o4-mini), said in a note
    assert (conversation.format, conversation.source, conversation.model) == ("responses", "codex", "o4-mini")
    bare = [line for line in raw[1:] if line.get("type") in ("function_call", "local_shell_call")]
    assert [call.call_id for call in calls(conversation)] == [line["call_id"] for line in bare]
    assert len(pairs(conversation.items)) == len(bare)
    assert conversation.instructions == raw[0]["instructions"]
    notes = " ".join(conversation.notes)
    assert "state 3" in notes and "older rollout form" in notes and "success: false" in notes
    wire = formats.write(conversation)["input"]
    assert all("id" not in item for item in wire), "ids, as the current form, are not kept"
    assert errors(conversation) >= 1  # the failed pytest run
    assert_count_names(conversation, "codex")


def test_an_older_codex_rollout_with_reasoning_does_not_say_it_has_none():
    """Later rollouts of the older form kept reasoning items (encrypted): the note must not deny them."""
    lines = [{"id": "c27a914d", "timestamp": "2025-08-20T13:20:47.060Z", "instructions": None},
             {"record_type": "state"},
             {"type": "message", "id": None, "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
             {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "opaque"},
             {"type": "message", "id": "m", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]}]
    notes = " ".join(formats.read(lines).notes)
    assert "records no model." in notes and "no reasoning items" not in notes
    assert "counted and priced as gpt-5, Codex's default model when the session started (2025-08-20" in notes
    assert "records no model and no reasoning items" in " ".join(formats.read(lines[:3] + lines[4:]).notes)


def test_codex_ghost_snapshots_are_skipped_not_sent():
    """Codex records a ``ghost_snapshot`` (its /undo git snapshot) as a response item in both forms
    and never sends it (``is_api_message``); the Responses API would refuse it."""
    ghost = {"type": "ghost_snapshot", "ghost_commit": {"id": "ghost-1", "parent": None}}
    user = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "q"}]}
    older = [{"id": "s", "timestamp": "2025-08-26T00:00:00Z", "instructions": None}, {"record_type": "state"},
             ghost, user]
    current = [{"timestamp": "t", "type": "session_meta", "payload": {"id": "s"}},
               {"timestamp": "t", "type": "response_item", "payload": ghost},
               {"timestamp": "t", "type": "response_item", "payload": user}]
    for lines in (older, current):
        conversation = formats.read(lines)
        assert [item["type"] for item in formats.write(conversation)["input"]] == ["message"]
        assert "ghost_snapshot 1" in conversation.notes[0]


# Gemini CLI ----------------------------------------------------------------------------------------

GEMINI = ["gemini-cli-aim-control_pro_run4_abandoned.json", "gemini-cli-yoavf-pomodoro-timer.json"]


def _gemini_calls(record: dict) -> list[dict]:
    return [call for message in record["messages"] for call in message.get("toolCalls") or []]


@pytest.mark.parametrize("name", GEMINI)
def test_a_gemini_cli_session_reads_every_tool_call_once_with_its_status(name):
    raw = json.loads((DATA / name).read_text())
    assert_detected_only_as(raw, "gemini-cli")
    conversation = formats.read(raw)
    assert (conversation.format, conversation.source) == ("native", "gemini-cli")
    assert conversation.model == Counter(m["model"] for m in raw["messages"] if "model" in m).most_common(1)[0][0]
    logged = _gemini_calls(raw)
    assert [(c.call_id, c.name) for c in calls(conversation)] == [(c["id"], c["name"]) for c in logged]
    assert len(pairs(conversation.items)) == len(logged)
    failed = sum(call["status"] != "success" for call in logged)
    assert sum(result.is_error for result in results(conversation)) == failed
    assert_valid_chat_request(conversation)
    assert_count_names(conversation, "gemini-cli")
    billed = [m["tokens"]["input"] for m in raw["messages"] if (m.get("tokens") or {}).get("input")
              and (text_of(m.get("content")) or m.get("toolCalls"))]
    # each reply's bill sits at the call its reply starts, in order
    assert [tokens for _, tokens in conversation.billed] == billed
    assert {position for position, _ in conversation.billed} <= set(turn_starts(conversation.items))


def test_a_gemini_error_result_is_sent_as_its_error_text():
    conversation = formats.loads((DATA / "gemini-cli-yoavf-pomodoro-timer.json").read_bytes())
    failed = next(result for result in results(conversation) if result.is_error)
    assert failed.name == "replace" and failed.content.startswith("A secondary check by an LLM")


def test_a_gemini_jsonl_session_keeps_the_last_write_of_each_message_and_honours_rewind():
    """The hand-made .jsonl holds the real .json's messages written twice (before and after their
    tool ran), a prompt rewound away, and a ``$set``: it reads as the .json does."""
    text = (DATA / "gemini-cli-session.jsonl").read_bytes()
    lines = formats.parse_text(text)
    assert len({line["id"] for line in lines if "id" in line}) < sum("id" in line for line in lines)
    assert_detected_only_as(lines, "gemini-cli")
    conversation = formats.loads(text)
    legacy = formats.loads((DATA / "gemini-cli-aim-control_pro_run4_abandoned.json").read_bytes())
    assert conversation.items == legacy.items and conversation.model == legacy.model
    assert "list_directory" not in {call.name for call in calls(conversation)}, "the rewound turn is dropped"


def test_gemini_jsonl_set_messages_replaces_them_and_notices_are_notes():
    lines = [{"sessionId": "s1", "projectHash": "p", "startTime": "t", "messages": []},
             {"id": "a", "type": "user", "content": "first try"},
             {"$set": {"messages": [{"id": "b", "type": "user", "content": [{"text": "hello"}]}]}},
             {"id": "c", "type": "error", "content": "[API Error: quota exceeded]"},
             {"id": "d", "type": "gemini", "content": "Hi.", "model": "gemini-2.5-flash",
              "tokens": {"input": 120, "output": 3, "cached": 0, "total": 123}}]
    conversation = formats.read(lines)
    assert [item.content for item in conversation.items] == ["hello", "Hi."]
    notes = " ".join(conversation.notes)
    assert "error 1" in notes and "quota exceeded" in notes
    assert conversation.billed == ((1, 120),), "the reply's bill at the call it answers: the request of item 0"


# Goose ------------------------------------------------------------------------------------------------

GOOSE = ["goose-convergeai-native.json", "goose-convergeai-convergeai.json"]
# block/goose @ 01643006, crates/goose/src/session/session_manager.rs, SessionStorage::create (schema v5)
GOOSE_SCHEMA = """
CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP);
CREATE TABLE sessions (
    id TEXT PRIMARY KEY, name TEXT NOT NULL DEFAULT '', description TEXT NOT NULL DEFAULT '',
    user_set_name BOOLEAN DEFAULT FALSE, session_type TEXT NOT NULL DEFAULT 'user', working_dir TEXT NOT NULL,
    created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    extension_data TEXT DEFAULT '{}', total_tokens INTEGER, input_tokens INTEGER, output_tokens INTEGER,
    accumulated_total_tokens INTEGER, accumulated_input_tokens INTEGER, accumulated_output_tokens INTEGER,
    schedule_id TEXT, recipe_json TEXT, user_recipe_values_json TEXT);
CREATE TABLE messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES sessions(id), role TEXT NOT NULL,
    content_json TEXT NOT NULL, created_timestamp INTEGER NOT NULL, timestamp TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    tokens INTEGER, metadata_json TEXT);
"""
_GOOSE_COLUMNS = ("id", "name", "working_dir", "created_at", "updated_at", "total_tokens", "input_tokens",
                  "output_tokens", "accumulated_total_tokens", "accumulated_input_tokens", "accumulated_output_tokens")


def goose_database(path: Path, exports: list[dict]) -> Path:
    """A sessions.db holding the exported sessions, written as Goose's SessionStorage writes them."""
    import sqlite3

    with sqlite3.connect(path) as db:
        db.executescript(GOOSE_SCHEMA)
        for session in exports:
            db.execute(f"INSERT INTO sessions ({', '.join(_GOOSE_COLUMNS)}, extension_data) VALUES "
                       f"({', '.join('?' * len(_GOOSE_COLUMNS))}, ?)",
                       [session[c] for c in _GOOSE_COLUMNS] + [json.dumps(session["extension_data"])])
            for message in session["conversation"]:
                db.execute("INSERT INTO messages (session_id, role, content_json, created_timestamp, metadata_json) "
                           "VALUES (?, ?, ?, ?, ?)", (session["id"], message["role"], json.dumps(message["content"]),
                                                      message["created"], json.dumps(message["metadata"])))
    db.close()
    return path


def _goose_requests(export: dict) -> list[dict]:
    return [block for message in export["conversation"] for block in message["content"]
            if block["type"] == "toolRequest"]


@pytest.mark.parametrize("name", GOOSE)
def test_a_goose_export_reads_every_tool_call_once(name):
    raw = json.loads((DATA / name).read_text())
    assert_detected_only_as(raw, "goose")
    conversation = formats.read(raw)
    assert (conversation.format, conversation.source, conversation.model) == ("native", "goose", "claude-sonnet-4-6")
    requests = _goose_requests(raw)
    assert sorted(c.call_id for c in calls(conversation)) == sorted(r["id"] for r in requests)
    assert [c.name for c in calls(conversation)] == [r["toolCall"]["value"]["name"] for r in requests]
    assert len(pairs(conversation.items)) == len(requests), "every response pairs, even one logged before its call"
    assert_valid_chat_request(conversation)
    assert_count_names(conversation, "goose")
    assert any(f"{raw['accumulated_input_tokens']:,} over every call" in note for note in conversation.notes)


def test_goose_errors_are_recognised_and_invisible_messages_left_out():
    raw = json.loads((DATA / GOOSE[0]).read_text())
    responses = [b for m in raw["conversation"] for b in m["content"] if b["type"] == "toolResponse"]
    responses[0]["toolResult"]["value"]["isError"] = True
    responses[1]["toolResult"] = {"status": "error", "error": "-32603: shell timed out"}
    raw["conversation"][0]["metadata"]["agentVisible"] = False
    conversation = formats.read(raw)
    failed = [result for result in results(conversation) if result.is_error]
    assert [r.call_id for r in failed] == [responses[0]["id"], responses[1]["id"]]
    assert failed[1].content == "-32603: shell timed out"
    assert isinstance(conversation.items[0], ToolCall), "the first user message was never sent"
    assert any("agentVisible: false" in note for note in conversation.notes)


def test_a_goose_sessions_db_reads_as_its_latest_session_from_the_cli_and_the_page(tmp_path):
    exported = [json.loads((DATA / name).read_text()) for name in GOOSE]
    database = goose_database(tmp_path / "sessions.db", exported)
    latest = max(exported, key=lambda session: session["updated_at"])
    from_path = formats.read_path(database)
    from_upload = formats.loads(database.read_bytes())
    assert from_path.items == from_upload.items == formats.read(latest).items
    assert from_path.source == "goose" and from_path.model is None  # the database keeps no model
    notes = " ".join(from_path.notes)
    assert f"session {latest['id']}; 1 other session" in notes and f"{latest['accumulated_input_tokens']:,}" in notes


def test_an_older_goose_jsonl_session_reads_like_its_export():
    raw = json.loads((DATA / GOOSE[0]).read_text())
    # block/goose crates/goose/src/session/legacy.rs: line 1 is SessionMetadata, which has no id
    head = {key: raw[key] for key in ("working_dir", "schedule_id", "message_count", "total_tokens", "input_tokens",
                                      "output_tokens", "accumulated_total_tokens", "accumulated_input_tokens",
                                      "accumulated_output_tokens")} | {"description": raw["name"]}
    text = "\n".join(json.dumps(line) for line in [head, *raw["conversation"]])
    legacy = formats.loads(text)
    assert legacy.source == "goose" and legacy.items == formats.read(raw).items
    assert any(f"{raw['accumulated_input_tokens']:,} over every call" in note for note in legacy.notes)


# Aider --------------------------------------------------------------------------------------------------

AIDER = ["aider-afi-core.aider.chat.history.md", "aider-monochromatic.aider.chat.history.md"]


def _aider_inputs(text: str) -> list[str]:
    """Each run of '#### ' lines is one input (aider/io.py user_input), its lines joined; one that
    starts with / or ! is a command Aider runs (commands.py is_command), sent only as /ask's text."""
    inputs, run = [], []
    for line in [*text.splitlines(), ""]:
        if line.startswith("####"):
            run.append(line[5:].removesuffix("  "))
        elif run:
            inputs.append("\n".join(run).strip())
            run = []
    sent = [text.split(maxsplit=1)[1] if text.startswith("/ask ") else text for text in inputs]
    # an answer Aider gave itself for a group of questions (io.confirm_ask: "(Y)es/(N)o/… [Yes]: all")
    return [text for text in sent if text.strip() and not text.startswith(("/", "!")) and "(Y)es/(N)o" not in text]


def test_an_aider_command_is_not_a_message_but_what_ask_sends_is():
    """An input that starts with / or ! is run by Aider (/add, /copy-context, an invalid /view,
    !ls): on a real history, 8 such inputs were read as the person's messages. /ask, /code,
    /architect and /context (or a start only one has: /arch) send the rest as the message; a
    line of a longer input that starts with / (a pasted ``/**`` comment) is text."""
    history = "\n".join([
        "# aider chat started at 2025-10-20 21:49:17", "", "#### /add src/app.py  ", "> Added src/app.py to the chat",
        "", "#### !ls  ", "> app.py", "", "#### /view app.py  ", "> Invalid command: /view", "",
        "#### /ask what does it do?  ", "", "It serves the page.", "", "> Tokens: 1.2k sent, 40 received.", "",
        "#### /arch split it  ", "", "Split into two modules.", "", "#### Here is the header:  ", "#### /** app */  ",
        "", "Noted.", ""])
    conversation = formats.loads(history.encode())
    assert [m.content for m in conversation.items if m.role == "user"] == [
        "what does it do?", "split it", "Here is the header:\n/** app */"]
    assert any("3 inputs that Aider ran itself (! 1, /add 1, /view 1)" in note for note in conversation.notes)
    assert dict(conversation.billed) == {1: 1200}  # the reply to /ask, the second item


@pytest.mark.parametrize("name", AIDER)
def test_an_aider_history_reads_as_text_turns_with_its_console_in_the_notes(name):
    text = (DATA / name).read_text()
    data = formats.parse_input(text.encode())
    assert_detected_only_as(data, "aider")
    conversation = formats.read_path(DATA / name)
    assert (conversation.format, conversation.source) == ("chat", "aider")
    users = [m.content for m in conversation.items if m.role == "user"]
    # besides the inputs, the edit errors Aider sent back itself (its reflections), each written on the
    # console right after the URL of its edit-errors page
    reflected = [content for content in users if f"{aider.EDIT_ERRORS}  \n> {content.splitlines()[0]}" in text]
    assert [content for content in users if content not in reflected] == _aider_inputs(text)
    assert any(f"{len(reflected)} edit error" in note for note in conversation.notes) or not reflected
    assert not calls(conversation) and {m.role for m in conversation.items} == {"user", "assistant"}
    assert not any(line.startswith("> Tokens:") for m in conversation.items for line in m.content.splitlines())
    notes = " ".join(conversation.notes)
    assert f"{text.count(chr(10) + '# aider chat started at'):,} sessions" in notes
    assert "Errors Aider reported on the console" in notes
    assert_valid_chat_request(conversation)
    assert_count_names(conversation, "aider")


def test_aider_names_a_file_added_to_the_chat_and_an_answer_it_gave_itself_as_no_error_and_no_input():
    """A real history (Abhisekpm/JobSpeak) listed 27 '> Added …/classNameTDZError.js to the chat'
    lines as console errors, and one (AlexShchuka/mozgoslav) read Aider's own answers to a group of
    questions ('#### Add file to the chat? (Y)es/(N)o/… [Yes]: all', io.confirm_ask) as inputs."""
    text = ("# aider chat started at 2026-01-02 10:00:00\n\n#### fix the parser  \n\n"
            "#### Add file to the chat? (Y)es/(N)o/(A)ll/(S)kip all/(D)on't ask again [Yes]: all  \n"
            "> Added src/errors/TDZError.js to the chat  \n> Added lib/error-codes.d.ts to the chat  \n\n"
            "Fixed.\n\n> litellm.APIError: the server is down  \n")
    conversation = formats.read(formats.parse_input(text.encode()), "aider")
    assert [(m.role, m.content) for m in conversation.items] == [("user", "fix the parser"), ("assistant", "Fixed.")]
    assert "Errors Aider reported on the console: 1 line, e.g. litellm.APIError" in " ".join(conversation.notes)


def _format_tokens(count: int) -> str:
    """Aider's ``format_tokens`` (aider/utils.py @ 5dc9490b), to find each bill's line in the file."""
    return f"{count}" if count < 1000 else f"{count / 1000:.1f}k" if count < 10000 else f"{round(count / 1000)}k"


@pytest.mark.parametrize(("name", "placed", "first"), [
    ("aider-afi-core.aider.chat.history.md", 29, [(1, 3200), (3, 3200), (5, 3200), (8, 3200), (10, 3200)]),
    ("aider-monochromatic.aider.chat.history.md", 23, [(9, 9700), (11, 9800), (13, 6300), (15, 6400), (17, 12_000)])])
def test_each_aider_token_line_bills_the_reply_it_follows(name, placed, first):
    """Every 'Tokens: … sent' line that ends a reply opening a call is that call's bill, its value as
    Aider rounded it: in the file, the reply's text is followed by exactly that line. The others
    (a reply after another with no input between — architect then editor, a reflected message —
    or a line after no reply) are counted, not placed."""
    text = (DATA / name).read_text()
    conversation = formats.read_path(DATA / name)
    assert conversation.billed[:5] == tuple(first) and len(conversation.billed) == placed
    assert {position for position, _ in conversation.billed} <= set(turn_starts(conversation.items))
    for position, tokens in conversation.billed:
        reply = conversation.items[position]
        assert reply.role == "assistant"
        last = reply.content.splitlines()[-1]  # (Aider's line-end spaces are not the reply's)
        assert f"\n{last}\n\n> Tokens: {_format_tokens(tokens)} sent" in text, position
    lines = text.count("\n> Tokens: ")
    assert conversation.billed_digits == 2
    assert any(f"billed for {placed} calls ('Tokens: … sent', rounded by Aider to 2 significant digits" in note
               and f"{lines - placed} other replies not at the start of a call" in note for note in conversation.notes)


def test_aider_token_lines_of_every_form_are_read_and_one_after_no_reply_is_not_placed():
    """The forms of base_coder.py's report: plain counts below 1,000, ``10.0k`` (9,950 to 9,999
    rounds up), cache writes and hits (then the cost on a line of its own)."""
    text = ("# aider chat started at 2025-07-15 11:38:37\n\n> Main model: claude-sonnet-4 with diff edit format  \n\n"
            "#### one  \n\nFirst.\n\n> Tokens: 870 sent, 20 received.  \n\n"
            "#### two  \n\nSecond.\n\n> Tokens: 10.0k sent, 1.2k cache write, 3.4k cache hit, 87 received.  \n"
            "> Cost: $0.02 message, $0.03 session.  \n\n"
            "#### three  \n\n> Tokens: 12k sent, 12k cache hit, 5 received. Cost: $0.01 message, $0.04 session.  \n")
    conversation = formats.loads(text)
    assert conversation.billed == ((1, 870), (3, 10_000))
    notes = " ".join(conversation.notes)
    assert "billed for 2 calls" in notes and "1 other reply not at the start of a call" in notes
    assert "cache tokens on some calls (hit 2, write 1)" in notes
    assert conversation.billed_digits == 2


def test_an_older_aider_history_bills_exactly_and_is_found_behind_a_header():
    """Before format_tokens (Aug 2024) Aider wrote every digit, and ``cached`` for cache hits; its
    own tests/fixtures/chat-history.md opens with an editor mode line before the first session."""
    text = ("-*- mode: fundamental -*-\n>  \n> isort....Passed  \n\n# aider chat started at 2024-08-05 19:33:02\n\n"
            "#### fix it  \n\nFixed.\n\n> Tokens: 5,244 sent, 1,278 cached, 604 received. Cost: $0.02 request, "
            "$0.02 session.  \n")
    data = formats.parse_input(text.encode())
    assert_detected_only_as(data, "aider")
    conversation = formats.read(data)
    assert conversation.billed == ((1, 5244),) and conversation.billed_digits is None
    assert any("'Tokens: … sent', exact; beside it, cache tokens on some calls (hit 1)" in note
               for note in conversation.notes)


def test_aider_quote_lines_inside_a_code_block_stay_in_the_reply():
    text = ("# aider chat started at 2025-07-15 11:38:37\n\n> Main model: gpt-4o with diff edit format  \n\n"
            "#### explain the quote  \n\nIn markdown:\n\n```md\n> quoted\n#### heading\n```\n\nDone.\n\n"
            "> Tokens: 1.5k sent, 20 received.  \n")
    conversation = formats.loads(text)
    assert [m.role for m in conversation.items] == ["user", "assistant"]
    assert conversation.items[1].content == "In markdown:\n\n```md\n> quoted\n#### heading\n```\n\nDone."
    assert conversation.model == "gpt-4o"



class _AiderHistory:
    """A history written as Aider's ``InputOutput`` writes it (aider/io.py @ 5dc9490b): every write goes
    through ``append_chat_history``, which quotes only the first line of a console write and ends a
    line-broken write with two spaces."""

    def __init__(self) -> None:
        self.text = ""

    def append(self, text: str, linebreak: bool = False, blockquote: bool = False) -> None:
        if blockquote:
            text = "> " + text.strip()
        if linebreak:
            text = text.rstrip() + "  \n"
        self.text += text if text.endswith("\n") else text + "\n"

    def started(self, when: str) -> None:
        self.append(f"\n# aider chat started at {when}\n\n")

    def user_input(self, inp: str) -> None:
        self.append("\n#### " + "  \n#### ".join(inp.splitlines()), linebreak=True)

    def ai_output(self, content: str) -> None:
        self.append("\n" + content.strip() + "\n\n")

    def tool_output(self, *messages: str) -> None:
        if messages:
            self.append(" ".join(messages).strip(), linebreak=True, blockquote=True)

    def tool_warning(self, message: str) -> None:  # _tool_message: a multi-line message line by line
        for line in message.splitlines() if "\n" in message else [message]:
            self.append(line, linebreak=True, blockquote=True)


def _cut_history() -> str:
    """Two sessions: a reply cut by ^C inside a SEARCH block (base_coder.send: keyboard_interrupt
    writes its warning, then the partial reply), inputs after it, a shell command Aider suggested
    (handle_shell_commands: its lines as one console write), then a new session."""
    history = _AiderHistory()
    history.started("2025-09-01 10:00:00")
    history.tool_output("Main model: claude-sonnet-4 with diff edit format")
    history.user_input("make the greeting configurable")
    history.tool_warning("\n\n^C again to exit")
    history.ai_output("I'll add a parameter.\n\ngreet.py\n```python\n<<<<<<< SEARCH\ndef greet():")
    history.user_input("keep the default greeting")
    history.ai_output("Then the default stays `Hello`.\n\n```python\ndef greet(word='Hello'):\n    ...\n```")
    history.tool_output("Tokens: 2.1k sent, 40 received. Cost: $0.01 message, $0.01 session.")
    history.user_input("how do I set the owner for the deploy?")
    history.ai_output("Export it first:\n\n```bash\nexport OWNER=acme\nmake deploy\n```")
    history.tool_output("Tokens: 2.3k sent, 30 received. Cost: $0.01 message, $0.02 session.")
    history.tool_output("export OWNER=acme\nmake deploy     ")  # the subject, padded to its longest line
    history.tool_output("Run shell commands? (Y)es/(N)o/(D)on't ask again [Yes]: y")
    history.tool_output("Running export OWNER=acme")
    history.tool_output("Running make deploy")
    history.user_input("thanks")
    history.ai_output("You're welcome.")
    history.tool_output("Tokens: 2.4k sent, 5 received. Cost: $0.01 message, $0.03 session.")
    history.started("2025-09-02 09:00:00")
    history.tool_output("Main model: claude-sonnet-4 with diff edit format")
    history.user_input("add a test for greet")
    history.ai_output("Added `test_greet`.")
    history.tool_output("Tokens: 1.9k sent, 50 received. Cost: $0.01 message, $0.01 session.")
    history.user_input("run it")
    history.ai_output("It passes.")
    history.tool_output("Tokens: 2.0k sent, 10 received. Cost: $0.01 message, $0.02 session.")
    return history.text


def test_an_aider_reply_cut_by_ctrl_c_inside_a_fence_ends_at_the_next_input_and_session():
    """A reply cut by ^C leaves its code block open: on main, every line after it — three inputs and
    the whole second session — was one reply (1 session, 2 inputs, no bill after the cut). An input
    line or a session header always starts a new turn; Aider's two messages after a cut are sent
    after it; the shell command's second line is the console's, not a reply's."""
    conversation = formats.loads(_cut_history())
    turns = [(item.role, item.content) for item in conversation.items]
    assert [content for role, content in turns if role == "user"] == [
        "make the greeting configurable", "^C KeyboardInterrupt", "keep the default greeting",
        "how do I set the owner for the deploy?", "thanks", "add a test for greet", "run it"]
    assert turns[1] == ("assistant", "I'll add a parameter.\n\ngreet.py\n```python\n<<<<<<< SEARCH\ndef greet():")
    assert turns[3] == ("assistant", "I see that you interrupted my previous reply.")
    assert not any("make deploy" in content for role, content in turns[8:] if role == "assistant")
    assert len(conversation.billed) == 5  # every 'Tokens:' line, each at its reply
    notes = " ".join(conversation.notes)
    assert "2 sessions, 6 inputs and 6 replies" in notes and "1 reply cut by ^C" in notes
    # the second session starts afresh: as it ran, its calls send nothing of the first
    [restart] = conversation.compactions
    assert (restart.trigger, restart.kept, restart.summary) == ("new session", (), False)
    assert conversation.items[restart.position].content == "add a test for greet"
    last = AsItRanPolicy().apply(conversation.with_items(conversation.items[:-1]), Meter("gpt-4o")).conversation
    assert [item.content for item in last.items] == ["add a test for greet", "Added `test_greet`.", "run it"]


def test_an_aider_clear_resets_the_context_and_restored_history_does_not():
    """/clear and /reset empty Aider's chat (commands.py _clear_chat_history); a session started with
    --restore-chat-history ('Restored previous conversation history.') carries the earlier ones."""
    history = _AiderHistory()
    history.started("2025-09-01 10:00:00")
    for text in ("one", "/clear", "two", "/reset", "three"):
        history.user_input(text)
        if text == "/clear":
            history.tool_output("All chat history cleared.")
        elif text != "/reset":  # (Aider 0.47 wrote nothing after /clear or /reset)
            history.ai_output(f"Reply to {text}.")
    history.started("2025-09-02 09:00:00")
    history.tool_output("Restored previous conversation history.")
    history.user_input("four")
    history.ai_output("Reply to four.")
    conversation = formats.loads(history.text)
    assert [(record.position, record.trigger) for record in conversation.compactions] == [(2, "/clear"), (4, "/reset")]


def test_aider_console_writes_of_many_lines_are_the_console_and_an_edit_error_is_the_next_message():
    """On a real history (AFI-Protocol/afi-core), an edit error Aider wrote after the edit-errors URL
    (its first line quoted, the rest not, blank lines inside) was read as a reply, and a suggested
    shell command's second line ('git commit -m …') as another. The error is the message Aider sent
    back (apply_updates: reflected_message = str(err)), so the fixed reply after it is a call of its own."""
    text = (DATA / "aider-afi-core.aider.chat.history.md").read_text()
    conversation = formats.loads(text)
    replies = [item.content for item in conversation.items if item.role == "assistant"]
    assert not any(reply.startswith("git commit -m") or "SearchReplaceNoExactMatch" in reply for reply in replies)
    [reflection] = [p for p, item in enumerate(conversation.items) if "SearchReplaceNoExactMatch" in item.content]
    error = conversation.items[reflection]
    assert error.role == "user" and error.content.startswith("# 1 SEARCH/REPLACE block failed to match!\n\n## ")
    assert error.content.endswith("Just reply with fixed versions of the block above that failed to match.")
    assert dict(conversation.billed)[reflection + 1] == 12_000  # the fixed block's own 'Tokens: 12k sent'


# OpenHands ------------------------------------------------------------------------------------------

OPENHANDS_V0 = ["openhands-v0-basic.json", "openhands-v0-basic_gui_mode.json", "openhands-v0-wrong_initial_state.json"]
OPENHANDS_V1 = DATA / "openhands-v1-conversation"


def _v1_events() -> list[dict]:
    return [json.loads(path.read_text()) for path in sorted((OPENHANDS_V1 / "events").iterdir())]


def test_an_openhands_events_folder_reads_alone_and_base_state_names_the_model(tmp_path):
    """Real V1 runs (OpenHands/software-agent-sdk's .pr artifacts) record their model only in
    ``base_state.json`` (``agent.llm.model``) when no event carries metrics: they were priced as
    gpt-4o, about 16x gpt-4o-mini. And the ``events/`` folder given alone was refused."""
    import shutil

    folder = tmp_path / "conversation"
    shutil.copytree(OPENHANDS_V1, folder)
    whole = formats.read_path(folder)
    assert formats.read_path(folder / "events").items == whole.items
    events = [json.loads(path.read_text()) for path in sorted((folder / "events").glob("*.json"))]
    quiet = [{k: v for k, v in e.items() if k not in ("metrics", "stats")} for e in events
             if not (e.get("kind") == "ConversationStateUpdateEvent" and e.get("key") == "stats")]
    for path in (folder / "events").glob("*.json"):
        path.unlink()
    for number, event in enumerate(quiet):
        (folder / "events" / f"event-{number:05d}-{event.get('id', number)}.json").write_text(json.dumps(event))
    assert formats.read_path(folder).model is None
    (folder / "base_state.json").write_text(json.dumps({"agent": {"llm": {"model": "gpt-4o-mini"}}}))
    assert formats.read_path(folder).model == "gpt-4o-mini"


@pytest.mark.parametrize("name", OPENHANDS_V0)
def test_an_openhands_v0_trajectory_reads_every_tool_call_once(name):
    raw = json.loads((DATA / name).read_text())
    assert_detected_only_as(raw, "openhands")
    conversation = formats.read(raw)
    assert (conversation.format, conversation.source, conversation.model) == (
        "native", "openhands", "claude-3-5-sonnet-20241022")
    actions = [e for e in raw if "action" in e and e.get("tool_call_metadata")]
    assert [(c.call_id, c.name) for c in calls(conversation)] == [
        (e["tool_call_metadata"]["tool_call_id"], e["tool_call_metadata"]["function_name"]) for e in actions]
    observed = [e for e in raw if "observation" in e and e.get("tool_call_metadata")]
    assert len(pairs(conversation.items)) == len(observed)
    assert all(c.parsed_arguments() is not None for c in calls(conversation)), "arguments from the model response"
    assert_valid_chat_request(conversation)
    assert_count_names(conversation, "openhands")


def test_openhands_v0_errors_are_recognised():
    raw = json.loads((DATA / "openhands-v0-basic_gui_mode.json").read_text())
    run = next(e for e in raw if e.get("observation") == "run")
    run["extras"]["metadata"]["exit_code"] = 2
    conversation = formats.read(raw)
    assert [r.call_id for r in results(conversation) if r.is_error] == [run["tool_call_metadata"]["tool_call_id"]]


def test_an_openhands_v1_events_folder_reads_as_one_conversation_from_the_cli_and_a_zip(tmp_path):
    events = _v1_events()
    conversation = formats.read_path(OPENHANDS_V1)
    assert (conversation.format, conversation.source, conversation.model) == (
        "native", "openhands", "litellm_proxy/minimax-m2.7")
    actions = [e for e in events if e["kind"] == "ActionEvent"]
    assert [c.call_id for c in calls(conversation)] == [e["tool_call_id"] for e in actions]
    answered = [e for e in events if e["kind"] == "ObservationEvent" and e["tool_call_id"] in
                {a["tool_call_id"] for a in actions}]
    assert len(pairs(conversation.items)) == len(answered)
    assert sum(r.is_error for r in results(conversation)) == sum(e["observation"]["is_error"] for e in answered) == 1
    notes = " ".join(conversation.notes)
    assert "ConversationStateUpdateEvent 5" in notes and "1 observation" in notes, "the unanswered observation"
    assert "35,984 at most" in notes  # the billed prompt tokens of each call, from the stats updates
    assert formats.read(events).items == conversation.items, "the same events one a line (events.jsonl)"
    assert formats.loads(_zip(tmp_path, OPENHANDS_V1)).items == conversation.items
    assert_valid_chat_request(conversation)
    assert_count_names(conversation, "openhands")


def test_an_openhands_condensation_is_shown_where_it_happened():
    events = _v1_events()
    events.insert(5, {"id": "c1", "kind": "Condensation", "source": "environment", "forgotten_event_ids": ["a", "b"],
                      "summary": "The agent has read the PR.", "summary_offset": 1, "llm_response_id": "r"})
    conversation = formats.read(events)
    note = next(note for note in conversation.notes if "condensed its history" in note)
    assert "forgot 2 events" in note
    index = int(note.split("items[")[1].split("]")[0])
    assert conversation.items[index].content == "The agent has read the PR."


# Cline -------------------------------------------------------------------------------------------------

CLINE = DATA / "cline-task-handmade"


def _zip(tmp_path: Path, folder: Path) -> bytes:
    """The folder zipped as a person would: the folder itself at the top."""
    import shutil

    return Path(shutil.make_archive(str(tmp_path / folder.name), "zip", folder.parent, folder.name)).read_bytes()


def test_a_cline_task_folder_reads_as_anthropic_with_results_as_tool_results(tmp_path):
    history = json.loads((CLINE / "api_conversation_history.json").read_text())
    conversation = formats.read_path(CLINE)
    assert (conversation.format, conversation.source, conversation.model) == (
        "anthropic", "cline", "claude-sonnet-4-5-20250929")
    uses = [b for m in history for b in m["content"] if b["type"] == "tool_use"]
    assert [(c.call_id, c.name) for c in calls(conversation)] == [(b["id"], b["name"]) for b in uses]
    assert len(pairs(conversation.items)) == len(uses) - 1, "all but the closing attempt_completion"
    failed = [r for r in results(conversation) if r.is_error]
    assert [r.call_id for r in failed] == [uses[1]["id"], uses[2]["id"]], "a failed read and one not run"
    body = assert_valid_anthropic_request(conversation)
    assert all(set(m) == {"role", "content"} for m in body["messages"]), "no modelInfo or metrics"
    assert not any("reasoning_details" in b for m in body["messages"] for b in m["content"] if isinstance(b, dict))
    notes = " ".join(conversation.notes)
    assert "1 error: error: Error reading file" in notes and "billed for 5 calls (metrics.tokens" in notes
    spent = [m["metrics"]["tokens"] for m in history if "metrics" in m]
    assert [tokens for _, tokens in conversation.billed] == [t["prompt"] + t["cached"] for t in spent], \
        "each reply's metrics.tokens, prompt + cached, at its call"
    assert formats.loads(_zip(tmp_path, CLINE), refuse_surrogates=True).items == conversation.items
    assert_count_names(conversation, "cline")


def test_the_cline_history_alone_reads_too_and_says_what_is_missing():
    conversation = formats.loads((CLINE / "api_conversation_history.json").read_bytes())
    assert conversation.items == formats.read_path(CLINE).items
    assert any("No ui_messages.json" in note for note in conversation.notes)


def test_cline_xml_tool_calls_in_the_text_become_tool_uses():
    history = [{"role": "user", "content": [{"type": "text", "text": "<task>read a.py</task>"}]},
               {"role": "assistant", "content": [{"type": "text", "text": "Reading it.\n\n<read_file>\n<path>a.py"
                                                  "</path>\n</read_file>"}]},
               {"role": "user", "content": [{"type": "text", "text": "[read_file for 'a.py'] Result:\nprint(1)"}]},
               {"role": "assistant", "content": [{"type": "text", "text": "It prints 1."}]}]
    conversation = formats.read(history, "cline")
    call = calls(conversation)[0]
    assert (call.name, dict(call.parsed_arguments())) == ("read_file", {"path": "a.py"})
    assert results(conversation)[0].content == "print(1)"
    assert conversation.items[1].content[0].text == "Reading it."
    assert any("written as XML" in note for note in conversation.notes)
    assert_valid_anthropic_request(conversation)


def _cline_turn(*tools: str) -> dict:
    return {"role": "assistant", "content": [{"type": "tool_use", "id": f"toolu_{tool}", "name": tool, "input": {}}
                                             for tool in tools]}


def _cline_result(header: str) -> dict:
    return {"role": "user", "content": [{"type": "text", "text": f"[{header}] Result:\nSucceeded: 4"}]}


def test_a_cline_result_whose_header_names_the_only_pending_call_otherwise_answers_it():
    """Cline heads use_subagents' result ``[subagents] Result:`` (a real task history): one call
    pending, it is that call's result; with two pending, neither named, it stays text."""
    task = [{"role": "user", "content": [{"type": "text", "text": "<task>survey the repo</task>"}]},
            _cline_turn("use_subagents"), _cline_result("subagents"),
            _cline_turn("read_file", "list_files"), _cline_result("subagents")]
    conversation = formats.read(task, "cline")
    [answered] = results(conversation)
    assert (answered.call_id, answered.content) == ("toolu_use_subagents", "Succeeded: 4")
    notes = " ".join(conversation.notes)
    assert "1 tool result whose header names another tool ([subagents] → use_subagents 1) answers" in notes
    assert "1 tool result answering no call in the message before stays as text" in notes


def test_calls_cut_off_by_an_interrupted_task_are_answered_as_cline_answers_them_on_resuming():
    """A real task history (mike4567/MRA04242026, studied, not copied: no licence) has 7 calls
    followed by a ``[TASK RESUMPTION]`` message and no result: Cline answers them as it sends the
    request (``resumeTaskFromHistory``) and does not keep that answer, so the exported request held
    calls nothing answered, which Anthropic refuses. A call the person answered stays as it is."""
    resumed = {"role": "user", "content": [
        {"type": "text", "text": "[TASK RESUMPTION] This task was interrupted 3 days ago."},
        {"type": "text", "text": "<environment_details>…</environment_details>"}]}
    task = [{"role": "user", "content": [{"type": "text", "text": "<task>plan it</task>"}]},
            _cline_turn("ask_followup_question", "read_file"), resumed,
            _cline_turn("list_files"), _cline_result("list_files")]
    conversation = formats.read(task, "cline")
    assert [(r.call_id, r.content) for r in results(conversation)] == [
        ("toolu_ask_followup_question", "Task was interrupted before this tool call could be completed."),
        ("toolu_read_file", "Task was interrupted before this tool call could be completed."),
        ("toolu_list_files", "Succeeded: 4")]
    assert "2 tool calls cut off when the task was interrupted are answered as Cline answers them" in " ".join(
        conversation.notes)
    assert_valid_anthropic_request(conversation)
    sent = formats.write(conversation)["messages"][2]["content"]
    assert [b["type"] for b in sent] == ["tool_result", "tool_result", "text", "text"]


CLINE_SDK = DATA / "cline-sdk-session"
"""A real Cline SDK session (cline/cline's own, paths made ``/Users/example``) and the two compactions
Cline's code wrote of it (tests/data/README.md)."""


def _sdk_blocks(session: dict, kind: str) -> list[dict]:
    return [b for m in session["messages"] for b in m["content"] if b["type"] == kind]


def test_a_cline_sdk_session_reads_every_tool_call_once_with_its_system_prompt_and_billed_input(tmp_path):
    session = json.loads((CLINE_SDK / "session.messages.json").read_text())
    assert_detected_only_as(session, "cline")
    conversation = formats.read_path(CLINE_SDK)
    assert (conversation.format, conversation.source, conversation.model) == (
        "anthropic", "cline", "claude-opus-4.8-fast")
    uses = _sdk_blocks(session, "tool_use")
    assert [(c.call_id, c.name) for c in calls(conversation)] == [(b["id"], b["name"]) for b in uses]
    assert [r.call_id for r in results(conversation)] == [b["tool_use_id"] for b in _sdk_blocks(session, "tool_result")]
    assert len(pairs(conversation.items)) == len(uses) == 11
    assert conversation.instructions == session["system_prompt"]
    attached = _sdk_blocks(session, "file")[0]
    assert any(part.text.startswith(f'<file_content path="{attached["path"]}">\n"use client"')
               for item in conversation.items if not isinstance(item, ToolCall | ToolResult)
               for part in item.content), "the attached file is sent as its text"
    body = assert_valid_anthropic_request(conversation)
    assert all(set(m) == {"role", "content"} for m in body["messages"]), "no id, ts, modelInfo or metrics"
    assert not any("name" in b for m in body["messages"] for b in m["content"] if b.get("type") == "tool_result")
    notes = " ".join(conversation.notes)
    assert "billed for 16 calls" in notes
    assert conversation.billed[0][1] == 34_334 and len(conversation.billed) == 16, "each reply's bill at its call"
    assert {p for p, _ in conversation.billed} <= set(turn_starts(conversation.items))
    assert formats.loads(_zip(tmp_path, CLINE_SDK)).items == conversation.items
    assert formats.loads((CLINE_SDK / "session.messages.json").read_bytes()).items == conversation.items
    assert_count_names(conversation, "cline")


def test_a_cline_sdk_error_result_is_an_error():
    session = json.loads((CLINE_SDK / "session.messages.json").read_text())
    failed = _sdk_blocks(session, "tool_result")[3]
    failed["is_error"] = True  # none failed in the real session: Cline writes a failure so (messages-contract-v1)
    conversation = formats.read(session)
    assert [r.call_id for r in results(conversation) if r.is_error] == [failed["tool_use_id"]]


@pytest.mark.parametrize(("name", "kind", "items"), [("cline-sdk-agentic.compaction.json", "compaction_summary", 3),
                                                     ("cline-sdk-basic.compaction.json", "compaction", 14)])
def test_a_session_cline_compacted_reads_and_says_cline_compacted_it(name, kind, items):
    conversation = formats.read_path(DATA / name)
    assert (conversation.source, len(conversation.items)) == ("cline", items)
    assert any(f"metadata.kind {kind} 1" in note for note in conversation.notes)
    assert_valid_anthropic_request(conversation)


# One way in: files, folders, zips, databases ----------------------------------------------------------------

def test_the_cli_reads_a_task_folder_and_names_the_agent():
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "playground", "count", str(CLINE), "--json"], capture_output=True,
                          text=True, check=False, cwd=DATA.parent.parent)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["format"] == "cline"


def test_a_zip_that_unpacks_past_the_limit_is_refused_before_unpacking(tmp_path):
    import zipfile

    path = tmp_path / "bomb.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("task/api_conversation_history.json", b" " * (2 * 1024 * 1024))
    assert path.stat().st_size < 100_000
    with pytest.raises(InputError, match="1 MB"):
        formats.loads(path.read_bytes(), limit_mb=1)


def test_a_bad_file_in_a_folder_is_named_and_a_folder_no_reader_knows_says_so(tmp_path):
    (tmp_path / "task").mkdir()
    (tmp_path / "task" / "api_conversation_history.json").write_text("[{oops")
    with pytest.raises(InputError, match=r"^api_conversation_history.json, line 1, column 3: invalid JSON"):
        formats.read_path(tmp_path / "task")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "a.json").write_text("{}")
    (tmp_path / "other" / "b.json").write_text("{}")
    with pytest.raises(InputError, match=r"^unrecognised folder"):
        formats.read_path(tmp_path / "other")


def test_a_folder_of_logs_says_it_is_many_runs_and_names_them(tmp_path):
    """A Claude Code project folder (or a day of Codex rollouts) is many runs, each a file: the error
    said only "unrecognised folder" and listed every format; it now says what it found and what to do."""
    for name in ("a.jsonl", "b.jsonl"):
        (tmp_path / name).write_bytes((DATA / "claude-code-spotter-tool_heavy.jsonl").read_bytes())
    (tmp_path / "rollout.jsonl").write_bytes((DATA / "codex-rollout.jsonl").read_bytes())
    with pytest.raises(InputError) as raised:
        formats.read_path(tmp_path)
    assert str(raised.value) == (
        "this folder is not one run: it holds 3 logs read one file at a time (Claude Code session log (JSONL): 2; "
        "Codex CLI rollout (JSONL): 1), such as a.jsonl, b.jsonl, rollout.jsonl. Give one file, or read them all "
        "as a corpus (`evaluate`, `tune`, or the page's Corpus tab)")


def test_a_zip_of_one_log_reads_as_that_log(tmp_path):
    import zipfile

    path = tmp_path / "one.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.write(DATA / "gemini-cli-session.jsonl", "chats/session-2026-03-26T09-37-95ee2bc8.jsonl")
    assert formats.loads(path.read_bytes()).items == formats.read_path(DATA / "gemini-cli-session.jsonl").items


# opencode -----------------------------------------------------------------------------------------------

OPENCODE = DATA / "opencode-storage-handmade"
# anomalyco/opencode @ 063e8306, packages/opencode/src/session/session.sql.ts (drizzle tables; the columns read)
OPENCODE_SCHEMA = """
CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT NOT NULL, slug TEXT NOT NULL, directory TEXT NOT NULL,
    title TEXT NOT NULL, version TEXT NOT NULL, cost REAL NOT NULL DEFAULT 0, tokens_input INTEGER NOT NULL DEFAULT 0,
    time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL);
CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL REFERENCES session(id),
    time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL REFERENCES message(id), session_id TEXT NOT NULL,
    time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
"""


def _opencode_files(kind: str) -> list[dict]:
    return [json.loads(path.read_text()) for path in sorted((OPENCODE / kind).rglob("*.json"))]


def opencode_database(path: Path, wal: bool = False) -> Path:
    """The storage folder as opencode.db holds it: ``data`` is each record without its ids (in WAL
    mode, ``wal``, as the real opencode.db studied for the test below is)."""
    import sqlite3

    with sqlite3.connect(path) as db:
        if wal:
            db.execute("PRAGMA journal_mode = WAL")
        db.executescript(OPENCODE_SCHEMA)
        for s in _opencode_files("session"):
            db.execute("INSERT INTO session VALUES (?, ?, ?, ?, ?, ?, 0, 0, ?, ?)", (
                s["id"], s["projectID"], "fix", s["directory"], s["title"], s["version"], s["time"]["created"],
                s["time"]["updated"]))
        for m in _opencode_files("message"):
            data = {k: v for k, v in m.items() if k not in ("id", "sessionID")}
            db.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)", (m["id"], m["sessionID"], m["time"]["created"],
                                                                      m["time"]["created"], json.dumps(data)))
        for p in _opencode_files("part"):
            data = {k: v for k, v in p.items() if k not in ("id", "sessionID", "messageID")}
            db.execute("INSERT INTO part VALUES (?, ?, ?, 0, 0, ?)", (p["id"], p["messageID"], p["sessionID"],
                                                                      json.dumps(data)))
    db.close()
    return path


def test_an_opencode_storage_folder_reads_every_tool_part_once(tmp_path):
    conversation = formats.read_path(OPENCODE)
    assert (conversation.format, conversation.source, conversation.model) == ("native", "opencode",
                                                                              "claude-sonnet-4-5")
    tools = [p for p in _opencode_files("part") if p["type"] == "tool"]
    assert [(c.call_id, c.name) for c in calls(conversation)] == [(p["callID"], p["tool"]) for p in tools]
    assert len(pairs(conversation.items)) == len(tools)
    assert [r.call_id for r in results(conversation) if r.is_error] == [
        p["callID"] for p in tools if p["state"]["status"] == "error"]
    pruned = next(r for r in results(conversation) if r.call_id == tools[0]["callID"])
    assert pruned.content == "[Old tool result content cleared]", "as opencode sends a pruned output"
    notes = " ".join(conversation.notes)
    assert "pruned 1 tool output" in notes and "reasoning 1" in notes
    # each step-finish's tokens (input + cache read + cache write) at the call its step's reply starts
    assert conversation.billed == ((1, 12_204), (6, 12_553), (10, 12_853))
    assert [p for p, _ in conversation.billed] == turn_starts(conversation.items)
    assert formats.loads(_zip(tmp_path, OPENCODE)).items == conversation.items
    assert_valid_chat_request(conversation)
    assert_count_names(conversation, "opencode")


def test_opencode_db_reads_like_its_storage_folder(tmp_path):
    database = opencode_database(tmp_path / "opencode.db")
    assert_detected_only_as(formats.parse_input(database.read_bytes()), "opencode")
    assert formats.read_path(database).items == formats.read_path(OPENCODE).items


def test_an_opencode_export_reads_like_its_storage_folder(tmp_path):
    """``opencode export <session>`` writes ``{info, messages: [{info, parts}]}`` (cli/cmd/export.ts):
    it was taken for an Anthropic request and failed with "messages[0]: missing 'role'"."""
    (session,) = _opencode_files("session")
    by_message: dict[str, list[dict]] = {}
    for part in _opencode_files("part"):
        by_message.setdefault(part["messageID"], []).append(part)
    export = {"info": session, "messages": [{"info": m, "parts": by_message.get(m["id"], [])}
                                            for m in sorted(_opencode_files("message"), key=lambda m: m["id"])]}
    path = tmp_path / "session.json"
    path.write_text(json.dumps(export, indent=2))
    assert_detected_only_as(formats.parse_input(path.read_bytes()), "opencode")
    conversation, folder = formats.read_path(path), formats.read_path(OPENCODE)
    assert conversation.items == folder.items and conversation.billed == folder.billed
    assert conversation.notes[0].startswith(f"Read from an opencode export (session {session['id']})")


def test_a_database_in_wal_mode_reads_as_any_other(tmp_path):
    """Agents keep their databases in WAL mode (header bytes 18 and 19 are 2: so are the real
    opencode.db of suhd550-dev/stunning-memory @ 7b38109f, studied, not copied: it has no licence, and
    the real `.opencode/opencode.db` of the older Go opencode). An in-memory copy could not open
    one: "not an SQLite database that can be read (unable to open database file)"."""
    database = opencode_database(tmp_path / "opencode.db", wal=True)
    assert database.read_bytes()[18:20] == b"\x02\x02" and not (tmp_path / "opencode.db-wal").exists()
    assert formats.read_path(database).items == formats.read_path(OPENCODE).items
    assert formats.loads(database.read_bytes()).items == formats.read_path(OPENCODE).items  # a page upload


OPENCODE_GO = DATA / "opencode-go-kashifkhan0771-utils.db"


def _go_sessions(database) -> list:
    """The real Go opencode database one session at a time (a store is read as its latest session)."""
    from playground.formats._reader import Database

    return [Database({"sessions": (session,), "messages": tuple(row for row in database.tables["messages"]
                                                                if row["session_id"] == session["id"])})
            for session in database.tables["sessions"]]


def test_the_older_go_opencode_database_reads_every_tool_call_once():
    """A real `.opencode/opencode.db` (tests/data/README.md), each of its sessions: every tool_call
    part is one call, answered by the tool_result its tool message holds (an error where is_error);
    it was refused as an "unrecognised database" (and, in WAL mode, could not be opened at all)."""
    database = formats.parse_input(OPENCODE_GO.read_bytes())
    assert_detected_only_as(database, "opencode")
    latest = formats.read(database)
    assert latest.source == "opencode" and "5 other sessions not read" in latest.notes[0]
    read = 0
    for session in _go_sessions(database):
        parts = [json.loads(row["parts"]) for row in session.tables["messages"]]
        tool_calls = [p["data"] for row in parts for p in row if p["type"] == "tool_call"]
        failed = {p["data"]["tool_call_id"] for row in parts for p in row if p["type"] == "tool_result"
                  and p["data"]["is_error"]}
        conversation = formats.read(session)
        assert [(c.call_id, c.name) for c in calls(conversation)] == [(c["id"], c["name"]) for c in tool_calls]
        assert len(pairs(conversation.items)) == len(tool_calls)
        assert {r.call_id for r in results(conversation) if r.is_error} == failed
        assert [json.loads(c.arguments) for c in calls(conversation)] == [json.loads(c["input"]) for c in tool_calls]
        assert_valid_chat_request(conversation)
        read += len(tool_calls)
    assert read == 78 and errors(formats.read(_go_sessions(database)[1])) >= 13
    assert_count_names(latest, "opencode")


@pytest.mark.parametrize("path", [DATA / "gemini-cli-session.jsonl", DATA / GOOSE[0], OPENHANDS_V1, OPENCODE])
def test_compact_on_a_log_read_as_native_writes_a_chat_request(path, tmp_path):
    """It stopped with "a provider request is one of chat, responses, anthropic: 'native'"."""
    import subprocess
    import sys

    report = tmp_path / "report.json"
    done = subprocess.run([sys.executable, "-m", "playground", "compact", str(path), "--threshold", "0",
                           "--report", str(report)], capture_output=True, text=True, check=False,
                          cwd=DATA.parent.parent)
    assert done.returncode == 0, done.stderr
    body = json.loads(done.stdout)
    assert set(body) >= {"model", "messages"} and body["messages"]
    assert any("written as a Chat Completions request" in note for note in json.loads(report.read_text())["notes"])


def test_a_folder_of_more_files_than_a_task_holds_is_refused(tmp_path, monkeypatch):
    from playground import limits

    monkeypatch.setattr(limits, "MAX_FILES", 3)
    for number in range(4):
        (tmp_path / f"event-{number}.json").write_text("{}")
    with pytest.raises(InputError, match="more than 3 files"):
        formats.read_path(tmp_path)


def test_any_reader_chosen_for_any_test_log_reads_it_or_says_why():
    """The page's Format override can name any reader for any file: never a crash."""
    logs = [path for path in sorted(DATA.iterdir()) if path.name != "README.md"]
    for path in logs:
        for reader in formats.READERS:
            with contextlib.suppress(InputError):
                formats.read_path(path, reader)
