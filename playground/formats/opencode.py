"""opencode sessions, read as a playground-native conversation (counted like Chat; tool results
keep their error status): the JSON storage folder (``~/.local/share/opencode/storage/``: ``session/
<project>/<session>.json``, ``message/<session>/<message>.json``, ``part/<message>/<part>.json``, or a
zip of it) and the SQLite database that replaced it (``opencode.db``: tables ``session``, ``message``,
``part``, each message's and part's JSON in ``data``), and ``opencode export <session>``'s JSON
(``{info, messages: [{info, parts}]}``: the session, each message with its parts, in order).

Format (anomalyco/opencode, ``packages/opencode/src/session/message-v2.ts`` @ c4794191 and
``session.sql.ts`` @ 063e8306): a message is ``user`` or ``assistant`` (``modelID``, ``tokens``,
``error``, ``summary``); its parts are ``text``, ``reasoning``, ``file``, ``tool`` (``callID``,
``tool``, ``state``: ``pending`` | ``running`` | ``completed`` with ``input``, ``output`` and
``time.compacted`` once opencode pruned it | ``error`` with ``error``), ``step-start`` and
``step-finish`` (the step's billed ``tokens``), ``snapshot``, ``patch``, ``agent``, ``retry``. A tool part
is a call and, once it ran, its result; a pruned output is sent as opencode sends it, ``[Old tool
result content cleared]``. Reasoning, files and opencode's own parts are counted in the notes. A
store with several sessions is read as its most recently updated one.

The older opencode (opencode-ai/opencode, in Go, until mid 2025; Charm's Crush since) kept a
project's sessions in ``.opencode/opencode.db``: tables ``sessions`` and ``messages`` (``role`` user,
assistant or tool; ``model``; ``parts``, a JSON list of ``{"type", "data"}``: ``text``,
``reasoning``, ``image_url``, ``binary``, ``tool_call`` with ``id``, ``name`` and ``input`` as a JSON
string, ``tool_result`` with ``tool_call_id``, ``content`` and ``is_error``, ``finish`` with
``reason``; ``internal/message/content.go``). It is read in the same shape: each tool call a tool
part whose state is its result (found in the tool message after it), ``finish`` parts counted.
It records tokens per session, not per call, so there are no bills to set at the calls.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import PurePosixPath
from typing import Any

from ..conversation import Conversation
from ..errors import InputError
from ..words import plural
from . import native
from ._reader import Database, Folder, Reader, as_log, counted, read_note, with_billed
from ._wire import check

NAME = "opencode"
TITLE = "opencode session (storage folder or .zip, opencode.db, opencode export .json)"
CLEARED = "[Old tool result content cleared]"  # message-v2.ts toModelMessage, for a compacted tool output


def _kind(name: str) -> str | None:
    """``session``, ``message`` or ``part`` for a storage file (``<kind>/<owner>/<id>.json``)."""
    parts = PurePosixPath(name).parts
    return parts[-3] if len(parts) >= 3 and parts[-3] in ("session", "message", "part") and name.endswith(
        ".json") else None


def looks_like(data: Any) -> int:
    if isinstance(data, Database) and _is_go(data):
        return 6
    if isinstance(data, Database):
        return 6 if {"session", "message", "part"} <= set(data.tables) and all(
            not rows or "data" in rows[0] for rows in (data.tables["message"], data.tables["part"])) else 0
    if isinstance(data, Folder):
        kinds = {_kind(name) for name in data.files}
        return 6 if {"message", "part"} <= kinds else 0
    return 6 if _is_export(data) else 0


def _is_export(data: Any) -> bool:
    """``opencode export <session>``'s JSON: ``{info, messages: [{info, parts}]}``."""
    if not isinstance(data, dict):
        return False
    messages = data.get("messages")
    return (isinstance(data.get("info"), dict) and isinstance(messages, list) and bool(messages)
            and all(isinstance(m, dict) and isinstance(m.get("info"), dict) and isinstance(m.get("parts"), list)
                    for m in messages))


def _load(text: Any, where: str) -> dict:
    try:
        value = json.loads(check(text, str, where))
    except ValueError as exc:
        raise InputError(f"invalid JSON ({exc})", where=where) from None
    return check(value, dict, where)


Store = tuple[list[dict], list[dict], list[dict], int]  # sessions, messages, parts, how many sessions


def _from_database(data: Database) -> Store:
    """Sessions, messages (info) and parts as the storage folder holds them, ids put back in."""
    sessions = [{**row, "time": {"updated": row.get("time_updated") or 0}} for row in data.tables["session"]]
    messages = [{**_load(row.get("data"), f"message row {row.get('id')}.data"), "id": row.get("id"),
                 "sessionID": row.get("session_id")} for row in data.tables["message"]]
    parts = [{**_load(row.get("data"), f"part row {row.get('id')}.data"), "id": row.get("id"),
              "messageID": row.get("message_id"), "sessionID": row.get("session_id")} for row in data.tables["part"]]
    return sessions, messages, parts, len(sessions)


