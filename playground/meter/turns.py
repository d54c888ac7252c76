"""Where the current turn begins in a request that grows call by call.

Anthropic bills thinking, and Responses bills reasoning sent back, only after the last user
message (``Layout.thinking``), so what such an item costs depends on what follows it in the
request. Replay once counted every request of a run holding them whole to know it: quadratic in
the run, and a wrapped agent's long session with extended thinking slowed call by call. ``Turns``
follows each kind's last user message as the request grows, and says from which item a request's
counts can differ from the last one's: where it differs, or earlier, at the first such item whose
turn a user message ended (or, gone again, opened).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable

from ..conversation import Item, Message
from . import claude, responses

# each kind of turn-billed item: what it is, and the user message that ends its turn
KINDS: tuple[tuple[Callable[[Item], bool], Callable[[Item], bool]], ...] = (
    (claude.has_thinking, claude.ends_turn), (responses.is_reasoning, responses.ends_turn))


class Turns:
    """The positions, per kind, of the user messages and of the turn-billed items of the last
    request followed. Owned by whoever follows one growing request (a replay's side)."""

    def __init__(self) -> None:
        self._ends: tuple[list[int], ...] = tuple([] for _ in KINDS)
        self._held: tuple[list[int], ...] = tuple([] for _ in KINDS)

    def follow(self, items: tuple[Item, ...], same: int) -> int:
        """Follow ``items``, whose first ``same`` items are the last request's, reading only what
        follows them; the first position whose count may differ from the last request's."""
        last = [ends[-1] if ends else -1 for ends in self._ends]
        for ends, held in zip(self._ends, self._held, strict=True):
            del ends[bisect_left(ends, same):], held[bisect_left(held, same):]
        for position in range(same, len(items)):
            item = items[position]
            if not isinstance(item, Message):  # (calls and results neither end a turn nor hold thinking)
                continue
            for (holds, ends_turn), ends, held in zip(KINDS, self._ends, self._held, strict=True):
                if ends_turn(item):
                    ends.append(position)
                if holds(item):
                    held.append(position)
        first = same
        for before, ends, held in zip(last, self._ends, self._held, strict=True):
            now = ends[-1] if ends else -1
            if now != before:  # the items of this kind after the earlier of the two ends changed turn
                after = bisect_right(held, min(before, now))
                if after < len(held):
                    first = min(first, held[after])
        return first

    def holds(self) -> bool:
        """Whether the request last followed holds thinking or reasoning anywhere."""
        return any(self._held)

    def billed(self, item: Item, position: int) -> bool:
        """Whether ``item``, at ``position`` of the request last followed, is in its kind's current turn.
        A request with no thinking or reasoning (most runs) says no at once: a replay asks of every
        item it counts or chains again at every call."""
        if not self.holds():
            return False
        return any(holds(item) and position > (ends[-1] if ends else -1)
                   for (holds, _), ends in zip(KINDS, self._ends, strict=True))


def ended_from(known: tuple[Item, ...], added: tuple[Item, ...]) -> int:
    """The first position of ``known`` whose count ``added`` after it changes: its current turn's
    first thinking or reasoning, when a user message in ``added`` ends that kind's turn (else
    ``len(known)``). It reads back from the end of ``known`` only to that turn's start, so a running
    total need not count a request whole at each user message to know it."""
    first = len(known)
    for holds, ends_turn in KINDS:
        if not any(map(ends_turn, added)):
            continue
        for position in range(len(known) - 1, -1, -1):
            item = known[position]
            if ends_turn(item):
                break
            if holds(item):
                first = min(first, position)
    return first
