"""Codex CLI rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``), read as the OpenAI
Responses request they amount to.

Format (openai/codex, ``codex-rs/protocol/src/protocol.rs`` ``RolloutLine`` / ``RolloutItem`` and
``codex-rs/protocol/src/models.rs`` ``ResponseItem``): one JSON object a line,
``{"timestamp", "type", "payload"}``. ``response_item`` payloads are Responses items (message,
reasoning, function_call / function_call_output, custom_tool_call / custom_tool_call_output,
local_shell_call, web_search_call…) and become the request's ``input`` in order. ``turn_context``
gives the model; ``session_meta``, ``turn_context`` and ``event_msg`` lines are skipped and counted in
the notes. A ``compacted`` line is Codex compacting its own history: its summary text becomes a user
message at that place (Codex's own later requests carried it that way) and a note names the line and
the item, so the person sees where Codex cut.

The older rollout form (``codex-rs/core/src/rollout.rs`` before ``RolloutLine``, e.g. openai/codex @
89a151f5) is read too: a first line ``SessionMeta {id, timestamp, instructions?, git?}``, then each
``ResponseItem`` bare (message, function_call, function_call_output, local_shell_call) and
``{"record_type": "state", ...}`` snapshot lines; it records no model. Its lines are read as the
current form's ``session_meta``, ``response_item`` and (skipped) ``state`` lines.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from dataclasses import replace
from typing import Any

from ..conversation import Conversation, turn_starts
from ..words import count
from . import responses
from ._reader import Reader, counted, log_lines, with_billed
from ._wire import check, need

NAME = "codex"
TITLE = "Codex CLI rollout (JSONL)"
_LINE_TYPES = ("session_meta", "response_item", "compacted", "turn_context", "event_msg")


def looks_like(data: Any) -> int:
    lines = log_lines(data)
    if not lines:
        return 0
    if _is_legacy(lines):
        return 6
    # Every line is {type, payload}; at least one is a type we know (later Codex versions add line types,
    # which are skipped and counted like the ones we do not read).
    shaped = all(isinstance(line, dict) and isinstance(line.get("type"), str) and "payload" in line for line in lines)
    return 6 if shaped and any(line["type"] in _LINE_TYPES for line in lines) else 0


def _is_legacy(lines: list[Any]) -> bool:
    """The older form: a ``SessionMeta`` head (``id`` and ``timestamp``, no ``type``), then records that
    are each a bare Responses item (``type``) or a state snapshot (``record_type``)."""
    head, rest = lines[0], lines[1:]
    return (isinstance(head, dict) and isinstance(head.get("id"), str) and "timestamp" in head
            and "type" not in head and "payload" not in head
            and all(isinstance(line, dict) and ("record_type" in line or isinstance(line.get("type"), str))
                    for line in rest))


def _current_form(lines: list[Any]) -> list[Any]:
    """Older-form records as the current form's lines. Item ids are left out, as the current form
    never writes them: ``null`` ones are no part of a request, and a real one names an item stored on
    OpenAI's side, which a request may only cite in its stored form (status and all)."""
    converted: list[Any] = [{"type": "session_meta", "payload": {**lines[0], "base_instructions": lines[0].get(
        "instructions")}}]
    for line in lines[1:]:
        if "record_type" in line:
            converted.append({"type": str(line["record_type"]), "payload": line})
        else:
            item = {key: value for key, value in line.items() if key != "id"}
            converted.append({"type": "response_item", "payload": item})
    return converted


def _output(payload: dict, failed: list[str]) -> dict:
    """Older rollouts wrote a failed output as ``{"content", "success": false}``: send its text."""
    output = payload.get("output")
    if not isinstance(output, dict):
        return payload
    if output.get("success") is False:
        failed.append(str(payload.get("call_id")))
    return {**payload, "output": output.get("content", "")}