def _is_go(data: Database) -> bool:
    """The older Go opencode's database: ``sessions`` and ``messages`` whose rows hold ``parts``."""
    rows = data.tables.get("messages") or ()
    return "sessions" in data.tables and bool(rows) and "parts" in rows[0]


def _from_go_database(data: Database) -> Store:
    """The Go opencode's sessions and messages in the storage folder's shape: a tool call becomes a
    tool part whose state is the result its tool message holds (the tool messages themselves then
    hold nothing more to read)."""
    rows = [{**row, "parts": _go_parts(row)} for row in data.tables["messages"]]
    results = {str(part["data"].get("tool_call_id")): part["data"] for row in rows if row.get("role") == "tool"
               for part in row["parts"] if part.get("type") == "tool_result"}
    sessions = [{"id": row.get("id"), "time": {"updated": row.get("updated_at") or 0}}
                for row in data.tables["sessions"]]
    messages, parts = [], []
    for row in rows:
        if row.get("role") == "tool":
            continue
        messages.append({"id": row.get("id"), "sessionID": row.get("session_id"), "role": row.get("role"),
                         "modelID": row.get("model") or None, "time": {"created": row.get("created_at") or 0}})
        parts.extend({**_go_part(part, results), "id": f"{row.get('id')}:{number:06d}", "messageID": row.get("id")}
                     for number, part in enumerate(row["parts"]))
    return sessions, messages, parts, len(sessions)


def _go_parts(row: dict) -> list[dict]:
    where = f"messages row {row.get('id')}.parts"
    try:
        parts = json.loads(check(row.get("parts"), str, where))
    except ValueError as exc:
        raise InputError(f"invalid JSON ({exc})", where=where) from None
    return [part for part in check(parts, list, where) if isinstance(part, dict) and isinstance(part.get("data"), dict)]


def _go_part(part: dict, results: dict[str, dict]) -> dict:
    """One Go opencode part as the newer opencode writes it (``text``, ``tool``; others by their type)."""
    kind, data = part.get("type"), part["data"]
    if kind == "text":
        return {"type": "text", "text": data.get("text", "")}
    if kind != "tool_call":
        return {"type": kind}
    try:
        arguments = json.loads(data.get("input") or "{}")
    except ValueError:
        arguments = {"input": data.get("input")}
    state: dict[str, Any] = {"status": "pending", "input": arguments if isinstance(arguments, dict) else {}}
    result = results.get(str(data.get("id")))
    if result is not None:
        failed = result.get("is_error") is True
        state.update({"status": "error" if failed else "completed",
                      "error" if failed else "output": result.get("content")})
    return {"type": "tool", "callID": data.get("id"), "tool": data.get("name"), "state": state}


def _from_export(data: dict) -> Store:
    """An export's one session, its messages and their parts, as the storage folder holds them. The
    export lists both in order: parts are numbered so (``read`` sorts them by id), and a message
    without an id gets its place, so two of them never share their parts."""
    session = data["info"]
    messages, parts = [], []
    for position, message in enumerate(data["messages"]):
        info = {"id": f"message {position}", **message["info"],
                "sessionID": message["info"].get("sessionID", session.get("id"))}
        messages.append(info)
        parts.extend({**check(part, dict, f"messages[{position}].parts[{number}]"), "messageID": info.get("id"),
                      "id": f"{number:06d}"} for number, part in enumerate(message["parts"]))
    return [session], messages, parts, 1


def _from_folder(data: Folder) -> Store:
    found: dict[str, list[dict]] = {"session": [], "message": [], "part": []}
    for name, value in data.files.items():
        kind = _kind(name)
        if kind:
            found[kind].append(check(value, dict, name))
    return found["session"], found["message"], found["part"], len(found["session"])


