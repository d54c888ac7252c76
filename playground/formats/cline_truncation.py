"""Cline's own context truncation, reconstructed: which part of a task's history each request left out.

Cline (the VS Code extension, before its SDK) keeps the whole history in ``api_conversation_history.json``
but sends less once a request nears the window. The rule, as cline/cline writes it
(@ 9fd2b99be4, ``src/core/context/context-management/ContextManager.ts``, ``getNewContextMessagesAndMetadata``,
``getNextTruncationRange``, ``applyContextHistoryUpdates``; and ``context-window-utils.ts``,
``getContextWindowInfo``; moved to ``apps/vscode/`` at 791d2389 and removed with the SDK since):

- when the previous request's ``tokensIn + tokensOut + cacheWrites + cacheReads`` reaches ``maxAllowedSize``
  (the window less 27,000 for 64k, 30,000 for 128k, 40,000 for 200k, else ``max(window - 40,000, 0.8 × window)``),
  Cline deletes the range ``[2, end]`` of the history (inclusive): the first user and assistant messages are
  always kept, and from ``start`` (2, or just after the range already deleted) it removes
  ``floor((length - start) / 4) × 2`` messages (keep ``half``), or ``floor((length - start) × 3 / 4 / 2) × 2``
  (keep ``quarter``, when half the previous total is still over ``maxAllowedSize``), one fewer when the last
  would be a user message, where ``length`` counts the history up to the user message of the request being sent;
- condensing (the ``summarize_task`` / ``condense`` tools) cuts the same way, keeping ``none`` or ``lastTwo``
  of the rest;
- every later request sends messages 0 and 1, then the history after ``end``; the first assistant message's
  first text block is replaced by ``formatResponse.contextTruncationNotice()`` (quoted in ``NOTICE``), and
  ``tool_result`` blocks of the first message after the range are dropped (Cline writes its results as text
  blocks, which stay);
- the range lives in the task's state (``conversationHistoryDeletedRange``: ``taskHistory.json``'s
  ``HistoryItem``, and every ``ui_messages.json`` message created while it is in force), not in the API history.

Cline also rewrites repeated file reads before it truncates (``attemptFileReadOptimizationCore``: when that
saves 30 % it does not truncate); that edit is kept in ``context_history.json`` and is not reconstructed here,
so such a call's request is counted with the file reads it replaced.

Without a recorded range, each truncation is inferred from the bills (``infer``): a bill that falls and stays
down is a cut; of the ranges the rule could have deleted there (keep half, keep quarter, cumulative over the
cuts before), the one whose request best matches the bill is taken.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..conversation import Item, Message, ToolResult, falls

NOTICE = ("[NOTE] Some previous conversation history with the user has been removed to maintain optimal context "
          "window length. The initial user task has been retained for continuity, while intermediate conversation "
          "history has been removed. Keep this in mind as you continue assisting the user. Pay special attention "
          "to the user's latest messages.")
# what getNextTruncationRange keeps of the rest: half and quarter when a request nears the window, none and
# lastTwo when Cline condenses (SummarizeTaskHandler.ts, CondenseHandler.ts: the model's summary then stands
# for the rest, and the first user message becomes "[Continue assisting the user!]")
KEEPS = ("half", "quarter", "lastTwo", "none")
FILE_NOTICE = ("[[NOTE] This file read has been removed to save space in the context window. Refer to the latest "
               "file read for the most up to date version of this file.]")  # formatResponse.duplicateFileReadNotice()
_HEADER = re.compile(r"^\[([^\s]+) for '([^']+)'\] Result:")  # parseToolCallWithFormat
_FINAL = re.compile(r'(<final_file_content path="[^"]*">)[\s\S]*?(</final_file_content>)')
_MENTION = re.compile(r'<file_content path="([^"]*)">([\s\S]*?)</file_content>')
# A drop that is a cut, measured on real Cline tasks: a 221-call task through an OpenAI-compatible endpoint
# (128k window) falls 51 %, 37 %, 51 %, 32 %, 43 % and 87 % from about 98,000; a task on claude-opus-4-6
# (200k window), whose UI log records the ranges, falls 63 %, 20 %, 21 % and 58 % from 165,000-175,000 — a
# second cut keeps half of what the first left, so it can fall less than a quarter. 15 % and 8,000 tokens
# from 32,000 catch all of them (``conversation.falls``, which also asks that the fall stays down); the
# tasks that never reached their window (36 and 47 calls, growing to 84,000) have no drop of even 2 %.
DROP_SHARE = 0.15


@dataclass(frozen=True)
class Edit:
    """One of Cline's rewrites of a repeated file read: in the history message ``index``, ``search`` became
    ``replace`` (``applyFileReadContextHistoryUpdates``)."""

    index: int
    search: str
    replace: str


@dataclass(frozen=True)
class Cut:
    """One time Cline managed its context: the request whose reply starts at history index ``reply`` (its
    user message is ``reply - 1``) and every request after it sent messages 0 and 1, then the history after
    ``end`` (None: nothing deleted, the file reads alone were rewritten), with ``edits`` (every rewrite of a
    repeated file read in force from it on)."""

    reply: int
    end: int | None
    keep: str = ""  # one of KEEPS, or "files" (the file reads alone), when inferred; "" when recorded
    inferred: bool = False
    billed: tuple[int, int] | None = None  # the bills before and after, when inferred
    edits: tuple[Edit, ...] = ()


def next_range(length: int, end: int | None, keep: str) -> int:
    """``getNextTruncationRange``'s inclusive end for a history of ``length`` messages (its last the user
    message of the request being sent), after a range deleted up to ``end`` (None: nothing yet), where
    messages alternate user (even) and assistant (odd) as Cline writes them."""
    start = 2 if end is None else end + 1
    remove = {"none": max(length - start, 0), "lastTwo": max(length - start - 2, 0),
              "half": (length - start) // 4 * 2}.get(keep, (length - start) * 3 // 4 // 2 * 2)
    last = start + remove - 1
    return last - 1 if last % 2 == 0 else last  # the last removed must be an assistant message


def sent(reply: int, end: int | None) -> range | tuple[int, ...]:
    """The history indices the request whose reply starts at ``reply`` sent, with the range up to ``end``
    deleted (None: the whole history)."""
    if end is None or end < 2:
        return range(reply)
    return (*range(min(2, reply)), *range(end + 1, reply))


def file_reads(history: Mapping[int, Any], start: int, length: int, done: set[int]) -> list[Edit]:
    """``attemptFileReadOptimizationCore``'s rewrites (``getPossibleDuplicateFileReads``,
    ``applyFileReadContextHistoryUpdates``): over the user messages from ``start`` to ``length`` not already
    rewritten (``done``), every read of a file but the last — a ``read_file`` result, the
    ``<final_file_content>`` of a ``replace_in_file`` / ``write_to_file`` result (both in the message's first
    block), or a ``<file_content path>`` mention in its first three blocks — has its content replaced by
    ``formatResponse.duplicateFileReadNotice()``."""
    reads: dict[str, list[Edit]] = {}
    for index in range(start, length):
        message = history.get(index)
        if index in done or not isinstance(message, dict) or message.get("role") != "user" \
                or not isinstance(message.get("content"), list) or not message["content"]:
            continue
        texts = [_block_text(block) for block in message["content"][:3]]
        header = _HEADER.match(texts[0] or "")
        found = False
        if header and header.group(1) == "read_file" and len(texts[0] or "") > header.end():
            body = texts[0][header.end():].removeprefix("\n")  # type: ignore[index]
            if body:
                reads.setdefault(header.group(2), []).append(Edit(index, body, FILE_NOTICE))
            found = True
        elif header and header.group(1) in ("replace_in_file", "write_to_file"):
            final = _FINAL.search(texts[0] or "")
            if final:
                reads.setdefault(header.group(2), []).append(
                    Edit(index, final.group(0), f"{final.group(1)} {FILE_NOTICE} {final.group(2)}"))
                found = True
        if not found:
            for text in texts:
                mentions = list(_MENTION.finditer(text or ""))
                for mention in mentions:
                    reads.setdefault(mention.group(1), []).append(
                        Edit(index, mention.group(0), f'<file_content path="{mention.group(1)}">{FILE_NOTICE}'
                                                      "</file_content>"))
                if mentions:
                    break
    return [edit for edits in reads.values() for edit in edits[:-1]]


def _block_text(block: Any) -> str | None:
    """``getTextFromBlock``: a text block's text, or the first text inside a ``tool_result``."""
    if not isinstance(block, dict):
        return None
    if block.get("type") == "text" and isinstance(block.get("text"), str):
        return block["text"]
    content = block.get("content")
    if block.get("type") == "tool_result" and isinstance(content, list) and content and isinstance(content[0], dict):
        text = content[0].get("text")
        return text if isinstance(text, str) else None
    return None


