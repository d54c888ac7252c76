"""Gemini CLI chat recordings (``~/.gemini/tmp/<project>/chats/session-*.json`` or ``.jsonl``),
read as a playground-native conversation (counted like Chat; tool results keep their error status).

Format (google-gemini/gemini-cli @ 5411f113, ``packages/core/src/services/chatRecordingTypes.ts`` and
``chatRecordingService.ts``): a ``ConversationRecord {sessionId, projectHash, startTime, lastUpdated,
messages, kind?}``. Each message has ``id``, ``type`` (``user``, ``gemini``, ``info``, ``error``,
``warning``) and ``content`` (a string or Gemini ``Part``s); a ``gemini`` message may hold
``toolCalls`` (``id``, ``name``, ``args``, ``result`` as ``functionResponse`` parts, ``status``),
``thoughts`` (summaries of its reasoning), ``tokens`` (what the API billed for that call) and
``model``. The legacy ``.json`` is the record itself; the ``.jsonl`` is a metadata line, then a
message record each time a message is written or updated (the last one of an id wins and keeps
the id's first place), ``{"$rewindTo": id}`` (drops that message and every later one) and
``{"$set": {...}}`` (metadata; ``messages`` there replaces them all) — replayed as Gemini CLI does.

``user`` and ``gemini`` messages are the conversation; ``info``, ``error`` and ``warning`` are the
CLI's own notices to the person (an API error, a cancelled request), never sent to the model: they
are counted, and errors quoted, in the notes. Thoughts are Gemini's thinking, which the API does not
take back as input: counted in the notes, not sent.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ..conversation import Conversation
from ..words import plural
from . import native
from ._reader import Reader, as_log, counted, log_lines, read_note, text_of, with_billed
from ._wire import check, need
from .gemini import response_text

NAME = "gemini-cli"
TITLE = "Gemini CLI session (.json / .jsonl)"
_TYPES = ("user", "gemini", "info", "error", "warning")
_NOTICES = ("info", "error", "warning")


def _is_message(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("id"), str) and value.get("type") in _TYPES


def looks_like(data: Any) -> int:
    if isinstance(data, dict):
        messages = data.get("messages")
        return 6 if "sessionId" in data and isinstance(messages, list) and all(map(_is_message, messages)) else 0
    lines = log_lines(data)
    if not lines or not isinstance(lines[0], dict) or "sessionId" not in lines[0]:
        return 0
    control = all(_is_message(line) or (isinstance(line, dict) and ("$rewindTo" in line or "$set" in line))
                  for line in lines[1:])
    return 6 if control else 0


def replay(lines: list[Any]) -> tuple[dict[str, Any], list[dict]]:
    """The session's metadata and messages after replaying a ``.jsonl`` as Gemini CLI's
    ``loadConversationRecord`` does (a dict keeps each id's first place when it is written again)."""
    metadata: dict[str, Any] = {}
    messages: dict[str, dict] = {}
    for number, line in enumerate(lines, 1):
        record = check(line, dict, f"line {number}")
        if "$rewindTo" in record:
            ids = list(messages)
            target = record["$rewindTo"]
            for gone in ids[ids.index(target):] if target in ids else ids:
                del messages[gone]
        elif isinstance(record.get("id"), str) and "type" in record:
            messages[record["id"]] = record
        else:
            patch = check(record["$set"], dict, f"line {number}.$set") if "$set" in record else record
            metadata.update({key: value for key, value in patch.items() if key != "messages"})
            if isinstance(patch.get("messages"), list):
                messages = {str(m.get("id")): m for m in patch["messages"] if isinstance(m, dict)}
    return metadata, list(messages.values())


def _result(call: dict) -> str:
    """A tool call's result as the model read it: each ``functionResponse``'s output (or error), or
    its JSON when it is neither; other parts' text."""
    parts = call.get("result")
    texts = []
    for part in parts if isinstance(parts, list) else []:
        function = part.get("functionResponse") if isinstance(part, dict) else None
        response = function.get("response") if isinstance(function, dict) else None
        if isinstance(response, dict):
            texts.append(response_text(function)[0])
        elif isinstance(part, dict) and isinstance(part.get("text"), str):
            texts.append(part["text"])
    return "\n".join(texts)


class _Session:
    """Native items built from the messages, and what the notes say about the rest."""

    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []
        self.notices: Counter[str] = Counter()
        self.errors: list[str] = []
        self.thoughts = 0
        self.billed: dict[int, int] = {}  # index of a reply's first item -> the input tokens its call billed
        self.models: Counter[str] = Counter()

    def add(self, message: dict, place: str) -> None:
        kind = need(message, "type", str, place)
        if kind not in _TYPES:  # a message type a later Gemini CLI added: counted, not guessed at
            self.notices[f"type {kind}"] += 1
            return
        if kind in _NOTICES:
            self.notices[kind] += 1
            if kind == "error":
                self.errors.append(text_of(message.get("content"))[:200])
            return
        text = text_of(message.get("content"))
        first = len(self.items)
        role = "user" if kind == "user" else "assistant"
        if text or role == "user":
            self.items.append({"type": "message", "role": role, "content": text})
        if kind != "gemini":
            return
        thoughts = message.get("thoughts")
        self.thoughts += len(thoughts) if isinstance(thoughts, list) else 0
        if isinstance(message.get("model"), str):
            self.models[message["model"]] += 1
        calls = check(message.get("toolCalls") or [], list, f"{place}.toolCalls")
        tokens = message.get("tokens")
        if (isinstance(tokens, dict) and isinstance(tokens.get("input"), int) and tokens["input"] > 0
                and (text or calls)):  # (a reply with no item is no call replay knows)
            self.billed[first] = tokens["input"]
        for position, call in enumerate(calls):
            at = f"{place}.toolCalls[{position}]"
            check(call, dict, at)
            self.items.append({"type": "tool_call", "call_id": need(call, "id", str, at),
                               "name": need(call, "name", str, at), "arguments": call.get("args") or {}})
        for call in calls:
            if call.get("result") is not None or call.get("status") in ("error", "cancelled"):
                self.items.append({"type": "tool_result", "call_id": call["id"], "content": _result(call),
                                   "status": "success" if call.get("status") == "success" else "error"})


def read(data: Any) -> Conversation:
    if isinstance(data, dict):
        metadata, messages, form = data, need(data, "messages", list, "document"), ".json"
    else:
        lines = log_lines(data)
        metadata, messages = replay(check(lines, list, "document"))
        form = f".jsonl ({plural(len(lines), 'line')})"
    session = _Session()
    for position, message in enumerate(messages):
        place = f"messages[{position}]" if form == ".json" else f"message {message.get('id')}"
        session.add(check(message, dict, place), place)
    body: dict[str, Any] = {"format": native.MARKER, "items": session.items}
    if session.models:
        body["model"] = session.models.most_common(1)[0][0]
    notes = [read_note(f"a Gemini CLI session {form}", len(messages), "message", len(session.items), "Gemini CLI")]
    if metadata.get("kind") == "subagent":
        notes.append("This is a sub-agent's session (kind: subagent).")
    if session.thoughts:
        notes.append(f"Left out: {plural(session.thoughts, 'thought summary', 'thought summaries')} (Gemini's "
                     "thinking, not sent back as input).")
    if session.notices:
        quoted = f" Errors: {'; '.join(session.errors[:3])}" if session.errors else ""
        notes.append(f"Left out (the CLI's notices to the person, not sent to the model): "
                     f"{counted(session.notices)}.{quoted}")
    return with_billed(as_log(native.read(body), NAME, notes), session.billed, "Gemini CLI",
                       "tokens.input, cached included")


READER = Reader(NAME, TITLE, looks_like, read)
