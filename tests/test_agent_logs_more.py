"""Readers for more agents' logs (issue 18 §1), each on real files from the agent's users' public
repositories where one exists (tests/data/README.md names source, commit and licence), and on
hand-made files built from the agent's own source where none does (said so there too).

Every reader is held to the same four things: each tool call in the log is read once (and its
result pairs with it), the log's errors are recognised, the request written out is one an API
takes, and the format is detected without being named (``count --json`` names the agent)."""

from __future__ import annotations

import json
from collections import Counter
from itertools import pairwise
from pathlib import Path

import pytest

from playground import exports, formats
from playground.errorpatterns import error_detail
from playground.errors import InputError
from playground.model import Conversation, ToolCall, ToolResult, pairs
from playground.report import count_to_json
from playground.tokens import Meter

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
    messages right after it, in order, and nothing is answered twice."""
    body, _ = exports.request_body(conversation, "chat")
    messages = body["messages"]
    assert body["model"] and messages
    for position, message in enumerate(messages):
        ids = [call["id"] for call in message.get("tool_calls") or []]
        answers = [m.get("tool_call_id") for m in messages[position + 1:position + 1 + len(ids)]]
        assert answers == ids, f"messages[{position}]: calls {ids} answered by {answers}"
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

def test_an_older_codex_rollout_is_read_as_responses():
    """It failed with "input[0]: missing 'role'" (read as a bare Responses input list)."""
    raw = formats.parse_text((DATA / "codex-rollout-old.jsonl").read_bytes())
    assert_detected_only_as(raw, "codex")
    conversation = formats.read(raw)
    assert (conversation.format, conversation.source, conversation.model) == ("responses", "codex", None)
    bare = [line for line in raw[1:] if line.get("type") in ("function_call", "local_shell_call")]
    assert [call.call_id for call in calls(conversation)] == [line["call_id"] for line in bare]
    assert len(pairs(conversation.items)) == len(bare)
    assert conversation.instructions == raw[0]["instructions"]
    notes = " ".join(conversation.notes)
    assert "state 3" in notes and "older rollout form" in notes and "success: false" in notes
    wire = formats.write(conversation)["input"]
    assert all("id" not in item or item["id"] is not None for item in wire), "id: null is no part of a request"
    assert errors(conversation) >= 1  # the failed pytest run
    assert_count_names(conversation, "codex")


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
    billed = [m["tokens"]["input"] for m in raw["messages"] if (m.get("tokens") or {}).get("input")]
    assert any(f"{max(billed):,} at most" in note for note in conversation.notes)


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
    assert "error 1" in notes and "quota exceeded" in notes and "120 on the first" in notes


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
    head = {key: value for key, value in raw.items() if key != "conversation"}
    text = "\n".join(json.dumps(line) for line in [head, *raw["conversation"]])
    assert formats.loads(text).items == formats.read(raw).items


# Aider --------------------------------------------------------------------------------------------------

AIDER = ["aider-afi-core.aider.chat.history.md", "aider-monochromatic.aider.chat.history.md"]


def _aider_inputs(text: str) -> list[str]:
    """Each run of '#### ' lines is one input (aider/io.py user_input), its lines joined."""
    inputs, run = [], []
    for line in [*text.splitlines(), ""]:
        if line.startswith("####"):
            run.append(line[5:].removesuffix("  "))
        elif run:
            inputs.append("\n".join(run).strip())
            run = []
    return [text for text in inputs if text.strip()]


@pytest.mark.parametrize("name", AIDER)
def test_an_aider_history_reads_as_text_turns_with_its_console_in_the_notes(name):
    text = (DATA / name).read_text()
    data = formats.parse_input(text.encode())
    assert_detected_only_as(data, "aider")
    conversation = formats.read_path(DATA / name)
    assert (conversation.format, conversation.source) == ("chat", "aider")
    assert [m.content for m in conversation.items if m.role == "user"] == _aider_inputs(text)
    assert not calls(conversation) and {m.role for m in conversation.items} == {"user", "assistant"}
    assert not any(line.startswith("> Tokens:") for m in conversation.items for line in m.content.splitlines())
    notes = " ".join(conversation.notes)
    assert f"{text.count(chr(10) + '# aider chat started at'):,} sessions" in notes
    assert "Errors Aider reported on the console" in notes and "tokens it sent on 39 calls" in notes
    assert_valid_chat_request(conversation)
    assert_count_names(conversation, "aider")


def test_aider_quote_lines_inside_a_code_block_stay_in_the_reply():
    text = ("# aider chat started at 2025-07-15 11:38:37\n\n> Main model: gpt-4o with diff edit format  \n\n"
            "#### explain the quote  \n\nIn markdown:\n\n```md\n> quoted\n#### heading\n```\n\nDone.\n\n"
            "> Tokens: 1.5k sent, 20 received.  \n")
    conversation = formats.loads(text)
    assert [m.role for m in conversation.items] == ["user", "assistant"]
    assert conversation.items[1].content == "In markdown:\n\n```md\n> quoted\n#### heading\n```\n\nDone."
    assert conversation.model == "gpt-4o"


def test_text_that_is_neither_json_nor_a_known_log_keeps_the_json_error():
    with pytest.raises(InputError, match=r"^line 1, column 1: invalid JSON"):
        formats.loads("hello, world")