def _summary_item(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def _instructions(payload: dict) -> str | None:
    base = payload.get("base_instructions")
    text = base.get("text") if isinstance(base, dict) else base
    return text if isinstance(text, str) else None


def read(data: Any) -> Conversation:
    lines = log_lines(data)
    if lines is None:
        check(data, list, "document")
    legacy = bool(lines) and _is_legacy(lines)
    if legacy:
        lines = _current_form(lines)
    items: list[dict] = []
    skipped: Counter[str] = Counter()
    notes: list[str] = []
    failed: list[str] = []
    bills = _Bills()
    model: str | None = None
    instructions: str | None = None
    for number, line in enumerate(lines or [], 1):
        place = f"line {number}"
        kind = need(check(line, dict, place), "type", str, place)
        payload = need(line, "payload", dict, place)
        if kind == "response_item":
            items.append(_output(payload, failed) if "output" in payload else payload)
            continue
        if kind == "compacted":
            notes.append(_compacted(payload, number, items))
            continue
        skipped[kind] += 1
        if kind == "event_msg" and payload.get("type") == "token_count":
            bills.add(payload.get("info"), len(items))
        elif kind == "turn_context" and isinstance(payload.get("model"), str):
            model = payload["model"]
        elif kind == "session_meta":
            instructions = _instructions(payload) or instructions
    body: dict[str, Any] = {"model": model} if model else {}
    if instructions:
        body["instructions"] = instructions
    body["input"] = items
    conversation = responses.read(body)
    head = [f"Read from a Codex rollout: {count(len(items), 'input item')} from {count(len(lines or []), 'line')}; "
            "skipped (Codex's "
            f"own records, not sent to the model): {counted(skipped) or 'none'}."]
    if legacy:
        head.append("This is the older rollout form (a session header, bare Responses items, state lines): it "
                    "records no model and no reasoning items, so choose the model the session used.")
    if not instructions:
        head.append("The rollout holds no base instructions or tool definitions, so the request and its count "
                    "leave out the ones Codex sends.")
    if failed:
        head.append(f"Sent as their text: {count(len(failed), 'tool output')} Codex marked as failed "
                    "(success: false).")
    conversation = replace(conversation, source=NAME, notes=tuple(head + notes))
    return with_billed(conversation, bills.by_reply(conversation), "Codex",
                       "token_count: the call's input tokens, cached included")


class _Bills:
    """Codex's ``token_count`` events: the input tokens of each call, by how many input items the
    rollout held when the event came (it follows the reply it counts)."""

    def __init__(self) -> None:
        self.after: dict[int, int] = {}
        self.total = 0  # total_token_usage.input_tokens so far, for rollouts that record no last_token_usage

    def add(self, info: Any, items: int) -> None:
        if not isinstance(info, dict):
            return  # (a rate-limit update carries no usage)
        last, total = (info.get(key) if isinstance(info.get(key), dict) else {}
                       for key in ("last_token_usage", "total_token_usage"))
        tokens = last.get("input_tokens")
        running = total.get("input_tokens")
        if not _whole(tokens) and _whole(running):
            tokens = running - self.total
        if _whole(running):
            self.total = running
        if _whole(tokens) and tokens > 0:
            self.after.setdefault(items, tokens)

    def by_reply(self, conversation: Conversation) -> dict[int, int]:
        """Each bill at the input index of the reply it follows: the last turn start before it."""
        starts = [item.origin.index for item in (conversation.items[p] for p in turn_starts(conversation.items))
                  if item.origin is not None]
        found: dict[int, int] = {}
        for items, tokens in self.after.items():
            before = bisect_left(starts, items)  # the starts before the event: the last of them is its reply's
            if before:
                found.setdefault(starts[before - 1], tokens)
        return found


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _compacted(payload: dict, number: int, items: list[dict]) -> str:
    """Show Codex's own compaction: its summary as a user message where it happened."""
    message = payload.get("message")
    history = payload.get("replacement_history")
    kept = f"; Codex replaced its history with {count(len(history), 'item')}" if isinstance(history, list) else ""
    if isinstance(message, str) and message:
        items.append(_summary_item(message))
        return (f"Codex compacted its history at line {number}{kept}: its summary is the user message at "
                f"input[{len(items) - 1}]. Everything before it is shown too; Codex itself no longer sent it.")
    return f"Codex compacted its history at line {number}{kept} (no summary text recorded)."


READER = Reader(NAME, TITLE, looks_like, read)
