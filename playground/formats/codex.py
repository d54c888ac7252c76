"""Codex CLI rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``), read as the OpenAI
Responses request they amount to.

Format (openai/codex, ``codex-rs/protocol/src/protocol.rs`` ``RolloutLine`` / ``RolloutItem`` and
``codex-rs/protocol/src/models.rs`` ``ResponseItem``): one JSON object a line,
``{"timestamp", "type", "payload"}``. ``response_item`` payloads are Responses items (message,
reasoning, function_call / function_call_output, custom_tool_call / custom_tool_call_output,
local_shell_call, web_search_call…) and become the request's ``input`` in order, but for
``ghost_snapshot`` (the git snapshot Codex takes for undo, never sent: ``is_api_message`` in
``codex-rs/core/src/conversation_history.rs``), skipped and counted. ``turn_context``
gives the model; ``session_meta``, ``turn_context`` and ``event_msg`` lines are skipped and counted in
the notes. A ``compacted`` line is Codex compacting its own history: its summary text becomes a user
message at that place (Codex's own later requests carried it that way) and a note names the line and
the item, so the person sees where Codex cut. What Codex sent after it is recorded too
(``Conversation.compactions``), as Codex rebuilds its history from a rollout
(``codex-rs/core/src/codex/rollout_reconstruction.rs``): its ``replacement_history`` when the line has one,
else (``codex-rs/core/src/compact.rs``, ``build_compacted_history``) the initial context, the user messages
newest first up to 20,000 tokens (Codex's own estimate, 4 bytes a token; the one that overflows cut), then the
summary. A ``thread_rolled_back`` event (the user went back to edit an earlier message) takes back the
newest ``num_turns`` user turns and everything after them, as Codex drops them from the history it rebuilds
(``drop_last_n_user_turns``): they leave the input too, with their bills, and a note says so.

The older rollout form (``codex-rs/core/src/rollout.rs`` before ``RolloutLine``, e.g. openai/codex @
89a151f5) is read too: a first line ``SessionMeta {id, timestamp, instructions?, git?}``, then each
``ResponseItem`` bare (message, function_call, function_call_output, local_shell_call) and
``{"record_type": "state", ...}`` snapshot lines; it records no model. Its lines are read as the
current form's ``session_meta``, ``response_item`` and (skipped) ``state`` lines.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import Counter
from dataclasses import dataclass, replace
from typing import Any

from ..conversation import AgentCompaction, Conversation, Item, Message, content_text, turn_starts
from ..errors import InputError
from ..words import plural
from . import responses
from ._reader import Reader, counted, log_lines, with_billed
from ._wire import check, need

NAME = "codex"
GHOST = "ghost_snapshot"  # a ResponseItem Codex records for /undo and never sends
TITLE = "Codex CLI rollout (JSONL)"
_LINE_TYPES = ("session_meta", "response_item", "compacted", "turn_context", "event_msg")
USER_MESSAGE_BUDGET = 20_000  # COMPACT_USER_MESSAGE_MAX_TOKENS, codex-rs/core/src/compact.rs
_BYTES_PER_TOKEN = 4  # Codex's approx_token_count (codex-rs/core/src/truncate.rs)
# user messages Codex writes itself (codex-rs/core/src/event_mapping.rs, user_instructions.rs): the initial
# context it rebuilds after compacting, never counted among the user's messages
_CONTEXT_PREFIXES = ("<environment_context>", "<user_instructions>", "# agents.md instructions")
# Codex's default model (``OPENAI_DEFAULT_MODEL``, codex-rs/core/src/config.rs: "gpt-5" @ ff411541b8f9; "gpt-5-codex",
# "gpt-5" on Windows, in later versions), from the day the openai/codex pull request that set it was merged:
# #972 (codex-mini-latest), #1135 (back to o4-mini), #1164 (codex-mini-latest again), gpt-5 with its release
# (#2199: "gpt-5 has replaced codex-mini-latest as the default"), #4076 (gpt-5-codex), gpt-5.1-codex with Codex
# 0.58 (#6922, "Keep gpt-5.1-codex the default"). The TypeScript CLI before them defaulted to o4-mini (#12, #39).
DEFAULT_MODELS = (("2025-04-16", "o4-mini"), ("2025-05-16", "codex-mini-latest"), ("2025-05-27", "o4-mini"),
                  ("2025-05-29", "codex-mini-latest"), ("2025-08-07", "gpt-5"), ("2025-09-23", "gpt-5-codex"),
                  ("2025-11-13", "gpt-5.1-codex"))
_WINDOWS_UNTIL = "2025-11-13"  # from gpt-5-codex on, Windows kept gpt-5 (#[cfg(target_os = "windows")])
# the model Codex's own base instructions name ("You are Codex, based on GPT-5. You are running as a coding agent…")
_BASED_ON = re.compile(r"\bbased on (GPT-\d+(?:\.\d+)?(?:-[A-Za-z]+)*)")


@dataclass(frozen=True)
class _Compacted:
    """A ``compacted`` line: where the log resumed in the input, and its replacement history if any."""

    number: int
    resume: int  # the input item after it (after its summary, when it has a replacement history)
    summary: bool  # whether input[resume] is the summary item this reader made
    replacement: list[Any] | None


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
    head, rest = lines[0], lines[1:]  # a head alone is no rollout: one OpenHands event has id and timestamp too
    return (bool(rest) and isinstance(head, dict) and isinstance(head.get("id"), str) and "timestamp" in head
            and "type" not in head and "payload" not in head and "kind" not in head
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
    compacted: list[_Compacted] = []
    model: str | None = None
    instructions: str | None = None
    meta: dict[str, Any] = {}
    for number, line in enumerate(lines or [], 1):
        place = f"line {number}"
        kind = need(check(line, dict, place), "type", str, place)
        payload = need(line, "payload", dict, place)
        if kind == "response_item":
            if payload.get("type") == GHOST:  # counted among the skipped records, never sent
                skipped[GHOST] += 1
            else:
                items.append(_output(payload, failed) if "output" in payload else payload)
            continue
        if kind == "compacted":
            notes.append(_compacted(payload, number, items, compacted))
            continue
        if kind == "event_msg" and payload.get("type") == "thread_rolled_back":
            notes.append(_rolled_back(payload.get("num_turns"), number, items, compacted, bills))
            continue
        skipped[kind] += 1
        if kind == "event_msg" and payload.get("type") == "token_count":
            bills.add(payload.get("info"), len(items))
        elif kind == "turn_context" and isinstance(payload.get("model"), str):
            model = payload["model"]
        elif kind == "session_meta":
            instructions = _instructions(payload) or instructions
            meta = meta or {"timestamp": line.get("timestamp"), **payload}
    default = None if model else default_model(meta, instructions)
    model = model or (default[0] if default else None)
    body: dict[str, Any] = {"model": model} if model else {}
    if instructions:
        body["instructions"] = instructions
    body["input"] = items
    conversation = responses.read(body)
    head = _head(items, len(lines or []), skipped, legacy=legacy, instructions=bool(instructions), failed=len(failed))
    if not body.get("model") or default:
        head.append(default[1] if default else "The rollout names no model, and no date or instructions to find "
                    "Codex's default by: it is counted and priced as the OpenAI Responses format's default here, "
                    "so choose the model the session used.")
    agent, unread = _agent_compactions(conversation.items, compacted)
    conversation = replace(conversation, source=NAME, notes=tuple(head + notes + unread), compactions=agent)
    return with_billed(conversation, bills.by_reply(conversation), "Codex",
                       "token_count: the call's input tokens, cached included")


def default_model(meta: dict[str, Any], instructions: str | None) -> tuple[str, str] | None:
    """The model a rollout that names none ran on, and a note saying how it was found: the one its base
    instructions name, or Codex's default on the day the session started (``DEFAULT_MODELS``); None
    where the rollout says neither."""
    stamp = str(meta.get("timestamp") or "")[:10]
    version = f", Codex {meta['cli_version']}" if isinstance(meta.get("cli_version"), str) else ""
    dated = [name for day, name in DEFAULT_MODELS if day <= stamp] if stamp[:2] == "20" else []
    windows = isinstance(meta.get("cwd"), str) and re.match(r"^[A-Za-z]:\\", meta["cwd"]) is not None
    by_date = "gpt-5" if dated and windows and DEFAULT_MODELS[-2][0] <= stamp < _WINDOWS_UNTIL else (
        dated[-1] if dated else None)
    found = _BASED_ON.search(instructions or "")
    named = found.group(1).lower() if found else None
    if named and not (by_date or "").startswith(named):
        return named, (f"The rollout names no model; its base instructions say Codex is 'based on {found.group(1)}', "
                       f"so it is counted and priced as {named} — choose another if the session used one.")
    if by_date is None:
        return None
    later = " or a later one" if by_date == DEFAULT_MODELS[-1][1] else ""
    return by_date, (f"The rollout names no model: counted and priced as {by_date}, Codex's default model when the "
                     f"session started ({stamp}{version}; its source's OPENAI_DEFAULT_MODEL{later}) — choose the "
                     "model the session used if it set another.")


def _head(items: list[dict], lines: int, skipped: Counter[str], *, legacy: bool, instructions: bool,
          failed: int) -> list[str]:
    """The notes that open a rollout's: what was read, and what the log cannot say."""
    head = [f"Read from a Codex rollout: {plural(len(items), 'input item')} from {plural(lines, 'line')}; skipped "
            f"(Codex's own records, not sent to the model): {counted(skipped) or 'none'}."]
    if legacy:
        reasoning = "" if any(item.get("type") == "reasoning" for item in items) else " and no reasoning items"
        head.append("This is the older rollout form (a session header, bare Responses items, state lines): it "
                    f"records no model{reasoning}.")
    if not instructions:
        head.append("The rollout holds no base instructions or tool definitions, so the request and its count "
                    "leave out the ones Codex sends.")
    if failed:
        head.append(f"Sent as their text: {plural(failed, 'tool output')} Codex marked as failed (success: false).")
    return head


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

    def take_back(self, items: int) -> None:
        """Forget the bills of calls after the first ``items`` input items (a rollback took them back)."""
        self.after = {at: tokens for at, tokens in self.after.items() if at <= items}

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


