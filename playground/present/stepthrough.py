"""The step-through's frames: the engine's own compaction pass, one step at a time, as values.

The steps come from ``compaction.walk`` — the very pass ``compact()`` runs to the end — so what
the step-through shows cannot drift from what compaction does. This module only turns each step
into a frame the page lays out (the item, the call-arguments table as it stands, the guards
checked so far and their verdicts, the outcome) and answers the navigation questions (next edit,
first step of an item). It is the one place that knows the shape of a ``Step``:

- every step: ``phase`` ("lookup", "template", "guard", "verdict" or "done"), ``position``;
- lookup: ``rule`` (the matched row, described, or None), ``arguments`` (the call's arguments
  the pass remembered for this item, or None);
- template: ``text`` (the template with its fields filled);
- guard: ``guard`` (the ``REASONS`` key it would stop with), ``passed``, ``detail``;
- verdict: ``edit`` (a ``compaction.Edit``) or ``skip`` (a ``compaction.Skip``);
- done: ``items`` (the conversation's items after the pass).

Summarization's cut is read the same way from ``cut.cut_steps``: each step's ``end`` is
where the cut stands and ``detail`` says why it stands there or moved back.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

from .. import compaction
from ..compaction import GUARDS, REASONS, Settings
from ..conversation import Conversation, Item, ToolCall, ToolResult, role_of
from ..meter.tokens import Meter
from ..rules.ruleset import Rules
from ..summarize import cut
from .view import shown_text

NO_RULE = "no rule for this tool: the item stays as it is"


@dataclass(frozen=True)
class Remembered:
    """One row of the call-arguments table: what the pass knows about a call by the time it
    reaches the current item."""

    call_id: str
    tool: str
    arguments: str
    position: int


@dataclass(frozen=True)
class Guard:
    name: str
    passed: bool
    detail: str


@dataclass(frozen=True)
class Frame:
    index: int
    position: int  # the item this step is about
    kind: str  # lookup / template / guard / verdict
    title: str
    detail: str
    guards: tuple[Guard, ...]  # this item's guards checked so far, this step's included
    edit: bool  # a verdict that replaced the item
    outcome: str | None  # a verdict's words: what was replaced, or why not
    call_id: str | None = None  # the item's call id: a result's template reads that call's row


@dataclass(frozen=True)
class Walk:
    """The whole pass as frames, the arguments table's rows and the items it ends with."""

    frames: tuple[Frame, ...]
    calls: tuple[Remembered, ...]  # every call, in pass order; a frame shows those at or before it
    items: tuple[Item, ...]

    def remembered(self, frame: Frame) -> tuple[Remembered, ...]:
        """The call-arguments table when the pass stands at ``frame``: every call it has passed."""
        return tuple(row for row in self.calls if row.position <= frame.position)

    def next_edit(self, index: int) -> int | None:
        return next((frame.index for frame in self.frames[index + 1:] if frame.edit), None)

    def first_at(self, position: int) -> int | None:
        """The first frame about item ``position`` or, if the pass has nothing to say about it,
        the first frame after it."""
        return next((frame.index for frame in self.frames if frame.position >= position), None)

    def matched(self) -> bool:
        """Whether any rule applied to any item: a pass of bare look-ups has nothing to teach."""
        return any(frame.kind != "lookup" for frame in self.frames)

    def positions(self) -> tuple[int, ...]:
        """The items the pass stops at, in order (each once)."""
        return tuple(dict.fromkeys(frame.position for frame in self.frames))


def item_words(item: Item, position: int) -> str:
    """An item in a few words: its position, role and tool (for a heading, or a list to jump in)."""
    if isinstance(item, ToolCall):
        return f"item {position} · call to {item.name} (id {item.call_id})"
    if isinstance(item, ToolResult):
        return f"item {position} · result of {item.name} (id {item.call_id})"
    return f"item {position} · {role_of(item)} message"


def _arguments_text(arguments: Any) -> str:
    if arguments is None:
        return "(no arguments remembered)"
    text = arguments if isinstance(arguments, str) else json.dumps(dict(arguments), ensure_ascii=False)
    return text if len(text) <= 200 else text[:199] + "…"


def _outcome(step: Any) -> tuple[bool, str]:
    edit, skip = getattr(step, "edit", None), getattr(step, "skip", None)
    if edit is not None:
        return True, (f"replaced by {edit.rule}: {edit.tokens_before:,} → {edit.tokens_after:,} tokens"
                      + (f" (fields the call lacked: {', '.join(edit.missing_fields)})" if edit.missing_fields
                         else ""))
    reason = REASONS.get(skip.reason, skip.reason) if skip is not None else "left as it is"
    return False, "skipped: " + reason + (f" ({skip.detail})" if skip is not None and skip.detail else "")