def infer(bills: Sequence[tuple[int, int]], history: Mapping[int, Any], known: Sequence[Cut] = (),
          recorded: bool = False) -> tuple[Cut, ...]:
    """Every time Cline managed its context: the ``known`` cuts (ranges its task state records), and those
    found from ``bills`` (reply index, input tokens billed; in order) where ``history`` (index → message) says
    what each request held; ``recorded``: the UI log records every range in force, so a drop without a new
    range was the file reads' rewrite alone. Each event rewrites the repeated file reads first (Cline does,
    before it truncates).

    Characters are turned into tokens at the rate the bills themselves grow at before the first event (what a
    call adds is history the log holds, so the agent's system prompt and tools cancel), and each drop's
    candidates (the file reads alone; each keep of ``KEEPS`` after them) are compared by how far the bill
    moved: the candidate whose request moves by as much wins, and a drop no candidate explains better than
    nothing at all is left alone."""
    sizes = {index: _size(message) for index, message in history.items()}
    drops = {bills[index][0]: index for index in falls([tokens for _, tokens in bills], DROP_SHARE)}
    known_at = {cut.reply: cut for cut in known}
    events = sorted(set(drops) | set(known_at))
    if not events:
        return ()
    first = next((n for n, (reply, _) in enumerate(bills) if reply >= events[0]), len(bills))
    rate = _rate(bills[:first], sizes)
    cuts: list[Cut] = []
    end: int | None = None
    edits: tuple[Edit, ...] = ()
    for reply in events:
        rewritten = edits + tuple(file_reads(history, 2 if end is None else end + 1, reply,
                                             {edit.index for edit in edits}))
        if reply in known_at:
            cuts.append(replace(known_at[reply], edits=rewritten))
            end, edits = known_at[reply].end, rewritten
            continue
        number = drops[reply]
        (before, billed_before), billed = bills[number - 1], bills[number][1]
        start, moved = _chars(before, end, edits, sizes), billed - billed_before

        def miss(new_end: int | None, new_edits: tuple[Edit, ...], reply: int = reply, start: int = start,
                 moved: int = moved) -> float:
            """How far the bill's move is from the move this candidate makes, in tokens."""
            return abs((_chars(reply, new_end, new_edits, sizes) - start) / rate - moved)

        options: list[tuple[str, int | None]] = [("files", end)] if rewritten != edits else []
        if not recorded:
            options += [(keep, new_end) for keep in KEEPS if (new_end := next_range(reply, end, keep)) >= 2
                        and (end is None or new_end > end)]
        if not options:
            continue
        keep, new_end = min(options, key=lambda option: miss(option[1], rewritten))
        if miss(new_end, rewritten) < miss(end, edits):
            cuts.append(Cut(reply, new_end, keep, True, (billed_before, billed), rewritten))
            end, edits = new_end, rewritten
    return tuple(cuts)


