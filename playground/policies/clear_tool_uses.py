"""Anthropic's context editing, ``clear_tool_uses_20250919``, run offline.

Once the prompt exceeds ``trigger`` input tokens, the oldest tool results are replaced by a
placeholder, keeping the newest ``keep`` tool uses and never touching ``exclude_tools``; with
``clear_tool_inputs`` the calls' arguments go too. If that would clear fewer than
``clear_at_least`` tokens, nothing is cleared (the cache break would not be worth it). Defaults
are the API's: trigger 100,000 input tokens, keep 3 tool uses, clear_at_least 0. Cleared content
is gone from the request (the API gives no way back), so it counts as lost.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from ..errors import InputError
from ..model import Conversation, Item, ToolCall, ToolResult, content_text, pairs
from ..tokens import Meter
from .base import PolicyResult, unchanged

PLACEHOLDER = "[cleared]"
CLEARED_INPUT = "{}"


@dataclass(frozen=True)
class ClearToolUsesPolicy:
    trigger: int = 100_000
    keep: int = 3
    clear_at_least: int = 0
    exclude_tools: tuple[str, ...] = ()
    clear_tool_inputs: bool = False
    # The same cleared item for the same original, so per-call requests share their items.
    memo: dict[int, tuple[Item, Item]] = field(default_factory=dict, compare=False, repr=False)
    name: ClassVar[str] = "clear-tool-uses"

    def __post_init__(self) -> None:
        for key in ("trigger", "keep", "clear_at_least"):
            if getattr(self, key) < 0:
                raise InputError(f"{key} must be 0 or more", where=key, value=getattr(self, key))

    def params(self) -> dict[str, Any]:
        return {"trigger": self.trigger, "keep": self.keep, "clear_at_least": self.clear_at_least,
                "exclude_tools": list(self.exclude_tools), "clear_tool_inputs": self.clear_tool_inputs}

    def apply(self, conversation: Conversation, meter: Meter) -> PolicyResult:
        if meter.count(conversation).total <= self.trigger:
            return unchanged(conversation)
        items = conversation.items
        uses = sorted(pairs(items).items())
        edited = list(items)
        cleared = 0
        for call, result in uses[:max(0, len(uses) - self.keep)]:
            if items[call].name in self.exclude_tools:  # type: ignore[union-attr]
                continue
            cleared += self._clear(edited, result, meter)
            if self.clear_tool_inputs:
                cleared += self._clear(edited, call, meter)
        if not cleared or cleared < self.clear_at_least:
            return unchanged(conversation)
        return PolicyResult(conversation.with_items(edited), "clearing", tokens_lost=cleared)

    def _clear(self, items: list, position: int, meter: Meter) -> int:
        """Clear one result's content or one call's arguments in place; the tokens that removed
        (0 for one already cleared, or one the placeholder would not shrink)."""
        item = items[position]
        if isinstance(item, ToolResult):
            text, placeholder = content_text(item.content), PLACEHOLDER
        elif isinstance(item, ToolCall):
            text, placeholder = item.arguments, CLEARED_INPUT
        else:
            return 0
        if text == placeholder:
            return 0
        saved = meter.text(text) - meter.text(placeholder)
        if saved <= 0:
            return 0
        known = self.memo.get(id(item))
        if known is None or known[0] is not item:
            cleared = (replace(item, content=placeholder) if isinstance(item, ToolResult)
                       else replace(item, arguments=placeholder))
            known = self.memo[id(item)] = (item, cleared)
        items[position] = known[1]
        return saved
