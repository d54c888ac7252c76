"""The one small interface every context policy shares, and the result it returns."""

from __future__ import annotations

import operator
from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import compress, count
from typing import Any, Protocol, Self

from ..conversation import Conversation, Item, Message, ToolCall, extends, is_instruction, role_of, shared
from ..errors import InputError
from ..meter.tokens import Meter
from ..meter.turns import ended_from
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
    # how many leading items of the request as given it sends unchanged, at least (0: not known):
    # replay then compares two calls' requests only after them
    kept: int = field(default=0, compare=False)  # a hint: two results sending the same request are equal
    # how many leading items of the request sent are the very objects of the one this policy sent last, at
    # least (0: not known): per call, where ``kept`` says little (an older output masked, cleared or pruned
    # since), replay compares two calls' requests only after them
    follows: int = field(default=0, compare=False)


class Policy(Protocol):
    """A way to keep an agent's context small. ``apply`` never returns a request with more
    prompt tokens than it was given (replay relies on it: no policy bills more than none)."""

    name: str

    def params(self) -> dict[str, Any]: ...

    def apply(self, conversation: Conversation, meter: Meter) -> PolicyResult: ...


class RunningTotal:
    """The prompt total of requests that mostly grow by appending, as a replay's do: when a
    request begins with one this object has counted, only the new items are counted — and the
    tool calls and results it replaced with others of their kind (a masked or cleared output, per
    call: the request is the last one with one more item edited), and the turn whose thinking or
    reasoning a new user message took off the bill (``ended_from``). Owned by a policy; any other
    request is counted whole."""

    def __init__(self) -> None:
        # (items, total, request, meter), newest last
        self._known: list[tuple[tuple[Item, ...], int, Conversation, Meter]] = []

    def total(self, conversation: Conversation, meter: Meter,
              follows: tuple[tuple[Item, ...], int] | None = None) -> int:
        """The request's total. ``follows``: (an earlier request, how many of its leading items this
        one's are, or equal): a request's differences from it are looked for only after those."""
        items = conversation.items
        usable = [(known, known_total) for known, known_total, request, counted_by in reversed(self._known)
                  if counted_by is meter and _same_outside(request, conversation)]
        for differing, known, known_total in _least_differing_first(usable, items, conversation.grew, follows):
            n = len(known)
            if any(map(is_instruction, items[n:])):  # (the tools' definitions: every count may change)
                continue
            # from the first thinking or reasoning whose turn a new user message ended, counts change
            turned = ended_from(known, items[n:])
            edited = _edited(known, items, differing, meter, min(n, turned) - 2)
            if edited is not None:
                # the two last known items (or from two before the first whose turn ended) are counted
                # again with what follows: a call's cost depends on whether its neighbour is a call too —
                # on both sides, so the item before them stands in the window too (uncounted: a parallel
                # call counted without the call before it was billed as a first call, which a calibrated
                # count rounds otherwise)
                again = max(0, min(n, turned) - 2)
                low = max(0, again - 1)
                total = (known_total + edited + sum(meter.items(items[low:])[again - low:])
                         - sum(meter.items(known[low:])[again - low:]))
                break
        else:
            total = meter.count(conversation).total
        self.remember(conversation, total, meter)
        return total

    def remember(self, conversation: Conversation, total: int, meter: Meter) -> None:
        self._known = [*self._known[-1:], (conversation.items, total, conversation, meter)]


class EditedBefore:
    """What a policy that edits only the items before an edge (older turns' thinking, older tool
    outputs) did at the last call: its request's items, the edge, the items before it as sent, and
    what it found there (``found``: the policy's own record). A request grown from that request (per
    call) is read only from that edge on, the record carried; one grown from what it sent (stored),
    from where what was sent before the edge ends, with a fresh record — when ``settled``: editing
    again an item it edited changes nothing. Walking every item before the edge at every call made a
    long run's calls cost more and more. Owned by one policy."""

    def __init__(self) -> None:
        self.items: tuple[Item, ...] = ()
        self.sent: tuple[Item, ...] = ()
        self.edge = 0
        self.edited: tuple[Item, ...] = ()
        self.found: Any = None
        self.settled = True

    def start(self, conversation: Conversation, edge: int) -> tuple[int, list[Item], Any]:
        """Where to read ``conversation`` from (its edge: ``edge``), what the items before that become,
        and the record carried (None: start a fresh one)."""
        items = conversation.items
        if self.edge <= edge and self.items and extends(items, self.items, conversation.grew):
            return self.edge, list(self.edited), self.found  # (the edits carried: settled as they were)
        clean = len(self.edited)
        grown = self.settled and clean <= edge and bool(self.sent) and extends(items, self.sent)
        self.settled = True  # (what is not read again holds no edit, or only settled ones)
        return (clean, list(items[:clean]), None) if grown else (0, [], None)

    def done(self, items: tuple[Item, ...], sent: tuple[Item, ...], edge: int, edited: list[Item], found: Any,
             settled: bool) -> None:
        """The call's request, what it sent, its edge, the items before it as sent, the record, and
        whether the edits this call made are settled."""
        self.items, self.sent, self.edge, self.edited, self.found = items, sent, edge, tuple(edited), found
        self.settled = self.settled and settled


class AppendedIndex:
    """What a policy reads of a request, kept for requests that grow by appending (per call, every
    request is the whole history so far): ``read`` reads only the items appended since the last
    request; any other request (stored, one a summary rewrote) resets it and is read whole. A
    subclass says what a fresh index holds (``_reset``) and what one appended item adds (``_read``)."""

    items: tuple[Item, ...] = ()

    def read(self, conversation: Conversation) -> Self:
        items = conversation.items
        if not extends(items, self.items, conversation.grew):
            self._reset()
        for position in range(len(self.items), len(items)):
            self._read(items, position)
        self.items = items
        return self

    def _reset(self) -> None:
        raise NotImplementedError

    def _read(self, items: tuple[Item, ...], position: int) -> None:
        raise NotImplementedError


