"""The one small interface every context policy shares, and the result it returns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from ..conversation import Conversation, Item, Message, is_instruction
from ..meter.tokens import Meter
from ..summarize.call import SummaryCall


@dataclass(frozen=True)
class PolicyResult:
    """A policy's request and what it did. ``fired`` names what ran (None: nothing changed);
    ``tokens_lost`` are gone for good (summarized, or masked with no way back);
    ``tokens_retrievable`` were replaced by a reference that calling a tool again undoes;
    ``summarization`` is the LLM call a summary took (replay bills it), None when none was written."""

    conversation: Conversation
    fired: str | None = None
    tokens_lost: int = 0
    tokens_retrievable: int = 0
    report: Any = None
    summarization: SummaryCall | None = None


class Policy(Protocol):
    """A way to keep an agent's context small. ``apply`` never returns a request with more
    prompt tokens than it was given (replay relies on it: no policy bills more than none)."""

    name: str

    def params(self) -> dict[str, Any]: ...

    def apply(self, conversation: Conversation, meter: Meter) -> PolicyResult: ...


class RunningTotal:
    """The prompt total of requests that mostly grow by appending, as a replay's do: when a
    request begins with one this object has counted, only the new items are counted. Owned by a
    policy; a request that does not extend a known one is counted whole."""

    def __init__(self) -> None:
        # (items, total, request, meter), newest last
        self._known: list[tuple[tuple[Item, ...], int, Conversation, Meter]] = []

    def total(self, conversation: Conversation, meter: Meter) -> int:
        items = conversation.items
        for known, known_total, request, counted_by in reversed(self._known):
            n = len(known)
            if (counted_by is meter and 2 <= n <= len(items) and request.tools is conversation.tools
                    and request.instructions is conversation.instructions and items[:n] == known
                    and not any(_changes_earlier_counts(item, meter) for item in items[n:])):
                # the two last known items are counted again with what follows: a call's cost
                # depends on whether its neighbour is a call too
                total = known_total + sum(meter.items(items[n - 2:])) - sum(meter.items(known[n - 2:]))
                break
        else:
            total = meter.count(conversation).total
        self.remember(conversation, total, meter)
        return total

    def remember(self, conversation: Conversation, total: int, meter: Meter) -> None:
        self._known = [*self._known[-1:], (conversation.items, total, conversation, meter)]


def _changes_earlier_counts(item: Item, meter: Meter) -> bool:
    """An item whose arrival changes what earlier items cost: a system message (tool definitions)
    or, for Claude, a user message (thinking before it is no longer the current turn's)."""
    return is_instruction(item) or (meter.claude and isinstance(item, Message) and item.role == "user")


def extends(items: tuple[Item, ...], known: tuple[Item, ...]) -> bool:
    """``items`` begins with ``known``: a request that grew by appending (one comparison in C,
    identity first)."""
    return len(items) >= len(known) and items[:len(known)] == known


def unchanged(conversation: Conversation, report: Any = None) -> PolicyResult:
    return PolicyResult(conversation, report=report)
