"""Goose sessions, read as a playground-native conversation (counted like Chat; tool results keep
their error status): ``goose session export --format json``, the ``sessions.db`` SQLite database
Goose keeps them in (``<data_dir>/sessions/sessions.db``), and the older one-file-a-session ``.jsonl``.

Format (block/goose @ 01643006, ``crates/goose/src/session/session_manager.rs``, schema version 5):
a ``Session`` (``id``, ``name``, ``working_dir``, ``extension_data``, ``total_tokens``,
``input_tokens``, ``output_tokens``, their ``accumulated_*`` sums over every call, …) and its
messages (``role``, ``created``, ``content``, ``metadata {userVisible, agentVisible}``). The export
is the session with ``conversation`` (and ``provider_name``, ``model_config``); the database has a
``sessions`` table and a ``messages`` table (``session_id``, ``role``, ``content_json``,
``metadata_json``); the older ``.jsonl`` is the session's fields on line 1, then a message a line.
Content items: ``text``, ``toolRequest {id, toolCall: {status, value: {name, arguments}} | {status:
"error", error}}``, ``toolResponse {id, toolResult: {status, value: {content, isError?}} | {status:
"error", error}}``, ``thinking``, ``redactedThinking``, ``image`` and Goose's own notices.

Messages marked ``agentVisible: false`` were never sent to the model and are left out; thinking is
left out (counted). A database with several sessions is read as its most recently updated one.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from ..conversation import Conversation
from ..errors import InputError
from ..words import plural
from . import native
from ._reader import Database, Reader, as_log, counted, log_lines, read_note
from ._wire import check, need

NAME = "goose"
TITLE = "Goose session (export .json, sessions.db, .jsonl)"
_SESSION_KEYS = ("working_dir", "extension_data", "accumulated_input_tokens")


def _is_message(value: Any) -> bool:
    return isinstance(value, dict) and value.get("role") in ("user", "assistant") and isinstance(
        value.get("content"), list) and "created" in value


def _is_session(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("id"), str) and any(key in value for key in _SESSION_KEYS)


def looks_like(data: Any) -> int:
    if isinstance(data, Database):
        columns = data.tables.get("messages", ({},))
        return 6 if "sessions" in data.tables and (not columns or "content_json" in columns[0]) else 0
    if isinstance(data, dict):
        return 6 if _is_session(data) and isinstance(data.get("conversation"), list) else 0
    lines = log_lines(data)
    return 6 if lines and _is_legacy_head(lines[0]) and all(map(_is_message, lines[1:])) else 0


def _is_legacy_head(value: Any) -> bool:
    """The older ``.jsonl``'s first line, ``SessionMetadata`` (``legacy.rs``): no id (the file name is the
    session's), a working folder and the token counts."""
    return isinstance(value, dict) and isinstance(value.get("working_dir"), str) and not _is_message(value)


def _from_database(data: Database) -> tuple[dict[str, Any], list[dict], str]:
    """The most recently updated session and its messages, content and metadata parsed."""
    sessions = sorted(data.tables["sessions"], key=lambda row: str(row.get("updated_at") or ""))
    if not sessions:
        raise InputError("the Goose database holds no session", where="sessions")
    session = sessions[-1]
    messages = []
    rows = [row for row in data.tables.get("messages", ()) if row.get("session_id") == session["id"]]
    for row in sorted(rows, key=lambda row: row.get("id") or 0):
        place = f"messages row {row.get('id')}"
        messages.append({"role": row.get("role"), "content": _json(row.get("content_json"), place, "content_json"),
                         "metadata": _json(row.get("metadata_json") or "{}", place, "metadata_json")})
    others = f"; {plural(len(sessions) - 1, 'other session')} in the database not read" if len(sessions) > 1 else ""
    return session, messages, f"sessions.db (session {session['id']}{others})"


def _json(text: Any, place: str, column: str) -> Any:
    try:
        return json.loads(check(text, str, f"{place}.{column}"))
    except ValueError as exc:
        raise InputError(f"invalid JSON ({exc})", where=f"{place}.{column}") from None