def _frame(index: int, step: Any, items: Sequence[Item], guards: tuple[Guard, ...]) -> Frame:
    position, kind = step.position, step.phase
    where = item_words(items[position], position)
    call_id = getattr(items[position], "call_id", None)
    if kind == "lookup":
        rule = getattr(step, "rule", None)
        detail = (f"rule found: {rule}" if rule else NO_RULE) + (
            f" · arguments remembered for this call: {_arguments_text(step.arguments)}"
            if isinstance(items[position], ToolResult) else "")
        return Frame(index, position, kind, f"{where}: look up the rule by tool name", detail, guards, False, None,
                     call_id)
    if kind == "template":
        return Frame(index, position, kind, f"{where}: fill the template", step.text, guards, False, None, call_id)
    if kind == "guard":
        words = "passed" if step.passed else "stopped here"
        return Frame(index, position, kind, f"{where}: {_guard_name(step.guard)} {words}", step.detail or "", guards,
                     False, None, call_id)
    edit, words = _outcome(step)
    return Frame(index, position, kind, f"{where}: {'replaced' if edit else 'left as it is'}", words, guards, edit,
                 words, call_id)


def _guard_name(key: str | None) -> str:
    """A guard as the question it asks (``GUARDS``), so a learner reads what is checked."""
    return f"guard “{GUARDS.get(key or '', key or '')}”"


def frames(steps: Iterable[Any], conversation: Conversation) -> Walk:
    """Every step of the pass as a frame, with the call-arguments table and the final items."""
    items = conversation.items
    out: list[Frame] = []
    guards: tuple[Guard, ...] = ()
    last_items: tuple[Item, ...] | None = None
    for step in steps:
        if step.phase == "done":
            last_items = step.items
            continue
        if step.phase == "lookup":
            guards = ()  # a new candidate: its guards start afresh
        if step.phase == "guard":
            guards = (*guards, Guard(_guard_name(step.guard), bool(step.passed), step.detail or ""))
        out.append(_frame(len(out), step, items, guards))
    calls = tuple(Remembered(item.call_id, item.name, _arguments_text(item.arguments), position)
                  for position, item in enumerate(items) if isinstance(item, ToolCall))
    return Walk(tuple(out), calls, tuple(last_items) if last_items is not None else items)


def walk(conversation: Conversation, rules: Rules, settings: Settings, meter: Meter) -> Walk:
    """The engine's pass over ``conversation``, as frames."""
    return frames(compaction.walk(conversation, rules, settings, meter), conversation)


@dataclass(frozen=True)
class CutFrame:
    index: int
    position: int  # where the cut stands: items before it are summarized, from it on kept
    detail: str


def cut_frames(conversation: Conversation, keep_steps: int) -> tuple[CutFrame, ...]:
    """How summarization's cut point moves back until no call is separated from its result."""
    steps = cut.cut_steps(conversation.items, keep_steps)
    return tuple(CutFrame(index, step.end if step.end is not None else len(conversation.items), step.detail)
                 for index, step in enumerate(steps))


ROWS_STYLE = """<style>
table.st-rows{width:100%;border-collapse:collapse;table-layout:fixed;font-size:.82rem}
.st-rows th{text-align:left;border-bottom:2px solid #ccc;padding:.3rem}
.st-rows td{vertical-align:top;border-bottom:1px solid #e6e6e6;padding:.3rem;overflow-wrap:anywhere;
white-space:pre-wrap}
.st-rows tr.st-current td{background:#fff3bf;border-top:2px solid #f08c00;border-bottom:2px solid #f08c00}
.st-rows tr.st-changed td.st-after{color:#166534}
.st-rows .st-pos{width:3.5rem;color:#666}
.st-rows .st-empty{color:#888;font-style:italic}
</style>"""
PREVIEW = 240


def _cell(text: str, css: str = "") -> str:
    """An escaped preview of an item's text; an item with no text says so."""
    if not text:
        return '<td class="st-empty">(no text)</td>'
    shown = text if len(text) <= PREVIEW else text[:PREVIEW - 1] + "…"
    return f'<td class="{css}">{escape(shown)}</td>'


def rows_html(walk: Walk, conversation: Conversation, position: int, around: int = 2) -> str:
    """The items around ``position`` before and after the whole pass, the current one
    highlighted, everything escaped."""
    lines = ['<table class="st-rows"><tr><th class="st-pos">#</th><th>before</th><th>after the pass</th></tr>']
    low, high = max(0, position - around), min(len(conversation.items), position + around + 1)
    for at in range(low, high):
        before, after = shown_text(conversation.items[at]), shown_text(walk.items[at])
        css = " ".join(name for name, on in (("st-current", at == position), ("st-changed", before != after)) if on)
        lines.append(f'<tr class="{css}"><td class="st-pos">{at}</td>{_cell(before)}{_cell(after, "st-after")}</tr>')
    return "".join(lines) + "</table>"
