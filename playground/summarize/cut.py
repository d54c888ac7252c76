"""Where summarization cuts: the head that always stays (up to the first user message), the
newest ``keep_steps`` assistant turns with their results, and never a call separated from its
result. Found step by step (``cut_steps``) so the page's step-through and the summarizer walk
the same path and cannot drift apart."""

from __future__ import annotations

import operator
from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import compress, count

from .. import words
from ..conversation import (
    Item,
    Message,
    ToolCall,
    ToolResult,
    content_text,
    is_instruction,
    links,
    role_of,
    shared,
    turn_end,
    turn_starts,
)

MARKER = "[Summary of earlier conversation"


def is_summary(item: Item) -> bool:
    return isinstance(item, Message) and item.role == "user" and content_text(item.content).startswith(MARKER)


@dataclass(frozen=True)
class CutStep:
    """One step of finding the span, for a step-through: where the cut stands after it.

    ``kind`` is ``head`` (the head that always stays), ``cut`` (the first cut, before the newest
    kept steps), ``move`` (the cut moved back: the call at ``call`` would have been separated
    from its result at ``result``), ``system`` (the span starts after a system message),
    ``span`` (the final span) or ``nothing`` (nothing to summarize; ``detail`` says why).
    """

    kind: str
    start: int | None  # the span's first item, once known
    end: int | None  # the cut: items from here on are kept
    kept_steps: tuple[int, ...] = ()  # where each kept step (assistant turn) begins
    call: int | None = None
    result: int | None = None
    detail: str = ""

    @property
    def span(self) -> tuple[int, int] | None:
        return (self.start, self.end) if self.kind == "span" else None  # type: ignore[return-value]


def _cut(items: tuple[Item, ...], keep_steps: int) -> Iterator[CutStep]:
    """The cut, step by step; ``span`` is this run to the end, so a step-through cannot drift."""
    first_user = next((p for p, item in enumerate(items) if role_of(item) == "user" and not is_summary(item)), None)
    if first_user is None:
        yield CutStep("nothing", None, None, detail="no user message: the head that must stay has no end")
        return
    start = first_user + 1
    yield CutStep("head", start, None, detail=f"items 0–{first_user} stay verbatim: up to the first user message")
    starts = [p for p in turn_starts(items) if p > first_user]
    if len(starts) <= keep_steps:
        yield CutStep("nothing", start, None, tuple(starts),
                      detail=f"fewer than {keep_steps + 1} assistant turns after the first user message")
        return
    if keep_steps:
        end = starts[len(starts) - keep_steps]
        detail = f"the cut starts at item {end}, before the newest {words.plural(keep_steps, 'step')}"
    else:  # no step kept, but never what the model has not read: the cut stays after its last turn
        end = turn_end(items, starts[-1])
        detail = (f"the cut starts at item {end}, after the last assistant turn: what follows it the model has not "
                  "read yet" if end < len(items) else "the cut is at the end, after the last assistant turn")
    yield CutStep("cut", start, end, tuple(p for p in starts if p >= end), detail=detail)
    answers = links(items)
    moved = True
    while moved:  # a call before the cut whose result is after it: cut before that call's turn
        moved = False
        for result, call in answers.items():
            if call < end <= result:
                if (back := max((s for s in starts if s <= call), default=first_user + 1)) == end:
                    yield CutStep("nothing", start, end, call=call, result=result,
                                  detail=f"the call at item {call}, in the head that stays, is answered at item "
                                         f"{result}: no cut after the head keeps them together")
                    return
                end, moved = back, True
                yield CutStep("move", start, end, tuple(p for p in starts if p >= end), call, result,
                              f"the call at item {call} would be separated from its result at item {result}: "
                              f"the cut moves back to item {end}, where that call's turn begins")
    kept = tuple(p for p in starts if p >= end)
    for p in range(start, end):  # system messages stay verbatim: the span begins after the last one
        if is_instruction(items[p]):
            start = p + 1
            yield CutStep("system", start, end, kept,
                          detail=f"item {p} is a {role_of(items[p])} message: it stays, the span starts after it")
    if end - start <= 0 or (end - start == 1 and is_summary(items[start])):
        why = ("nothing is left between the head and the kept steps" if end - start <= 0
               else "the span would be only the earlier summary")
        yield CutStep("nothing", start, end, kept, detail=why)
        return
    yield CutStep("span", start, end, kept,
                  detail=f"items {start}–{end - 1} are summarized; {words.plural(len(kept), 'step')} from item {end} "
                         "on stay verbatim")


