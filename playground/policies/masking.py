"""Observation masking: every tool output older than the newest ``window`` becomes a short
placeholder (SWE-agent's, studied by JetBrains in "The Complexity Trap", 2025, with a window of 10).

The placeholder says only that something was there, not how to get it back, so what it hides
counts as lost. The calls stay, so the agent's reasoning about them does too.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, ClassVar

from ..errors import InputError
from ..model import Conversation, ToolResult, content_text
from ..tokens import Meter
from .base import PolicyResult, unchanged

DEFAULT_WINDOW = 10
PLACEHOLDER = "[Old {tool} output omitted ({lines} lines).]"
_HEAD = PLACEHOLDER.split("{", 1)[0]


def mask(conversation: Conversation, window: int, meter: Meter) -> tuple[Conversation, int, int]:
    """The conversation with older outputs masked, the tokens that removed, and how many were masked.
    Already masked outputs and outputs a placeholder would not shrink are left as they are."""
    items = conversation.items
    results = [p for p, item in enumerate(items) if isinstance(item, ToolResult)]
    edited = list(items)
    removed = masked = 0
    for position in results[:max(0, len(results) - window)]:
        item = items[position]
        text = content_text(item.content)
        if text.startswith(_HEAD):
            continue
        placeholder = PLACEHOLDER.format(tool=item.name or "tool", lines=len(text.splitlines()))
        saved = meter.text(text) - meter.text(placeholder)
        if saved > 0:
            edited[position] = replace(item, content=placeholder)
            removed += saved
            masked += 1
    return (conversation.with_items(edited) if masked else conversation), removed, masked


@dataclass(frozen=True)
class MaskingPolicy:
    window: int = DEFAULT_WINDOW
    name: ClassVar[str] = "masking"

    def __post_init__(self) -> None:
        if self.window < 0:
            raise InputError("window must be 0 or more", where="window", value=self.window)

    def params(self) -> dict[str, Any]:
        return {"window": self.window}

    def apply(self, conversation: Conversation, meter: Meter) -> PolicyResult:
        masked, removed, count = mask(conversation, self.window, meter)
        if not count:
            return unchanged(conversation)
        return PolicyResult(masked, "masking", tokens_lost=removed, report={"masked": count})
