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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

NOTICE = ("[NOTE] Some previous conversation history with the user has been removed to maintain optimal context "
          "window length. The initial user task has been retained for continuity, while intermediate conversation "
          "history has been removed. Keep this in mind as you continue assisting the user. Pay special attention "
          "to the user's latest messages.")
# what getNextTruncationRange keeps of the rest: half and quarter when a request nears the window, none and
# lastTwo when Cline condenses (SummarizeTaskHandler.ts, CondenseHandler.ts: the model's summary then stands
# for the rest, and the first user message becomes "[Continue assisting the user!]")
KEEPS = ("half", "quarter", "lastTwo", "none")
# A drop that is a cut, measured on real Cline tasks: a 221-call task through an OpenAI-compatible endpoint
# (128k window) falls 51 %, 37 %, 51 %, 32 %, 43 % and 87 % from about 98,000; a task on claude-opus-4-6
# (200k window), whose UI log records the ranges, falls 63 %, 20 %, 21 % and 58 % from 165,000-175,000 — a
# second cut keeps half of what the first left, so it can fall less than a quarter. 15 % and 8,000 tokens
# from 32,000 catch all of them; the tasks that never reached their window (36 and 47 calls, growing to
# 84,000) have no drop of even 2 %.
DROP_SHARE = 0.15
DROP_TOKENS = 8_000
DROP_FROM = 32_000
STAYS = 0.95  # the bill after the drop must stay under this share of the bill before it (not a one-call dip)


@dataclass(frozen=True)
class Cut:
    """One truncation: the request whose reply starts at history index ``reply`` (its user message is
    ``reply - 1``) and every request after it sent messages 0 and 1, then the history after ``end``."""

    reply: int
    end: int
    keep: str = ""  # one of KEEPS when inferred; "" when the task's state records the range
    inferred: bool = False
    billed: tuple[int, int] | None = None  # the bills before and after, when inferred


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


def infer(bills: Sequence[tuple[int, int]], sizes: Mapping[int, int], known: Sequence[Cut] = ()) -> tuple[Cut, ...]:
    """Cuts found from ``bills`` (reply index, input tokens billed; in order) where the history's ``sizes``
    (index → characters) say what each request held; ``known`` cuts (recorded) are kept and not looked for.

    Characters are turned into tokens at the rate the bills themselves grow at before the first drop (what
    a call adds is history the log holds, so the agent's system prompt and tools cancel), and each drop's
    candidates are compared by how far the bill moved: the candidate whose request moves by as much wins,
    and a drop no cut explains better than no cut at all is left alone."""
    drops = [index for index in range(1, len(bills)) if _drop(bills, index)]
    if not drops:
        return tuple(known)
    rate = _rate(bills[:drops[0]], sizes)
    cuts = list(known)
    for index in drops:
        (before, billed_before), (reply, billed) = bills[index - 1], bills[index]
        if any(cut.reply == reply for cut in known):
            continue
        end = _end_at(cuts, before)
        moved = billed - billed_before
        best: tuple[float, str, int] | None = None
        for keep in KEEPS:
            new_end = next_range(reply, end, keep)
            if new_end < 2 or (end is not None and new_end <= end):
                continue
            change = (_chars(sent(reply, new_end), sizes) - _chars(sent(before, end), sizes)) / rate
            miss = abs(change - moved)
            if best is None or miss < best[0]:
                best = (miss, keep, new_end)
        none = abs((_chars(sent(reply, end), sizes) - _chars(sent(before, end), sizes)) / rate - moved)
        if best is not None and best[0] < none:
            cuts.append(Cut(reply, best[2], best[1], True, (billed_before, billed)))
            cuts.sort(key=lambda cut: cut.reply)
    return tuple(cuts)


def _drop(bills: Sequence[tuple[int, int]], index: int) -> bool:
    before, after = bills[index - 1][1], bills[index][1]
    later = bills[index + 1][1] if index + 1 < len(bills) else after
    return (before >= DROP_FROM and before - after >= DROP_TOKENS and after <= before * (1 - DROP_SHARE)
            and later < before * STAYS)


def _rate(bills: Sequence[tuple[int, int]], sizes: Mapping[int, int]) -> float:
    """Characters per billed token over the calls before the first drop (4 where they say nothing)."""
    if len(bills) >= 2:
        (first, low), (last, high) = bills[0], bills[-1]
        grown = _chars(range(first, last), sizes)
        if high - low > 500 and grown > 0:
            return max(1.0, min(8.0, grown / (high - low)))
    return 4.0


def _end_at(cuts: Sequence[Cut], reply: int) -> int | None:
    """The range in force for the request whose reply starts at ``reply``."""
    ends = [cut.end for cut in cuts if cut.reply <= reply]
    return ends[-1] if ends else None


def _chars(indices: range | tuple[int, ...], sizes: Mapping[int, int]) -> int:
    return sum(sizes.get(index, 0) for index in indices)
