"""Each item's count of requests that mostly grow by appending, carried from one to the next.

A policy that reads every call of a run (per call, each request is the whole history so far)
needs ``meter.items`` of each request: counted whole, that is a Python step per item at every call,
quadratic in the run. An item's count depends on its neighbours only (a parallel call, a continued
block), so only what changed or was appended, with its neighbours, is counted again.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from itertools import accumulate, compress, count

from ..conversation import Conversation, Item, shared
from .tokens import Layout, Meter
from .turns import Turns


class CarriedCounts:
    """``meter.items`` of the last request, and what it takes to count the next one from it.
    Owned by one policy (or one of its parts): requests from anything else are counted whole."""

    def __init__(self) -> None:
        self.items: tuple[Item, ...] = ()
        self._counts: list[int] = []
        self._meter: Meter | None = None
        self._turns = Turns()  # where thinking and reasoning stop being billed (a user message after them)
        self._sums = [0]  # _sums[p]: the first p items' counts, up to the first item counted again since
        self.since = 0  # where the last request's counts were counted again from (those before: as they were)

    def counts(self, items: tuple[Item, ...], meter: Meter, same: int = 0) -> list[int]:
        """``meter.items(items)`` — unless most of the request changed (each item is counted in a
        window of three): then whole. What changed is counted again with its neighbours, and so are
        the items from the first thinking or reasoning whose turn a user message ended or opened
        (``Turns``). ``same``: the caller knows that many leading items are the last request's very
        objects, so only what follows is compared. The list is this object's: read, do not keep."""
        old = self.items
        # (an equal item counts alike: only what follows the first difference is read)
        same = shared(old, items, same)
        changed = list(compress(count(same), map(operator.is_not, items[same:], old[same:])))
        turns = self._turns
        turned = turns.follow(items, same)  # (the turns follow every request, counted whole or not)
        recount = sorted({q for p in changed for q in (p - 1, p, p + 1) if 0 <= q < len(old)}
                         | set(range(min(turned, max(0, len(old) - 1)), len(items))))
        if meter is not self._meter or len(items) < len(old) or 3 * len(recount) > len(items):
            self._counts = list(meter.items(items))
            del self._sums[1:]
            self.since = 0
        else:
            counts = self._counts
            counts.extend([0] * (len(items) - len(counts)))
            for q in recount:
                parallel, continues = Layout.at(items, q)  # (parallel calls and continued blocks: the neighbours)
                counts[q] = meter.item(items[q], parallel=parallel, continues=continues,
                                       thinking=turns.billed(items[q], q))
            self.since = min(recount, default=len(items))
            del self._sums[self.since + 1:]
        self.items, self._meter = items, meter
        return self._counts

    def follow(self, conversation: Conversation, meter: Meter) -> list[int]:
        """``counts`` of a request's items, compared with the last request's only after them when the
        request says it is that one with items appended (``Conversation.grew``): per call, every
        request is, and comparing them in C was still a pass over the run at every call."""
        grew, items = conversation.grew, conversation.items
        same = len(self.items) if grew is not None and grew[0] is self.items and grew[1] is items else 0
        return self.counts(items, meter, same)

    def between(self, start: int, end: int) -> int:
        """``sum(counts[start:end])`` of the last request counted, from running sums: a summary's
        span is most of a long request, and summing it at every call was a pass over the request."""
        sums = self._sums
        if len(sums) <= end:
            known = len(sums) - 1
            sums.extend(accumulate(self._counts[known:end], initial=sums.pop()))
        return sums[end] - sums[start]

    def replaced(self, before: int, start: int, end: int, made: tuple[Item, ...], meter: Meter) -> Replaced | None:
        """What the last request counted (``before`` tokens in all) comes to with ``made`` in place of
        its items ``start:end``: an item's count depends only on its neighbours, so ``made`` and the
        items either side of it are counted, in one window that holds their neighbours too, and the
        rest is as it was. None where that does not hold: for Claude, or a request holding thinking or
        reasoning (a summary, a user message, takes what comes before it off the bill), count it whole.
        A policy that summarizes at every call of a long run counted its whole result at each."""
        if meter.claude or meter is not self._meter or self._turns.holds():
            return None
        items = self.items
        low = max(0, start - 2)
        window = meter.items((*items[low:start], *made, *items[end:end + 2]))
        at = start - low
        before_made = window[at - 1] if start else 0  # the item before ``made`` and the one after, counted again
        after_made = window[at + len(made)] if end < len(items) else 0
        rest = self.between(end + 1, len(items)) if end < len(items) else 0
        total = before - self.between(max(0, start - 1), len(items)) + before_made + sum(window[at:at + len(made)]) \
            + after_made + rest
        return Replaced(tuple(window[at:at + len(made)]), total, after_made + rest)


@dataclass(frozen=True)
class Replaced:
    """A request with items replaced (``CarriedCounts.replaced``): the counts of the items put in,
    the request's total, and the tokens of the items after them."""

    made: tuple[int, ...]
    total: int
    after: int
