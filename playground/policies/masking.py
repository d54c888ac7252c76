"""Observation masking: every tool output older than the newest ``window`` becomes a short
placeholder (SWE-agent's, studied by JetBrains in "The Complexity Trap", 2025, with a window of 10).

The placeholder says only that something was there, not how to get it back, so what it hides
counts as lost. The calls stay, so the agent's reasoning about them does too. SWE-agent's own
``LastNObservations`` (its first observation, the task, is a user message, never masked) and
OpenHands' ``ObservationMaskingCondenser`` (a window of events, not outputs) are this with other
settings, ``window``, ``over_items`` and ``placeholder`` (``data/policies.json`` names them).
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from ..conversation import Conversation, Item, ToolResult, content_text
from ..errors import InputError
from ..meter.tokens import Meter
from .base import PolicyResult, extends, unchanged

DEFAULT_WINDOW = 10
PLACEHOLDER = "[Old {tool} output omitted ({lines} lines).]"


Memo = dict[int, tuple[Item, Item | None, int]]  # id(original) -> (original, its masked twin or None, saved)


def _masked(item: ToolResult, meter: Meter, template: str) -> tuple[Item | None, int]:
    """``item`` masked and the tokens that saves, or (None, 0) when there is nothing to gain
    (already masked, or the placeholder is not smaller)."""
    text = content_text(item.content)
    if text.startswith(template.split("{", 1)[0]):
        return None, 0
    placeholder = template.format(tool=item.name or "tool", lines=len(text.splitlines()))
    saved = meter.text(text) - meter.text(placeholder)
    return (replace(item, content=placeholder), saved) if saved > 0 else (None, 0)


def mask(conversation: Conversation, window: int, meter: Meter, memo: Memo | None = None, *,
         over_items: bool = False, placeholder: str = PLACEHOLDER) -> tuple[Conversation, int, int]:
    """The conversation with older outputs masked, the tokens that removed, and how many were masked.
    The newest ``window`` outputs stay (with ``over_items``: the outputs among the newest
    ``window`` items). ``memo`` hands back the same masked
    item for the same original, so requests made from the whole history at every call share their
    items (replay then counts each once) and each output is measured once."""
    memo = {} if memo is None else memo
    items = conversation.items
    results = [p for p, item in enumerate(items) if isinstance(item, ToolResult)]
    edited = list(items)
    removed, masked = _mask_into(edited, items, results[:_older(results, len(items), window, over_items)], meter,
                                 memo, placeholder)
    return (conversation.with_items(edited) if masked else conversation), removed, masked


def _mask_into(edited: list[Item], items: tuple[Item, ...], positions: list[int], meter: Meter, memo: Memo,
               placeholder: str) -> tuple[int, int]:
    """Mask the outputs at ``positions`` of ``items`` into ``edited``; the tokens that removed and
    how many were masked (an output already masked, or not worth it, is left)."""
    removed = masked = 0
    for position in positions:
        item = items[position]
        known = memo.get(id(item))
        if known is None or known[0] is not item:
            known = memo[id(item)] = (item, *_masked(item, meter, placeholder))  # type: ignore[arg-type]
        if known[1] is not None:
            edited[position] = known[1]
            removed += known[2]
            masked += 1
    return removed, masked


class _Last:
    """The last request masked, what was sent for it and which of its outputs were older than the
    window: a request that extends it (stored mode: the one sent; per-call: the one given) is
    masked by masking only the outputs that have crossed the window since — a replay of thousands
    of calls does no Python work per call on its older outputs. Owned by one policy."""

    def __init__(self) -> None:
        self.given: tuple[Item, ...] = ()
        self.sent: tuple[Item, ...] = ()
        self.results: list[int] = []  # positions of the outputs in ``given``
        self.older = 0  # how many of them were older than the window
        self.removed = self.masked = 0  # what masking ``given`` whole removed and masked
        self.kept = 0  # how many leading items of the last request given were sent as they came, at least
        self.before: tuple[Item, ...] = ()  # the request sent before ``sent``
        self.same = 0  # how many leading items of ``sent`` are ``before``'s own (or equal): none newly masked

    def whole(self, conversation: Conversation, policy: MaskingPolicy, meter: Meter) -> tuple[Conversation, int, int]:
        result = mask(conversation, policy.window, meter, policy.memo, over_items=policy.over_items,
                      placeholder=policy.placeholder)
        items = conversation.items
        self.results = [p for p, item in enumerate(items) if isinstance(item, ToolResult)]
        self.older = _older(self.results, len(items), policy.window, policy.over_items)
        self._keep(items, result, 0)
        self.kept = 0
        return result

    def extend(self, conversation: Conversation, policy: MaskingPolicy, meter: Meter
               ) -> tuple[Conversation, int, int] | None:
        items = conversation.items
        stored = bool(self.sent) and extends(items, self.sent, conversation.grew)
        if not stored and not (self.given and extends(items, self.given, conversation.grew)):
            return None
        known = len(self.sent if stored else self.given)
        # the positions and the request are built once each (a copy of the request, not three): at every call of a
        # run of thousands, each copy costs what the run's length does
        results = self.results
        results.extend(p for p in range(known, len(items)) if isinstance(items[p], ToolResult))
        older = _older(results, len(items), policy.window, policy.over_items)
        positions = results[self.older:older]
        edited = (list(items) if stored else [*self.sent, *items[known:]]) if positions else None
        removed, masked = (0, 0) if edited is None else _mask_into(edited, items, positions, meter, policy.memo,
                                                                   policy.placeholder)
        if not stored:  # per-call: the request as given, so every older output counts, as a whole pass does
            removed, masked = removed + self.removed, masked + self.masked
        # stored: what was sent is as it came up to the first output that crossed the window now
        self.kept = (results[self.older] if self.older < older else len(items)) if stored else 0
        same = results[self.older] if self.older < older else known  # up to the first output masked now
        self.older = older
        sent = tuple(edited) if edited is not None else items if stored else self.sent + items[known:]
        result = (conversation.with_items(sent) if masked else conversation), removed, masked
        self._keep(items, result, same)
        return result

    def _keep(self, items: tuple[Item, ...], result: tuple[Conversation, int, int], same: int) -> None:
        self.before, self.same = self.sent, same
        self.given, self.sent = items, result[0].items
        self.removed, self.masked = result[1], result[2]


def _older(results: list[int], length: int, window: int, over_items: bool) -> int:
    """How many of the outputs (their positions in a request of ``length`` items, in order) are
    older than the window: outside the newest ``window`` outputs, or with ``over_items`` the
    newest ``window`` items."""
    return bisect_left(results, length - window) if over_items else max(0, len(results) - window)


@dataclass(frozen=True)
class MaskingPolicy:
    window: int = DEFAULT_WINDOW
    over_items: bool = False  # the window counts items, not outputs (OpenHands counts events)
    placeholder: str = PLACEHOLDER  # may name {tool} and {lines}
    memo: Memo = field(default_factory=dict, compare=False, repr=False)
    last: _Last = field(default_factory=_Last, compare=False, repr=False)
    name: ClassVar[str] = "masking"

    def __post_init__(self) -> None:
        if self.window < 0:
            raise InputError("window must be 0 or more", where="window", value=self.window)

    def params(self) -> dict[str, Any]:
        shown: dict[str, Any] = {"window": self.window}
        if self.over_items:
            shown["window_over"] = "items"
        if self.placeholder != PLACEHOLDER:
            shown["placeholder"] = self.placeholder
        return shown

    def apply(self, conversation: Conversation, meter: Meter) -> PolicyResult:
        masked, removed, count = self.last.extend(conversation, self, meter) or self.last.whole(conversation, self,
                                                                                              meter)
        if not count:
            return unchanged(conversation)
        return PolicyResult(masked, "masking", tokens_lost=removed, report={"masked": count}, kept=self.last.kept,
                            follows=self.last.same)