def cut_steps(items: tuple[Item, ...], keep_steps: int) -> tuple[CutStep, ...]:
    """How the span is found: the head, the first cut, each move back, the final span."""
    return tuple(_cut(items, keep_steps))


def span(items: tuple[Item, ...], keep_steps: int) -> tuple[int, int] | None:
    """The items to summarize, ``(start, end)``, or None when there is nothing outside what is kept."""
    *_, last = _cut(items, keep_steps)
    return last.span


def _shape(item: Item) -> tuple[object, ...]:
    """What the cut reads of an item: its kind, role, call id and whether it is a summary. An
    item replaced by one of the same shape (a masked output) leaves the cut's index as it was."""
    return (type(item), role_of(item), getattr(item, "call_id", None), is_summary(item))


class CutIndex:
    """The cut of requests that grow by appending, as a policy summarizing at every call sees
    them: the first user message, the turn starts, which result answers which call and where
    the system messages stand, kept up to date by reading only what is new since the last
    request (an item replaced by one of its shape, such as a masked output, changes nothing).
    ``span`` finds what ``span`` of the whole request finds; owned by one policy."""

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        self.items: tuple[Item, ...] = ()
        self.first_user: int | None = None
        self.starts: list[int] = []  # every assistant turn's start, in order
        self.instructions: list[int] = []  # positions of system and developer messages
        self.call_of: dict[int, int] = {}  # a result's position -> the position of the call it answers (``links``)
        self._open: dict[str, int] = {}  # call id -> its latest call's position

    def _update(self, items: tuple[Item, ...], at_least: int = 0) -> None:
        old = self.items
        # the items before the first difference are the same or equal: their shapes too
        same = shared(old, items, at_least)
        if same < len(old) and (len(items) < len(old) or any(
                _shape(items[p]) != _shape(old[p])
                for p in compress(count(same), map(operator.is_not, items[same:], old[same:])))):
            self._reset()
        for position in range(len(self.items), len(items)):
            self._read(items, position)
        self.items = items

    def _read(self, items: tuple[Item, ...], position: int) -> None:
        """One appended item, as ``_cut``, ``turn_starts`` and ``links`` read it over the whole request."""
        item = items[position]
        role = role_of(item)
        if self.first_user is None and role == "user" and not is_summary(item):
            self.first_user = position
        if role == "assistant" and (position == 0 or role_of(items[position - 1]) != "assistant"):
            self.starts.append(position)
        if is_instruction(item):
            self.instructions.append(position)
        if isinstance(item, ToolCall):
            self._open[item.call_id] = position
        elif isinstance(item, ToolResult) and item.call_id in self._open:
            self.call_of[position] = self._open[item.call_id]

    def _crossing(self, end: int) -> int | None:
        """A call before ``end`` whose result is at or after it (only results from ``end`` on can
        answer one), or None."""
        return next((call for position in range(end, len(self.items))
                     if (call := self.call_of.get(position)) is not None and call < end), None)

    def span(self, items: tuple[Item, ...], keep_steps: int, at_least: int = 0) -> tuple[int, int] | None:
        """``span(items, keep_steps)``, reading only what changed since the last request. The cut
        moves back over a crossing call as ``_cut`` does; where it lands does not depend on the
        order the crossing calls are found in (each move goes to the turn start at or before the
        call, and no cut without a crossing call lies above it). ``at_least``: the caller knows the
        first that many items are the last request's own (``shared``)."""
        self._update(items, at_least)
        first_user = self.first_user
        if first_user is None:
            return None
        starts, low = self.starts, bisect_right(self.starts, first_user)
        if len(starts) - low <= keep_steps:
            return None
        end = starts[len(starts) - keep_steps] if keep_steps else turn_end(items, starts[-1])
        while (call := self._crossing(end)) is not None:
            at = bisect_right(starts, call, lo=low) - 1
            moved = starts[at] if at >= low else first_user + 1
            if moved == end:  # a call in the head answered after the cut: as ``_cut``, nothing to summarize
                return None
            end = moved
        start = first_user + 1
        last = bisect_left(self.instructions, end) - 1
        if last >= 0 and self.instructions[last] >= start:
            start = self.instructions[last] + 1
        if end - start <= 0 or (end - start == 1 and is_summary(items[start])):
            return None
        return start, end