class _Session:
    """Native items from Goose messages, and counts of what was left out."""

    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []
        self.left_out: Counter[str] = Counter()
        self.failed_calls: set[str] = set()
        self.called: set[str] = set()
        self.early: dict[str, dict[str, Any]] = {}  # results logged before their call (Goose's export does so)
        self.moved = 0

    def add(self, message: dict, place: str) -> None:
        metadata = message.get("metadata") if isinstance(message.get("metadata"), dict) else {}
        if metadata.get("agentVisible") is False:
            self.left_out["messages the model never saw (agentVisible: false)"] += 1
            return
        role = need(message, "role", str, place)
        text: list[str] = []
        for position, block in enumerate(need(message, "content", list, place)):
            at = f"{place}.content[{position}]"
            kind = need(check(block, dict, at), "type", str, at)
            if kind == "text":
                text.append(str(block.get("text", "")))
                continue
            self._flush(role, text)
            if kind == "toolRequest":
                self._call(block, at)
            elif kind == "toolResponse":
                self._result(block, at)
            else:
                self.left_out[kind] += 1
        self._flush(role, text)

    def _flush(self, role: str, text: list[str]) -> None:
        if text:
            self.items.append({"type": "message", "role": role, "content": "".join(text)})
            text.clear()

    def _call(self, block: dict, at: str) -> None:
        call_id = need(block, "id", str, at)
        request = need(block, "toolCall", dict, at)
        value = request.get("value") if request.get("status") == "success" else None
        if not isinstance(value, dict):  # Goose could not parse the model's call: nothing was run
            self.failed_calls.add(call_id)
            self.left_out["tool calls Goose could not parse"] += 1
            return
        self.items.append({"type": "tool_call", "call_id": call_id, "name": need(value, "name", str, f"{at}.toolCall"),
                           "arguments": value.get("arguments") or {}})
        self.called.add(call_id)
        if call_id in self.early:
            self.items.append(self.early.pop(call_id))
            self.moved += 1

    def _result(self, block: dict, at: str) -> None:
        call_id = need(block, "id", str, at)
        if call_id in self.failed_calls:
            self.left_out["responses to those calls"] += 1
            return
        result = need(block, "toolResult", dict, at)
        value = result.get("value") if isinstance(result.get("value"), dict) else {}
        parts = value.get("content") if isinstance(value.get("content"), list) else []
        text = "\n".join(str(part.get("text", "")) for part in parts if isinstance(part, dict) and "text" in part)
        failed = result.get("status") != "success" or value.get("isError") is True
        if result.get("status") != "success":
            text = str(result.get("error", text))
        item = {"type": "tool_result", "call_id": call_id, "content": text, "status": "error" if failed else "success"}
        if call_id in self.called:
            self.items.append(item)
        else:
            self.early[call_id] = item

    def notes(self) -> list[str]:
        notes = []
        if self.moved:
            notes.append(f"{plural(self.moved, 'tool response')} logged before its request "
                         f"{'is' if self.moved == 1 else 'are'} placed right after it, where the model read it.")
        if self.early:
            notes.append(f"Dropped, as their request is not in this log: {plural(len(self.early), 'tool response')}, "
                         f"{', '.join(list(self.early)[:5])}.")
        if self.left_out:
            notes.append(f"Left out (not sent as text, or never sent): {counted(self.left_out)}.")
        return notes


def _billed(session: dict) -> list[str]:
    """Goose keeps the last call's input tokens and their sum over every call, not each call's."""
    last, total = session.get("input_tokens"), session.get("accumulated_input_tokens")
    if not isinstance(last, int) or not isinstance(total, int):
        return []
    return [f"Goose recorded the input tokens billed: {last:,} on the last call (input_tokens) and {total:,} over "
            "every call of the session (accumulated_input_tokens); it keeps no per-call figures."]


def read(data: Any) -> Conversation:
    if isinstance(data, Database):
        session, messages, form = _from_database(data)
    elif isinstance(data, dict):
        session, messages, form = data, need(data, "conversation", list, "document"), "export (.json)"
    else:
        lines = check(log_lines(data), list, "document")
        session, messages, form = lines[0], lines[1:], f".jsonl ({plural(len(lines), 'line')})"
    build = _Session()
    for position, message in enumerate(messages):
        build.add(check(message, dict, f"conversation[{position}]"), f"conversation[{position}]")
    body: dict[str, Any] = {"format": native.MARKER, "items": build.items}
    config = session.get("model_config")
    if isinstance(config, dict) and isinstance(config.get("model_name"), str):
        body["model"] = config["model_name"]
    notes = [read_note(f"a Goose session {form}", len(messages), "message", len(build.items), "Goose")]
    notes.extend(build.notes())
    notes.extend(_billed(session))
    return as_log(native.read(body), NAME, notes)


READER = Reader(NAME, TITLE, looks_like, read)
