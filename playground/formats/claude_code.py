"""Claude Code session logs (``~/.claude/projects/<project>/<session>.jsonl``), read as the
Anthropic Messages request they amount to.

One JSON object a line. ``user`` and ``assistant`` lines carry an Anthropic ``message``; a
streamed assistant turn is written one content block a line, every line with the same
``message.id``. Consecutive lines of one role become one message (a streamed turn's lines are
contiguous, and the API wants roles to alternate), and a block repeated under the same message id
is read once. ``tool_use`` / ``tool_result`` (with ``is_error``) and ``thinking`` blocks are kept
as they are. Sidechain lines (``isSidechain``: a sub-agent's own conversation) and every other
line type (``summary``, ``file-history-snapshot``, ``queue-operation``, ``system``…) are skipped
and counted in the notes; a ``compact_boundary`` (Claude Code compacting its own context) is
named there too, and recorded (``Conversation.compactions``): after it Claude Code sent its summary (the
``isCompactSummary`` user line that follows the boundary) and what came after, nothing before but the messages
the boundary's metadata names as preserved (``preservedMessages.uuids``, or the lines from
``preservedSegment.headUuid`` to ``tailUuid``, as later versions keep a recent segment). The model is the
assistant lines' ``message.model``. The log is a tree (``parentUuid``): lines on a branch the session left
(an earlier message edited, ``/rewind``) are skipped and counted, so the conversation is what Claude Code
went on sending (``_left_behind``). A sub-agent's own log (``subagents/agent-*.jsonl``), every line of which
is a sidechain, is read as that sub-agent's conversation.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from typing import Any

from ..conversation import AgentCompaction, Conversation, Origin
from ..words import plural
from . import anthropic
from ._reader import Reader, counted, log_lines, with_billed
from ._wire import check, need

NAME = "claude-code"
TITLE = "Claude Code session log (JSONL)"
_ROLES = ("user", "assistant")
_SYNTHETIC = "<synthetic>"  # the model name Claude Code gives messages it made up itself (API errors…)


def looks_like(data: Any) -> int:
    lines = log_lines(data) or []
    records = [line for line in lines if isinstance(line, dict) and isinstance(line.get("type"), str)]
    turns = [line for line in records if line["type"] in _ROLES]
    shaped = sum(isinstance(line.get("message"), dict) and ("uuid" in line or "sessionId" in line) for line in turns)
    if not turns:
        return 0
    if len(records) == len(lines) and shaped == len(turns):
        return 6
    # most of it is one: a log with a few damaged lines is read as one, so the error names the line, not
    # every format there is
    return 1 if shaped >= 0.75 * len(turns) and len(records) >= 0.75 * len(lines) else 0


class _Log:
    """The messages built so far, and what was skipped on the way."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self.seen: set[tuple[str, str]] = set()
        self.skipped: Counter[str] = Counter()
        self.models: list[str] = []
        self.call_ids: set[str] = set()
        self.orphans: list[str] = []
        self.boundaries: list[str] = []
        self.billed: dict[int, int] = {}  # id() of a message dict in ``messages`` -> input tokens its reply billed
        self.replies: set[Any] = set()  # the message ids of replies whose bill was seen
        self.merged = 0  # replies with a bill that open no message (another reply's turn goes on)
        self.pending: tuple[dict, int] | None = None  # a compact boundary whose next conversation line is not read yet
        self.compacted: list[tuple[dict, int, dict, bool]] = []  # (its metadata, line, first block after, a summary?)
        self.lines = 0
        self.by_uuid: dict[str, list[dict]] = {}  # each conversation line's kept blocks, in file order
        self.subagent = False  # every line a sidechain: a sub-agent's own log
        self.agent = ""  # its agentId (``acompact-…``: the call that wrote Claude Code's own compaction)

    def add(self, line: dict, place: str) -> None:
        message = need(line, "message", dict, place)
        role = need(message, "role", str, f"{place}.message")
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else check(
            content, list, f"{place}.message.content")
        model = message.get("model")
        if role == "assistant" and isinstance(model, str) and model != _SYNTHETIC:
            self.models.append(model)
        billed = _billed(message.get("usage")) if role == "assistant" else None
        if not self.messages or self.messages[-1]["role"] != role:
            self.messages.append({"role": role, "content": []})
            if billed is not None:  # a reply's first line opens its message: the bill is that call's
                self.billed[id(self.messages[-1])] = billed
                self.replies.add(message.get("id"))
        elif billed is not None and message.get("id") not in self.replies:  # a reply merged into the one before
            self.replies.add(message.get("id"))
            self.merged += 1
        target = self.messages[-1]["content"]
        kept = len(target)
        for position, block in enumerate(blocks):
            self._block(check(block, dict, f"{place}.message.content[{position}]"), message.get("id"), target)
        self.lines += 1
        if isinstance(line.get("uuid"), str):
            self.by_uuid.setdefault(line["uuid"], []).extend(target[kept:])
        if self.pending is not None and len(target) > kept:  # the first line after a boundary: Claude Code resumed here
            meta, number = self.pending
            self.compacted.append((meta, number, target[kept], line.get("isCompactSummary") is True))
            self.pending = None

    def _block(self, block: dict, message_id: Any, target: list) -> None:
        if isinstance(message_id, str):
            key = (message_id, json.dumps(block, sort_keys=True))
            if key in self.seen:
                self.skipped["repeated block"] += 1
                return
            self.seen.add(key)
        if block.get("type") == "text" and isinstance(block.get("text"), str) and not block["text"].strip():
            self.skipped["blank text block (the API refuses them)"] += 1  # a reply's "\n\n" before its calls
            return
        if block.get("type") == "tool_use":
            self.call_ids.add(str(block.get("id")))
        elif block.get("type") == "tool_result" and str(block.get("tool_use_id")) not in self.call_ids:
            self.orphans.append(str(block.get("tool_use_id")))
            return
        target.append(block)

    @property
    def compacting(self) -> bool:
        """A log of the call that wrote Claude Code's own compaction, not of a Task sub-agent."""
        return self.subagent and self.agent.startswith("acompact")

    def notes(self, total: int, messages: int) -> tuple[str, ...]:
        notes = [f"Read from a Claude Code session log: {self.lines} of {total} lines are the conversation, joined "
                 f"into {messages} Anthropic messages (consecutive lines of one role are one message). "
                 "The log holds no system prompt or tool definitions, so the request and its count leave out "
                 "the ones Claude Code sends."]
        if self.compacting:
            notes.append(f"Every line is a sidechain of agent '{self.agent}': this is the call Claude Code made to "
                         "write its own compaction summary (subagents/agent-acompact-*.jsonl). It holds the last "
                         "messages of that call only; the conversation summarized is in the session's own log. "
                         "So its bills (that whole context) are not set on these calls.")
        elif self.subagent:
            notes.append("Every line is a sidechain: this is a sub-agent's own log (Claude Code's Task tool), read as "
                         "the conversation that sub-agent had; the session that started it is a log of its own.")
        if self.skipped:
            notes.append(f"Skipped (not part of the conversation, or read once already): {counted(self.skipped)}.")
        notes.extend(self.boundaries)
        if self.orphans:
            notes.append(f"Dropped, as their tool_use is not in this log: {plural(len(self.orphans), 'tool result')}, "
                         f"{', '.join(self.orphans[:5])}{'…' if len(self.orphans) > 5 else ''}.")
        return tuple(notes)


