"""Anthropic's context editing, ``clear_tool_uses_20250919``, run offline.

Once the prompt exceeds ``trigger`` input tokens, the oldest tool results are replaced by a
placeholder, keeping the newest ``keep`` tool uses and never touching ``exclude_tools``; with
``clear_tool_inputs`` the calls' arguments go too. If that would clear fewer than
``clear_at_least`` tokens, nothing is cleared (the cache break would not be worth it). Defaults
are the API's: trigger 100,000 input tokens, keep 3 tool uses, clear_at_least 0. The API's other
trigger, a number of tool uses (``trigger_tool_uses``), and a list of the only tools cleared with
a placeholder of one's own make Claude Code's clearing of old tool results the same mechanism
(``data/policies.json``). Cleared content is gone from the request (the API gives no way back),
so it counts as lost.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from ..conversation import Conversation, Item, ToolCall, ToolResult
from ..errors import InputError
from ..meter.tokens import Layout, Meter
from .base import PolicyResult, RunningTotal, extends, unchanged

PLACEHOLDER = "[cleared]"
CLEARED_INPUT = "{}"


class _Cleared:
    """What clearing the last request whole did — sent or not (under ``clear_at_least`` or the
    tool-use trigger it is not) — and which call each of its results answers. A request that
    extends it, as it came (per-call mode) or as cleared (stored mode), is cleared by clearing
    only the results that have left the newest ``keep`` since, so a run of thousands of calls
    does no Python work per call on its older results; any other request is cleared whole.
    Owned by one policy."""

    def __init__(self) -> None:
        self._forget()

    def _forget(self) -> None:
        self.given: tuple[Item, ...] = ()
        self.edited: tuple[Item, ...] = ()  # ``given`` with its older results cleared
        self.results: list[int] = []  # positions of its clearable results
        self.older = 0  # results[:older] are older than the newest ``keep``: tried already
        self.cleared = 0  # tokens clearing ``given`` removed
        self.waiting = 0  # of its clearable results, those holding their content in ``given``
        self.emptied = 0  # of those, how many clearing emptied
        self.kept = 0  # how many leading items of ``given`` ``edited`` has as they came, at least
        self.returned: tuple[Item, ...] = ()  # what the policy sent last
        self.follows = 0  # how many leading items of ``edited`` are those of ``returned``, the very objects
        self.latest: dict[str, int] = {}  # call id -> position of its latest call
        self.answers: dict[int, int] = {}  # call position -> its result's, as ``conversation.pairs`` pairs them
        self.calls: dict[int, int] = {}  # the same, result -> call

    def base(self, items: tuple[Item, ...], grew: tuple[tuple[Item, ...], tuple[Item, ...]] | None = None
             ) -> tuple[tuple[Item, ...], int, int, int] | None:
        """Where clearing ``items`` whole stands once past the last request, when ``items``
        extends it: that request cleared, and the tokens removed, results waiting and results
        emptied so far. None for another request. ``grew``: the request's ``Conversation.grew``."""
        if extends(items, self.given, grew):  # per-call, or stored when nothing was sent cleared
            return self.edited, self.cleared, self.waiting, self.emptied
        if self.cleared and extends(items, self.edited, grew):  # stored: its results were cleared already
            return self.edited, 0, self.waiting - self.emptied, 0
        return None

    def clear(self, items: tuple[Item, ...], policy: ClearToolUsesPolicy, meter: Meter,
              grew: tuple[tuple[Item, ...], tuple[Item, ...]] | None = None) -> None:
        """Become what clearing ``items`` whole does, clearing only what is new past the base."""
        found = self.base(items, grew)
        if found is None:
            self._forget()
            found = self.edited, 0, 0, 0
        prefix, cleared, waiting, emptied = found
        as_given = not cleared  # nothing cleared before ``known``: the prefix holds the request's own items
        known = len(prefix)
        first = len(items)
        new = [p for p in range(known, len(items)) if policy.clearable(items[p])]
        self._pair(items, known)
        results = self.results
        results += new
        waiting += sum(items[p].content != policy.placeholder for p in new)  # type: ignore[union-attr]
        edited = [*prefix, *items[known:]]
        older = max(0, len(results) - policy.keep)
        for result in results[self.older:older]:
            if items[result].name in policy.exclude_tools:  # type: ignore[union-attr]
                continue
            saved = policy.clear_one(edited, result, meter)
            cleared, emptied = cleared + saved, emptied + (saved > 0)
            first = min(first, result)
            call = self.calls.get(result) if policy.clear_tool_inputs else None
            if call is not None:
                cleared += policy.clear_one(edited, call, meter)
                first = min(first, call)
        self.kept = first if as_given else 0
        # what was sent last, carried: as it was up to the first item cleared now
        self.follows = min(first, known) if known and prefix is self.returned else 0
        self.given, self.edited, self.older = items, tuple(edited), older
        self.cleared, self.waiting, self.emptied = cleared, waiting, emptied

    def _pair(self, items: tuple[Item, ...], start: int) -> None:
        """Pair the results from ``start`` on with their calls as ``conversation.pairs`` does: a
        result answers the latest earlier call with its id, if that call has no result yet."""
        latest, answers, calls = self.latest, self.answers, self.calls
        for position in range(start, len(items)):
            item = items[position]
            if isinstance(item, ToolCall):
                latest[item.call_id] = position
            elif isinstance(item, ToolResult) and item.call_id in latest:
                call = latest[item.call_id]
                if call not in answers:
                    answers[call], calls[position] = position, call


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
        done = self._cleared(conversation, meter)
        self.last.returned = done.conversation.items
        return done

    def _cleared(self, conversation: Conversation, meter: Meter) -> PolicyResult:
        total = self.totals.total(conversation, meter)
        if self.trigger_tool_uses is None and total <= self.trigger:
            return unchanged(conversation)
        last = self.last
        last.clear(conversation.items, self, meter, conversation.grew)
        if self.trigger_tool_uses is not None and last.waiting <= self.trigger_tool_uses:
            return unchanged(conversation)  # counted: the results not cleared yet
        if not last.cleared or last.cleared < self.clear_at_least:
            return unchanged(conversation)
        result = conversation.with_items(last.edited)
        self.totals.remember(result, total - last.cleared, meter)
        return PolicyResult(result, "clearing", tokens_lost=last.cleared, kept=last.kept, follows=last.follows)

    def clearable(self, item: Item) -> bool:
        return isinstance(item, ToolResult) and (self.only_tools is None or item.name in self.only_tools)

    def clear_one(self, items: list, position: int, meter: Meter) -> int:
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