def _size(message: Any) -> int:
    content = message.get("content") if isinstance(message, dict) else None
    return len(json.dumps(content, ensure_ascii=False))


def _chars(reply: int, end: int | None, edits: tuple[Edit, ...], sizes: Mapping[int, int]) -> int:
    """The characters of the request whose reply starts at ``reply``, after a range up to ``end`` and the
    ``edits``, as JSON counts them (the same measure as ``sizes``)."""
    indices = set(sent(reply, end))
    saved = sum(len(json.dumps(edit.search)) - len(json.dumps(edit.replace)) for edit in edits if edit.index in indices)
    return sum(sizes.get(index, 0) for index in indices) - saved


def _rate(bills: Sequence[tuple[int, int]], sizes: Mapping[int, int]) -> float:
    """Characters per billed token over the calls before the first drop (4 where they say nothing)."""
    if len(bills) >= 2:
        (first, low), (last, high) = bills[0], bills[-1]
        grown = sum(sizes.get(index, 0) for index in range(first, last))
        if high - low > 500 and grown > 0:
            return max(1.0, min(8.0, grown / (high - low)))
    return 4.0


def task_history_range(tasks: Any) -> tuple[int, int] | None:
    """``conversationHistoryDeletedRange`` of the task's ``HistoryItem`` in ``taskHistory.json`` (the only
    item, or the one range every item agrees on), where the exported folder has it."""
    items = tasks if isinstance(tasks, list) else [tasks] if isinstance(tasks, dict) else []
    ranges = {tuple(item["conversationHistoryDeletedRange"]) for item in items if isinstance(item, dict)
              and isinstance(item.get("conversationHistoryDeletedRange"), list)
              and len(item["conversationHistoryDeletedRange"]) == 2
              and all(isinstance(v, int) for v in item["conversationHistoryDeletedRange"])}
    return next(iter(ranges)) if len(ranges) == 1 else None  # type: ignore[return-value]


def edited(item: Item, search: str, replacement: str) -> Item | None:
    """``item`` with ``search`` in its text replaced, or None when its text does not hold it."""
    content = item.content if isinstance(item, Message | ToolResult) else None
    if isinstance(content, str) and search in content:
        return replace(item, content=content.replace(search, replacement, 1))
    if isinstance(content, tuple):
        for number, part in enumerate(content):
            if part.text is not None and search in part.text:
                parts = (*content[:number], replace(part, text=part.text.replace(search, replacement, 1)),
                         *content[number + 1:])
                return replace(item, content=parts)
    return None
