"""Anthropic's context editing, ``clear_tool_uses_20250919``, run offline.

Once the prompt exceeds ``trigger`` input tokens, the oldest tool results are replaced by a
placeholder, keeping the newest ``keep`` tool uses and never touching ``exclude_tools``; with
``clear_tool_inputs`` the calls' arguments go too. If that would clear fewer than
``clear_at_least`` tokens, nothing is cleared (the cache break would not be worth it). Defaults
are the API's: trigger 100,000 input tokens, keep 3 tool uses, clear_at_least 0. The API's other
trigger, a number of tool uses (``trigger_tool_uses``), and a list of the only tools cleared with
a placeholder of one's own make Claude Code's clearing of old tool results the same mechanism
(``data/strategies.json``). Cleared content is gone from the request (the API gives no way back),
so it counts as lost.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from ..conversation import Conversation, Item, ToolCall, ToolResult, pairs
from ..errors import InputError
from ..meter.tokens import Layout, Meter
from .base import PolicyResult, RunningTotal, unchanged

PLACEHOLDER = "[cleared]"
CLEARED_INPUT = "{}"


class _Cleared:
    """The last request this policy cleared, its clearable results and how many of the oldest of
    them can gain nothing more (cleared, excluded, or not worth clearing). A request that extends
    it — a replay in stored mode — is cleared by looking at the results since, so a run of
    thousands of calls does no Python work per call on its older results; any other request is looked at
    whole. Owned by one policy."""

    def __init__(self) -> None:
        self.sent: tuple[Item, ...] = ()
        self.results: list[int] = []  # positions of its clearable results
        self.done = 0  # results[:done] gain nothing from clearing again
        self.not_cleared = 0  # of its clearable results, those still holding their content


@dataclass(frozen=True)
class ClearToolUsesPolicy:
    trigger: int = 100_000
    keep: int = 3
    clear_at_least: int = 0
    exclude_tools: tuple[str, ...] = ()
    clear_tool_inputs: bool = False
    trigger_tool_uses: int | None = None  # fire past this many (clearable) tool uses instead of on tokens
    only_tools: tuple[str, ...] | None = None  # clear only these tools' results (None: every tool's)
    placeholder: str = PLACEHOLDER
    # The same cleared item for the same original, so per-call requests share their items, and
    # what clearing it saves, measured once: id(original) -> (original, meter, cleared, saved).
    memo: dict[int, tuple[Item, Meter, Item, int]] = field(default_factory=dict, compare=False, repr=False)
    totals: RunningTotal = field(default_factory=RunningTotal, compare=False, repr=False)
    last: _Cleared = field(default_factory=_Cleared, compare=False, repr=False)
    name: ClassVar[str] = "clear-tool-uses"

    def __post_init__(self) -> None:
        for key in ("trigger", "keep", "clear_at_least", "trigger_tool_uses"):
            if (getattr(self, key) or 0) < 0:
                raise InputError(f"{key} must be 0 or more", where=key, value=getattr(self, key))

    def params(self) -> dict[str, Any]:
        if self.trigger_tool_uses is not None:
            return {"trigger_tool_uses": self.trigger_tool_uses, "keep": self.keep,
                    "only_tools": list(self.only_tools or ()), "placeholder": self.placeholder}
        return {"trigger": self.trigger, "keep": self.keep, "clear_at_least": self.clear_at_least,
                "exclude_tools": list(self.exclude_tools), "clear_tool_inputs": self.clear_tool_inputs}

    def apply(self, conversation: Conversation, meter: Meter) -> PolicyResult:
        total = self.totals.total(conversation, meter)
        if self.trigger_tool_uses is None and total <= self.trigger:
            return unchanged(conversation)
        last = self.last
        items = conversation.items
        known = len(last.sent)
        extends = bool(known) and not self.clear_tool_inputs and len(items) >= known and items[:known] == last.sent
        new = [p for p in range(known if extends else 0, len(items)) if self._clearable(items[p])]
        results = last.results + new if extends else new
        waiting = (last.not_cleared if extends else 0) + sum(
            items[p].content != self.placeholder for p in new)  # type: ignore[union-attr]
        if self.trigger_tool_uses is not None and waiting <= self.trigger_tool_uses:
            return unchanged(conversation)  # counted: the results not cleared yet
        calls = {result: call for call, result in pairs(items).items()} if self.clear_tool_inputs else {}
        edited = list(items)
        cleared = emptied = 0
        older = max(0, len(results) - self.keep)
        for result in results[last.done if extends else 0:older]:
            if items[result].name in self.exclude_tools:  # type: ignore[union-attr]
                continue
            saved = self._clear(edited, result, meter)
            cleared, emptied = cleared + saved, emptied + (saved > 0)
            if result in calls:
                cleared += self._clear(edited, calls[result], meter)
        if not cleared or cleared < self.clear_at_least:
            return unchanged(conversation)
        result = conversation.with_items(edited)
        self.totals.remember(result, total - cleared, meter)
        last.sent, last.results, last.done, last.not_cleared = result.items, results, older, waiting - emptied
        return PolicyResult(result, "clearing", tokens_lost=cleared)

    def _clearable(self, item: Item) -> bool:
        return isinstance(item, ToolResult) and (self.only_tools is None or item.name in self.only_tools)

    def _clear(self, items: list, position: int, meter: Meter) -> int:
        """Clear one result's content or one call's arguments in place; the tokens that removed
        (0 for one already cleared, or one the placeholder would not shrink). Measured as the
        meter measures the item where it stands (a call's cost depends on whether its neighbours
        are calls too), overheads, Claude's ratio and any calibration included, so the running
        total stays the meter's figure and the trigger is decided on it."""
        item = items[position]
        if not ((isinstance(item, ToolResult) and item.content != self.placeholder)
                or (isinstance(item, ToolCall) and item.arguments != CLEARED_INPUT)):
            return 0  # already cleared
        known = self.memo.get(id(item))
        if known is None or known[0] is not item or known[1] is not meter:
            cleared = (replace(item, content=self.placeholder) if isinstance(item, ToolResult)
                       else replace(item, arguments=CLEARED_INPUT))
            low = max(0, position - 1)
            layout = Layout.of(tuple(items[low:position + 2]))  # clearing changes content, not the layout
            saved = meter.item_at(layout, position - low, item) - meter.item_at(layout, position - low, cleared)
            known = self.memo[id(item)] = (item, meter, cleared, saved)
        if known[3] <= 0:
            return 0
        items[position] = known[2]
        return known[3]