def _starts_user_turn(item: dict) -> bool:
    """A message the user wrote, not one Codex writes itself (its initial context): where a turn
    begins that a rollback can take back."""
    if item.get("role") != "user" or item.get("type", "message") != "message":
        return False
    content = item.get("content")
    parts = content if isinstance(content, list) else [{"text": content}]
    text = "".join(part.get("text") or "" for part in parts if isinstance(part, dict) and isinstance(
        part.get("text"), str | None))
    return not text.lstrip().lower().startswith(_CONTEXT_PREFIXES)


def _rolled_back(turns: Any, number: int, items: list[dict], compacted: list[_Compacted], bills: _Bills) -> str:
    """Codex taking back its newest user turns (the user went back to edit an earlier message,
    ``thread_rolled_back``): each of them and all that followed leave its history, as Codex drops them
    when it rebuilds the history (``drop_last_n_user_turns``), so they leave the input too."""
    if not _whole(turns) or turns <= 0:
        return f"Line {number} rolls back a number of turns that is not a whole number above 0 ({turns!r}): ignored."
    summaries = {record.resume for record in compacted if record.summary}
    starts = [p for p, item in enumerate(items) if p not in summaries and _starts_user_turn(item)]
    if not starts:
        return f"Codex rolled back {plural(turns, 'turn')} at line {number}, but no turn of the user's came before it."
    cut = starts[-min(turns, len(starts))]
    dropped = len(items) - cut
    del items[cut:]
    compacted[:] = [record for record in compacted if record.resume <= cut]
    bills.take_back(cut)
    return (f"Codex rolled back {plural(turns, 'turn')} at line {number} (the user went back to an earlier message): "
            f"the {plural(dropped, 'input item')} from input[{cut}] on are left out, as Codex's later requests "
            "left them out.")


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _compacted(payload: dict, number: int, items: list[dict], compacted: list[_Compacted]) -> str:
    """Show Codex's own compaction: its summary as a user message where it happened."""
    message = payload.get("message")
    history = payload.get("replacement_history")
    replacement = history if isinstance(history, list) else None
    kept = f"; Codex replaced its history with {plural(len(history), 'item')}" if replacement is not None else ""
    if isinstance(message, str) and message:
        items.append(_summary_item(message))
        # a replacement history holds the summary itself: the log resumes after the item shown for it
        compacted.append(_Compacted(number, len(items) - (replacement is None), replacement is None, replacement))
        return (f"Codex compacted its history at line {number}{kept}: its summary is the user message at "
                f"input[{len(items) - 1}]. Everything before it is shown too; Codex itself no longer sent it.")
    compacted.append(_Compacted(number, len(items), False, replacement))
    return f"Codex compacted its history at line {number}{kept} (no summary text recorded)."


