"""Anthropic's context editing, ``clear_thinking_20251015``, run offline: the thinking blocks of
every assistant turn but the newest ``keep`` are cleared (the API's own behaviour without
this edit is ``keep`` 1). A turn is Anthropic's: everything the assistant does between two user
messages, a whole tool-use loop included (tool results do not end it). Text, calls and results
stay. Anthropic bills thinking only in the current turn, which ``keep`` 1 never clears, so under
the meter the request goes unchanged: the API's default is what ``none`` already bills. A cleared
block cannot be had back: lost.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from ..conversation import Conversation, Item, Message
from ..errors import InputError
from ..meter.tokens import Meter
from .base import EditedBefore, PolicyResult, UserTurns, unchanged

THINKING = ("thinking", "redacted_thinking")


def _cleared(item: Message) -> tuple[Item | None] | None:
    """``item`` without its thinking blocks, in a 1-tuple (holding None: it held nothing else);
    None when it has none."""
    content = item.content
    if not isinstance(content, tuple) or not any(part.type in THINKING for part in content):
        return None
    kept = tuple(part for part in content if part.type not in THINKING)
    return (replace(item, content=kept) if kept else None,)


@dataclass(frozen=True)
class ClearThinkingPolicy:
    keep: int = 1  # assistant turns whose thinking stays, newest first
    # id(original) -> (original, (its twin without thinking, or None) or None: it has no thinking)
    memo: dict[int, tuple[Item, tuple[Item | None] | None]] = field(default_factory=dict, compare=False, repr=False)
    turns: UserTurns = field(default_factory=UserTurns, compare=False, repr=False)
    done: EditedBefore = field(default_factory=EditedBefore, compare=False, repr=False)
    name: ClassVar[str] = "clear-thinking"

    def __post_init__(self) -> None:
        if self.keep < 1:  # the API needs the current turn's thinking while it uses tools
            raise InputError("keep must be 1 or more", where="keep", value=self.keep)

    def params(self) -> dict[str, Any]:
        return {"keep": self.keep}

    def _twin(self, item: Item) -> tuple[Item | None] | None:
        """An assistant message's cleared twin (see ``_cleared``), made once per item."""
        if not (isinstance(item, Message) and item.role == "assistant"):
            return None
        known = self.memo.get(id(item))
        if known is None or known[0] is not item:
            known = self.memo[id(item)] = (item, _cleared(item))
        return known[1]

    def cleared(self, conversation: Conversation) -> tuple[Conversation, tuple[int, ...]]:
        """The request with older turns' thinking cleared, and the positions of the messages
        that lost some."""
        items = conversation.items
        edge = self.turns.read(conversation).kept_start(self.keep)
        start, edited, found = self.done.start(conversation, edge)
        cleared = list(found or ())
        for position in range(start, edge):
            item = items[position]
            twin = self._twin(item)
            if twin is None:
                edited.append(item)
                continue
            cleared.append(position)
            edited.extend(kept for kept in twin if kept is not None)
        result = conversation.with_items((*edited, *items[edge:])) if cleared else conversation
        self.done.done(items, result.items, edge, edited, tuple(cleared), True)  # (a cleared twin holds no thinking)
        return result, tuple(cleared)

    def apply(self, conversation: Conversation, meter: Meter) -> PolicyResult:
        result, cleared = self.cleared(conversation)
        # Anthropic bills thinking only in the current turn (``claude.billed_thinking``): clearing
        # an earlier turn's saves nothing and would only break the cache, so the request goes as it was
        # (and with nothing cleared, the whole request is not read again to find that out)
        # (what was cleared held thinking: billed only after the newest user message, ``claude.billed_thinking``)
        newest = self.turns.newest(1)
        if not cleared or max(cleared) <= (-1 if newest is None else newest):
            return unchanged(conversation)
        return PolicyResult(result, "clearing",
                            tokens_lost=max(0, meter.count(conversation).total - meter.count(result).total))