def _billed(usage: Any) -> int | None:
    """The input tokens an assistant line's ``usage`` says its request billed (Anthropic's: input
    plus cache writes plus cache reads), or None when it records none."""
    if not isinstance(usage, dict):
        return None
    parts = [usage.get(key) for key in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")]
    if not isinstance(parts[0], int) or isinstance(parts[0], bool):
        return None
    return sum(part for part in parts if isinstance(part, int) and not isinstance(part, bool))


def _meta(line: dict) -> dict:
    return line.get("compactMetadata") if isinstance(line.get("compactMetadata"), dict) else {}


def _boundary(line: dict, number: int) -> str:
    meta = _meta(line)
    before = meta.get("preTokens")
    size = f", {before:,} tokens before" if isinstance(before, int) else ""
    return (f"Claude Code compacted its context at line {number} (trigger {meta.get('trigger', 'unknown')}{size}). "
            "The log holds everything before it; after that point Claude Code itself sent only its summary (the next "
            "user message) and what followed, which is the run as it ran.")


def _alternating(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages emptied by dropped blocks removed, and the neighbours that leaves with one role merged."""
    merged: list[dict[str, Any]] = []
    for message in messages:
        if not message["content"]:
            continue
        if merged and merged[-1]["role"] == message["role"]:
            merged[-1]["content"].extend(message["content"])
        else:
            merged.append(message)
    return merged


def _blocks(line: dict) -> list[dict]:
    message = line.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return [block for block in content if isinstance(block, dict)] if isinstance(content, list) else []


def _reply_id(line: dict) -> Any:
    message = line.get("message")
    return message.get("id") if line.get("type") == "assistant" and isinstance(message, dict) else None


def _talk(lines: list[Any], sidechains: bool) -> list[int]:
    """The conversation lines: ``user`` and ``assistant`` lines of the main chain (or, in a sub-agent's
    own log, of its chain)."""
    return [n for n, line in enumerate(lines) if isinstance(line, dict) and line.get("type") in _ROLES
            and (line.get("isSidechain") is True) == sidechains]


def _left_behind(lines: list[Any], talk: list[int]) -> set[int]:
    """The conversation lines on a branch the session left. The log is a tree: each line names its
    parent (``parentUuid``; across a compaction, ``logicalParentUuid``), and going back to edit an
    earlier message (double Esc, ``/rewind``) starts a new branch from there, the old one staying in
    the file. What Claude Code went on sending is the path from the newest message back to the root;
    a line after the path's start but off it was left behind. Kept all the same: lines before a break
    in the path (a parent the file lacks: nothing says they were left), a result answering a call on
    the path, and a line of a reply (``message.id``) on the path with the results of its calls
    (Claude Code 2.1 writes each parallel call on a line of its own, side by side, and hangs each
    result off its own call's line: only one of them is on the path)."""
    uuid_at = {line["uuid"]: n for n, line in enumerate(lines) if isinstance(line, dict)
               and isinstance(line.get("uuid"), str)}
    path: set[int] = set()
    at = talk[-1] if talk else None
    while at is not None and at not in path:
        path.add(at)
        parent = lines[at].get("parentUuid") or lines[at].get("logicalParentUuid")
        at = uuid_at.get(parent) if isinstance(parent, str) else None
    if not path:
        return set()
    replies = {_reply_id(lines[n]) for n in path} - {None}
    sent = path | {n for n in talk if _reply_id(lines[n]) in replies}  # a parallel call's line is its reply's
    calls = {block.get("id") for n in sent for block in _blocks(lines[n]) if block.get("type") == "tool_use"}

    def answers_the_path(line: dict) -> bool:
        blocks = _blocks(line)
        return (line.get("type") == "user" and bool(blocks)
                and all(block.get("type") == "tool_result" and block.get("tool_use_id") in calls for block in blocks))

    start = min(path)
    return {n for n in talk if n > start and n not in sent and not answers_the_path(lines[n])}


def read(data: Any) -> Conversation:
    lines = log_lines(data)
    if lines is None:
        check(data, list, "document")
    log = _Log()
    # a sub-agent's own log (subagents/agent-*.jsonl) is all sidechain: there, the sidechain is the conversation
    main, side = _talk(lines or [], sidechains=False), _talk(lines or [], sidechains=True)
    subagent = log.subagent = not main and bool(side)
    if subagent:
        log.agent = str(next((line.get("agentId") for line in lines or [] if isinstance(line, dict)
                              and isinstance(line.get("agentId"), str)), ""))
    left = _left_behind(lines or [], side if subagent else main)
    for number, line in enumerate(lines or [], 1):
        place = f"line {number}"
        check(line, dict, place)
        kind = line.get("type")
        if number - 1 in left:
            log.skipped["on a branch the session left (an earlier message edited or rewound)"] += 1
        elif kind not in _ROLES:
            log.skipped[str(kind)] += 1
            if line.get("subtype") == "compact_boundary":
                log.boundaries.append(_boundary(line, number))
                log.pending = (_meta(line), number)
        elif line.get("isSidechain") is True and not subagent:
            log.skipped["sidechain (a sub-agent's own conversation)"] += 1
        else:
            log.add(line, place)
    messages = _alternating(log.messages)
    body: dict[str, Any] = {"messages": messages}
    if log.models:
        body = {"model": Counter(log.models).most_common(1)[0][0], **body}
    conversation = anthropic.read(body)
    conversation = replace(conversation, source=NAME, notes=log.notes(len(lines or []), len(messages)),
                           compactions=_compactions(log, messages, conversation))
    index = {id(message): position for position, message in enumerate(messages)}  # merged-away messages are absent
    billed = {index[key]: tokens for key, tokens in log.billed.items() if key in index and not log.compacting}
    return with_billed(conversation, billed, "Claude Code", "usage: input + cache writes + cache reads", log.merged)


def _compactions(log: _Log, messages: list[dict[str, Any]], conversation: Conversation) -> tuple[AgentCompaction, ...]:
    """Each boundary as the item Claude Code resumed from: the first block of the line after it (its summary)."""
    if not log.compacted:
        return ()
    block_at = {id(block): Origin(index, position) for index, message in enumerate(messages)
                for position, block in enumerate(message["content"])}
    position_of = {item.origin: position for position, item in enumerate(conversation.items)}
    found = []
    for meta, number, block, summary in log.compacted:
        position = position_of.get(block_at.get(id(block)))
        if position is not None:
            kept = [position_of.get(block_at.get(id(b))) for uuid in _preserved(meta, list(log.by_uuid))
                    for b in log.by_uuid.get(uuid, [])]
            before = meta.get("preTokens")
            trigger = meta.get("trigger")
            found.append(AgentCompaction(position, kept=tuple(p for p in kept if p is not None and p < position),
                                         summary=summary, tokens_before=before if isinstance(before, int) else None,
                                         trigger=trigger if isinstance(trigger, str) else None,
                                         where=f"line {number}", log=conversation.items))
    return tuple(found)


def _preserved(meta: dict, order: list[str]) -> list[str]:
    """The lines a boundary keeps verbatim: ``preservedMessages.uuids``, else the lines from the
    ``preservedSegment``'s head to its tail (file order); none in the versions that keep only the summary."""
    listed = meta.get("preservedMessages")
    uuids = listed.get("uuids") if isinstance(listed, dict) else None
    if isinstance(uuids, list):
        return [uuid for uuid in uuids if isinstance(uuid, str)]
    segment = meta.get("preservedSegment")
    head, tail = (segment.get("headUuid"), segment.get("tailUuid")) if isinstance(segment, dict) else (None, None)
    if head in order and tail in order and order.index(head) <= order.index(tail):
        return order[order.index(head):order.index(tail) + 1]
    return []


READER = Reader(NAME, TITLE, looks_like, read)