def _tokens(text: str) -> int:
    return -(-len(text.encode("utf-8")) // _BYTES_PER_TOKEN)


def _is_context(item: Item) -> bool:
    """An instruction or a user message Codex wrote itself (its initial context), not the user's words."""
    if not isinstance(item, Message) or item.role not in ("user", "developer", "system"):
        return False
    return item.role != "user" or content_text(item.content).lstrip().lower().startswith(_CONTEXT_PREFIXES)


def _user_messages(history: list[Item], summaries: set[int]) -> list[Item]:
    """The user messages Codex keeps beside its summary: the newest first up to 20,000 of its tokens, the
    one that overflows cut to what is left (``build_compacted_history_with_limit``); earlier summaries and
    Codex's own context messages are no user message (``collect_user_messages``)."""
    users = [item for item in history if isinstance(item, Message) and item.role == "user" and not _is_context(item)
             and id(item) not in summaries and content_text(item.content)]
    selected: list[Item] = []
    room = USER_MESSAGE_BUDGET
    for message in reversed(users):
        if room <= 0:
            break
        text = content_text(message.content)
        if _tokens(text) <= room:
            selected.insert(0, message)
            room -= _tokens(text)
        else:
            cut = text.encode("utf-8")[:room * _BYTES_PER_TOKEN].decode("utf-8", "ignore")
            selected.insert(0, Message(role="user", content=f"{cut}…[{_tokens(text) - room:,} tokens truncated]"))
            break
    return selected


def _agent_compactions(items: tuple[Item, ...], compacted: list[_Compacted]
                       ) -> tuple[tuple[AgentCompaction, ...], list[str]]:
    """What Codex sent after each compaction, by replaying its history as it rebuilds it from a rollout."""
    position = {id(item): p for p, item in enumerate(items)}
    at = {record.resume: record for record in compacted}
    history: list[Item] = []
    summaries: set[int] = set()
    found: list[AgentCompaction] = []
    unread: list[str] = []
    for p in range(len(items) + 1):
        record = at.get(p)
        if record is not None:
            sent, note = _sent_after(record, history, summaries, items)
            if note:
                unread.append(note)
            found.append(AgentCompaction(p, kept=tuple(position[id(i)] for i in sent if id(i) in position),
                                         added=tuple(i for i in sent if id(i) not in position), summary=record.summary,
                                         where=f"line {record.number}", log=items))
            history = list(sent)
            if record.summary:
                summaries.add(id(items[p]))
        if p < len(items):
            history.append(items[p])
    return tuple(found), unread


def _sent_after(record: _Compacted, history: list[Item], summaries: set[int], items: tuple[Item, ...]
                ) -> tuple[list[Item], str]:
    """What Codex's history held after one compaction, ahead of the items the log goes on with."""
    if record.replacement is not None:
        try:
            return list(responses.read({"input": record.replacement}).items), ""
        except InputError as exc:
            return [], (f"Codex's replacement history at line {record.number} could not be read ({exc}): after it, "
                        "the run as it ran sends only what the log goes on with.")
    kept = [item for item in history if _is_context(item)] + _user_messages(history, summaries)
    if not record.summary:  # build_compacted_history sends a summary message whatever the line recorded
        kept.append(Message(role="user", content="(no summary available)"))
    return kept, ""


READER = Reader(NAME, TITLE, looks_like, read)
