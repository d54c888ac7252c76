"""Anthropic's context editing, ``clear_thinking_20251015``, run offline: the thinking blocks of
every assistant turn but the newest ``keep`` are cleared (the API's own behaviour without the
strategy is ``keep`` 1). Text, calls and results stay. A cleared block cannot be had back: lost.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from ..errors import InputError
from ..model import Conversation, Item, Message, turn_starts
from ..tokens import Meter
from .base import PolicyResult, unchanged

THINKING = ("thinking", "redacted_thinking")


def _cleared(item: Message, meter: Meter) -> tuple[Item | None, int] | None:
    """``item`` without its thinking blocks (None for the item: it held nothing else) and the
    tokens of those blocks; None when it has none."""
    content = item.content
    if not isinstance(content, tuple) or not any(part.type in THINKING for part in content):
        return None
    kept = tuple(part for part in content if part.type not in THINKING)
    saved = sum(meter.text(str(part.extra.get("thinking") or "")) for part in content if part.type in THINKING)
    return (replace(item, content=kept) if kept else None), saved


@dataclass(frozen=True)
class ClearThinkingPolicy:
    keep: int = 1  # assistant turns whose thinking stays, newest first
    # id(original) -> (original, (its twin without thinking or None, tokens cleared) or None: no thinking)
    memo: dict[int, tuple[Item, tuple[Item | None, int] | None]] = field(default_factory=dict, compare=False,
                                                                          repr=False)
    name: ClassVar[str] = "clear-thinking"

    def __post_init__(self) -> None:
        if self.keep < 1:  # the API needs the current turn's thinking while it uses tools
            raise InputError("keep must be 1 or more", where="keep", value=self.keep)

    def params(self) -> dict[str, Any]:
        return {"keep": self.keep}

    def apply(self, conversation: Conversation, meter: Meter) -> PolicyResult:
        items = conversation.items
        starts = turn_starts(items)
        if len(starts) <= self.keep:
            return unchanged(conversation)
        edge = starts[len(starts) - self.keep]
        edited: list[Item] = []
        saved = cleared = 0
        for position, item in enumerate(items):
            if position >= edge or not (isinstance(item, Message) and item.role == "assistant"):
                edited.append(item)
                continue
            known = self.memo.get(id(item))
            if known is None or known[0] is not item:
                known = self.memo[id(item)] = (item, _cleared(item, meter))
            if known[1] is None:
                edited.append(item)
                continue
            twin, tokens = known[1]
            saved, cleared = saved + tokens, cleared + 1
            if twin is not None:
                edited.append(twin)
        if not cleared:
            return unchanged(conversation)
        return PolicyResult(conversation.with_items(edited), "clearing", tokens_lost=saved)