class UserTurns:
    """The user messages of the last request read, each with whether the assistant spoke after
    it (before the next one). A request that grew by appending is read only in its new items: the
    agents' policies that keep the newest turns walked the whole request back at every call, and a
    run with fewer user messages than they keep, all of it. Owned by a policy."""

    def __init__(self) -> None:
        self._items: tuple[Item, ...] = ()
        self._users: list[int] = []  # positions
        self._spoke: list[bool] = []  # per user message: an assistant message came after it

    def read(self, conversation: Conversation) -> UserTurns:
        items = conversation.items
        if not extends(items, self._items, conversation.grew):
            self._items, self._users, self._spoke = (), [], []
        users, spoke = self._users, self._spoke
        for position in range(len(self._items), len(items)):
            item = items[position]
            if isinstance(item, Message) and item.role == "user":
                users.append(position)
                spoke.append(False)
            elif isinstance(item, Message) and item.role == "assistant" and spoke:
                spoke[-1] = True
        self._items = items
        return self

    def newest(self, count: int) -> int | None:
        """The position of the ``count``-th user message from the end (``count`` ≥ 1); None when
        there are fewer."""
        return self._users[-count] if len(self._users) >= count else None

    def any_between(self, low: int, high: int) -> bool:
        """Whether a user message stands after position ``low`` and before ``high``."""
        return bisect_right(self._users, low) < bisect_left(self._users, high)

    def kept_start(self, keep: int) -> int:
        """Where the newest ``keep`` assistant turns begin (0: there are no more than ``keep``). A
        turn runs from a user message to the next; only those the assistant spoke in count."""
        found = 0
        for position, spoke in zip(reversed(self._users), reversed(self._spoke), strict=True):
            found += spoke
            if found == keep:
                return position + 1
        return 0


def _same_outside(known: Conversation, conversation: Conversation) -> bool:
    """``conversation`` may be ``known`` grown: at least as long, with what is outside the items the same."""
    return (2 <= len(known.items) <= len(conversation.items) and known.tools is conversation.tools
            and known.instructions is conversation.instructions)


def _least_differing_first(usable: list[tuple[tuple[Item, ...], int]], items: tuple[Item, ...],
                           grew: tuple[tuple[Item, ...], tuple[Item, ...]] | None = None,
                           follows: tuple[tuple[Item, ...], int] | None = None
                           ) -> Iterator[tuple[list[int], tuple[Item, ...], int]]:
    """Each known request with the positions where ``items`` holds another object, the one it
    differs least from first. Those it only extends come first, and the others' positions are
    found (in C) only if none of those will do: per call, the request just sent was edited at
    every compacted position of the run, and listing them made each call's work grow with it.
    The one ``grew`` says ``items`` was made from comes first, before any is compared."""
    if grew is not None and grew[1] is items:
        yield from (([], known, known_total) for known, known_total in usable if known is grew[0])
    grown = [extends(items, known) for known, _ in usable]
    yield from (([], known, known_total) for (known, known_total), ok in zip(usable, grown, strict=True) if ok)
    yield from sorted(((_differing(known, items, follows[1] if follows and follows[0] is known else 0), known,
                        known_total)
                       for (known, known_total), ok in zip(usable, grown, strict=True) if not ok),
                      key=lambda candidate: len(candidate[0]))


def _differing(known: tuple[Item, ...], items: tuple[Item, ...], at_least: int = 0) -> list[int]:
    """The positions where ``items`` holds another object than ``known``, from their first
    difference on (``shared``, in C chunks, after the ``at_least`` known to be the same): the equal
    items before it count alike, and comparing every position item by item at every call made a
    long run's calls cost more and more."""
    first = shared(known, items, at_least)
    return list(compress(count(first), map(operator.is_not, items[first:], known[first:])))


def _edited(known: tuple[Item, ...], items: tuple[Item, ...], differing: list[int], meter: Meter,
            before: int) -> int | None:
    """What the items of ``items`` standing at the ``differing`` positions of ``known`` before
    ``before`` (the rest are counted again) add to its count; None when an item there changed kind,
    or a message changed (what surrounds an item sets what it costs). A tool call or result replaced
    by one of its kind stands where it stood (parallel or not: its neighbours' kinds are the same),
    so only its own count changes."""
    added = 0
    for position in differing:
        old, new = known[position], items[position]
        if type(old) is not type(new) or isinstance(old, Message):
            if old == new:
                continue
            return None
        if position < before:
            parallel = isinstance(old, ToolCall) and ((position > 0 and isinstance(known[position - 1], ToolCall))
                                                      or isinstance(known[position + 1], ToolCall))
            added += meter.item(new, parallel=parallel) - meter.item(old, parallel=parallel)
    return added


def unread_from(items: tuple[Item, ...]) -> int | None:
    """Where what the model has not answered yet begins: after the last assistant item (None:
    the model has not spoken)."""
    return next((position + 1 for position in range(len(items) - 1, -1, -1)
                 if role_of(items[position]) == "assistant"), None)


def at_least_zero(policy: object, *keys: str) -> None:
    """Refuse a policy built with a negative count or size among ``keys`` (a located message, not
    a policy that silently never or always fires)."""
    for key in keys:
        value = getattr(policy, key)
        if value < 0:
            raise InputError(f"{key} must be 0 or more", where=key, value=value)


def unchanged(conversation: Conversation, report: Any = None) -> PolicyResult:
    return PolicyResult(conversation, report=report, kept=len(conversation.items))
