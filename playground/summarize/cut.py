"""Where summarization cuts: the head that always stays (up to the first user message), the
newest ``keep_steps`` assistant turns with their results, and never a call separated from its
result. Found step by step (``cut_steps``) so the page's step-through and the summarizer walk
the same path and cannot drift apart."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from .. import words
from ..conversation import Item, Message, content_text, is_instruction, pairs, role_of, turn_end, turn_starts

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
        detail = f"the cut starts at item {end}, before the newest {words.count(keep_steps, 'step')}"
    else:  # no step kept, but never what the model has not read: the cut stays after its last turn
        end = turn_end(items, starts[-1])
        detail = (f"the cut starts at item {end}, after the last assistant turn: what follows it the model has not "
                  "read yet" if end < len(items) else "the cut is at the end, after the last assistant turn")
    yield CutStep("cut", start, end, tuple(p for p in starts if p >= end), detail=detail)
    answers = pairs(items)
    moved = True
    while moved:  # a call before the cut whose result is after it: cut before that call's turn
        moved = False
        for call, result in answers.items():
            if call < end <= result:
                end = max((s for s in starts if s <= call), default=first_user + 1)
                moved = True
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
                  detail=f"items {start}–{end - 1} are summarized; {words.count(len(kept), 'step')} from item {end} "
                         "on stay verbatim")


def cut_steps(items: tuple[Item, ...], keep_steps: int) -> tuple[CutStep, ...]:
    """How the span is found: the head, the first cut, each move back, the final span."""
    return tuple(_cut(items, keep_steps))


def span(items: tuple[Item, ...], keep_steps: int) -> tuple[int, int] | None:
    """The items to summarize, ``(start, end)``, or None when there is nothing outside what is kept."""
    *_, last = _cut(items, keep_steps)
    return last.span