class _Build:
    """Native items from opencode's messages and parts, and what the notes say."""

    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []
        self.left_out: Counter[str] = Counter()
        self.errors: list[str] = []
        self.billed: dict[int, int] = {}  # index of a step's first item -> the input tokens the step billed
        self.step = 0  # where the step being read began in ``items``
        self.models: Counter[str] = Counter()
        self.cleared = 0
        self.summaries = 0
        self.results: list[dict[str, Any]] = []  # a step's results, sent after all its calls

    def message(self, info: dict, parts: list[dict]) -> None:
        role = "assistant" if info.get("role") == "assistant" else "user"
        if role == "assistant":
            self._assistant_info(info)
        text: list[str] = []
        for part in parts:
            kind = part.get("type")
            if kind == "text":
                text.append(str(part.get("text", "")))
                continue
            if kind == "tool":
                self._flush(role, text)
                self._tool(part)
            elif kind == "step-finish":
                self._flush(role, text)
                tokens = part.get("tokens") if isinstance(part.get("tokens"), dict) else {}
                cache = tokens.get("cache") if isinstance(tokens.get("cache"), dict) else {}
                billed = sum(v for v in (tokens.get("input"), cache.get("read"), cache.get("write"))
                             if isinstance(v, int))
                if billed and len(self.items) > self.step:  # (a step that wrote no item is no call replay knows)
                    self.billed.setdefault(self.step, billed)
            elif kind == "step-start":
                self._flush(role, text)
                self._step_results()
                self.step = len(self.items)
            else:
                self.left_out[str(kind)] += 1
        self._flush(role, text)
        self._step_results()

    def _step_results(self) -> None:
        """A step's tool results after its calls: one LLM call's reply, then what its tools returned."""
        self.items.extend(self.results)
        self.results.clear()

    def _assistant_info(self, info: dict) -> None:
        if isinstance(info.get("modelID"), str):
            self.models[info["modelID"]] += 1
        if info.get("summary") is True:
            self.summaries += 1
        error = info.get("error")
        if isinstance(error, dict):
            message = error.get("data", {}).get("message") if isinstance(error.get("data"), dict) else None
            self.errors.append(f"{error.get('name', 'error')}: {message or ''}".strip())

    def _flush(self, role: str, text: list[str]) -> None:
        if "".join(text).strip():
            self.items.append({"type": "message", "role": role, "content": "".join(text)})
        text.clear()

    def _tool(self, part: dict) -> None:
        state = part.get("state") if isinstance(part.get("state"), dict) else {}
        call_id, name = str(part.get("callID")), str(part.get("tool"))
        self.items.append({"type": "tool_call", "call_id": call_id, "name": name,
                           "arguments": state.get("input") if isinstance(state.get("input"), dict) else {}})
        status = state.get("status")
        if status == "completed":
            compacted = isinstance(state.get("time"), dict) and state["time"].get("compacted")
            self.cleared += bool(compacted)
            self.results.append({"type": "tool_result", "call_id": call_id, "status": "success",
                                 "content": CLEARED if compacted else str(state.get("output", ""))})
        elif status == "error":
            self.results.append({"type": "tool_result", "call_id": call_id, "status": "error",
                               "content": str(state.get("error", ""))})


def read(data: Any) -> Conversation:
    if isinstance(data, Database) and _is_go(data):
        sessions, messages, parts, total = _from_go_database(data)
        form = "opencode.db of the older Go opencode"
    elif isinstance(data, Database):
        sessions, messages, parts, total = _from_database(data)
        form = "opencode.db"
    elif _is_export(data):
        sessions, messages, parts, total = _from_export(data)
        form = "export"
    else:
        sessions, messages, parts, total = _from_folder(check(data, Folder, "document"))
        form = "storage folder"
    chosen = _latest(sessions, messages)
    mine = sorted((m for m in messages if m.get("sessionID") == chosen), key=lambda m: (_created(m), str(m.get("id"))))
    by_message: dict[str, list[dict]] = {}
    for part in sorted(parts, key=lambda p: str(p.get("id"))):
        by_message.setdefault(str(part.get("messageID")), []).append(part)
    build = _Build()
    for message in mine:
        build.message(message, by_message.get(str(message.get("id")), []))
    body: dict[str, Any] = {"format": native.MARKER, "items": build.items}
    if build.models:
        body["model"] = build.models.most_common(1)[0][0]
    return with_billed(as_log(native.read(body), NAME, _notes(build, form, chosen, total, len(mine))), build.billed,
                       "opencode", "step-finish tokens: input + cache read + cache write")


def _created(message: dict) -> float:
    """When a message was written (0 when the log does not say), to put them in order."""
    time = message.get("time")
    created = time.get("created") if isinstance(time, dict) else None
    return created if isinstance(created, int | float) and not isinstance(created, bool) else 0


def _latest(sessions: list[dict], messages: list[dict]) -> str:
    """The most recently updated session's id (the messages' own when no session record is there)."""
    if sessions:
        def updated(session: dict) -> float:
            time = session.get("time") if isinstance(session.get("time"), dict) else {}
            value = time.get("updated")
            return value if isinstance(value, int | float) and not isinstance(value, bool) else 0
        return str(max(sessions, key=updated).get("id"))
    ids = [m.get("sessionID") for m in messages]
    if not ids:
        raise InputError("the opencode store holds no message")
    return str(ids[-1])


def _notes(build: _Build, form: str, session: str, total: int, messages: int) -> list[str]:
    others = f"; {plural(total - 1, 'other session')} not read" if total > 1 else ""
    notes = [read_note(f"an opencode {form} (session {session}{others})", messages, "message", len(build.items),
                       "opencode")]
    if build.cleared:
        notes.append(f"opencode had pruned {plural(build.cleared, 'tool output')} (time.compacted): sent, as opencode "
                     f"sends {'it' if build.cleared == 1 else 'them'}, as \"{CLEARED}\".")
    if build.summaries:
        notes.append(f"{plural(build.summaries, 'assistant message')} {'is' if build.summaries == 1 else 'are'} "
                     "opencode's own compaction summary (summary: true).")
    if build.left_out:
        notes.append(f"Left out (not sent as text, or opencode's own records): {counted(build.left_out)}.")
    if build.errors:
        notes.append(f"opencode recorded {plural(len(build.errors), 'error')} on its replies: "
                     f"{'; '.join(build.errors[:3])}.")
    return notes


READER = Reader(NAME, TITLE, looks_like, read)
