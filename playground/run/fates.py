"""What a policy did to each fact of the ledger (``facts.ledger``), call by call: **kept** (visible in
the request: an item that states it is there, or a text the policy made names it — a reference to
``report.md`` keeps the path, a summary line keeps a requirement), **recoverable** (hidden, but an item
that states it was replaced by a reference the agent can follow, as ``hidden`` decides) or **lost**
(hidden, and nothing brings it back: summarized away, masked, cleared).

Followed like ``hidden.Tracker``: consecutive requests share most items, so only the items that came
and left are read, each fact keeps how many parts of the request show it, and a fact's fate is judged
again only when that count, or the reference standing for one of its items, changes. A text the policy
made is read line by line, each line once per run (a summary written again at every call is the last
one's lines and a few more), so a replay stays linear in its calls. A fact counts from the call whose
request first reaches the item that states it."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ..conversation import Conversation, Item, Origin, ToolCall, ToolResult, shared
from ..facts.ledger import TYPES, Fact, Ledger, probes
from ..facts.spans import searched_text
from ..rules.refetch import one_off_tools
from .hidden import HiddenUse

KEPT, RECOVERABLE, LOST = "kept", "recoverable", "lost"
FATES = (KEPT, RECOVERABLE, LOST)
_TOKEN = re.compile(r"[\w./~@+-]{3,}")

Counts = dict[str, dict[str, int]]  # type -> fate -> facts


@dataclass(frozen=True)
class Fates:
    """A replay's facts: their fates at the end of the run and at each call where the policy fired
    (``(call, counts)``), and the lost facts the agent used later (``(call, fact)``: at that call its
    reply used a piece of the fact, which its request had lost — the worst case). ``facts`` are the
    ledger's, and ``changes`` says when each one's fate changed (``(call, fact, fate)``, the fact by
    its place in ``facts``; its first is the call that first reached it): each fact's fate at any call
    follows from them, and they are few — a fate changes when the policy fires or a fact is stated again."""

    end: Counts
    firings: tuple[tuple[int, Counts], ...] = ()
    lost_then_used: tuple[tuple[int, Fact], ...] = ()
    facts: tuple[Fact, ...] = ()
    changes: tuple[tuple[int, int, str], ...] = ()


def _anchor(probe: str) -> str:
    tokens = _TOKEN.findall(probe)
    return max(tokens, key=len) if tokens else probe


class FateTracker:
    """Follows one replay's requests and says each fact's fate. Owned by that replay."""

    def __init__(self, conversation: Conversation, ledger: Ledger, references: bool,
                 shared: Callable[[tuple[Item, ...], tuple[Item, ...], int], int] = shared) -> None:
        self._items = conversation.items
        self._facts = ledger.facts
        self._shared = shared
        self._original = {id(item): position for position, item in enumerate(self._items)}
        self._holders: dict[int, list[int]] = {}  # item position -> the facts it states
        for number, fact in enumerate(self._facts):
            for position in fact.items:
                self._holders.setdefault(position, []).append(number)
        self._by_origin = {item.origin: p for p, item in enumerate(self._items) if item.origin is not None}
        self._anchors: dict[str, list[tuple[int, str]]] = {}
        for number, fact in enumerate(self._facts):
            for probe in probes(fact):
                self._anchors.setdefault(_anchor(probe), []).append((number, probe))
        self._followable = references
        self._one_off = one_off_tools(conversation) if references else {}
        self._lines: dict[str, tuple[int, ...]] = {}
        self._named: dict[int, tuple[Item, tuple[int, ...]]] = {}  # made item shown -> the facts it names
        self._made: dict[Origin, Item] = {}
        self._shown = [0] * len(self._facts)
        self._fate: list[str | None] = [None] * len(self._facts)
        self._born = 0
        self._counts: Counts = {kind: dict.fromkeys(FATES, 0) for kind in TYPES}
        self._request: tuple[Item, ...] = ()
        self._used: dict[int, tuple[int, Fact]] = {}
        self._firings: list[tuple[int, Counts]] = []
        self._changes: list[tuple[int, int, str]] = []

    def _line_facts(self, line: str) -> tuple[int, ...]:
        found = self._lines.get(line)
        if found is None:
            candidates = (self._anchors.get(token, ()) for token in set(_TOKEN.findall(line)))
            named = {n for group in candidates for n, probe in group if probe in line}
            found = self._lines[line] = tuple(sorted(named))
        return found

    def _names(self, item: Item) -> tuple[int, ...]:
        """The facts a text the policy made names, read once per item."""
        held = self._named.get(id(item))
        if held is not None and held[0] is item:
            return held[1]
        numbers = tuple(sorted({n for line in searched_text(item).split("\n") for n in self._line_facts(line)}))
        self._named[id(item)] = (item, numbers)
        return numbers

    def _parts(self, item: Item) -> Iterable[int]:
        position = self._original.get(id(item))
        if position is not None and self._items[position] is item:
            return self._holders.get(position, ())
        return self._names(item)

    def _follow(self, request: tuple[Item, ...]) -> set[int]:
        """Take in the next request; the facts whose showing changed."""
        same = self._shared(self._request, request, 0)
        old, new = self._request[same:], request[same:]
        if old and new:
            kept = {id(item) for item in old} & {id(item) for item in new}
            old, new = [i for i in old if id(i) not in kept], [i for i in new if id(i) not in kept]
        changed: set[int] = set()
        for items, step in ((new, 1), (old, -1)):
            for item in items:
                for number in self._parts(item):
                    self._shown[number] += step
                    changed.add(number)
                if id(item) not in self._original and item.origin is not None:
                    if step > 0:
                        self._made[item.origin] = item
                    elif self._made.get(item.origin) is item:
                        del self._made[item.origin]
                    changed.update(self._holders.get(self._by_origin.get(item.origin, -1), ()))
        for item in old:
            if id(item) not in self._original:
                self._named.pop(id(item), None)
        self._request = request
        return changed

    def _followed(self, position: int) -> bool:
        """The item at ``position`` is behind a reference the agent can follow (as ``hidden`` decides)."""
        original = self._items[position]
        if not (self._followable and isinstance(original, ToolCall | ToolResult)
                and original.name not in self._one_off and original.origin is not None):
            return False
        made = self._made.get(original.origin)
        return type(made) is type(original) and made.call_id == original.call_id  # type: ignore[union-attr]

    def _judge(self, call: int, number: int) -> None:
        fact = self._facts[number]
        fate = KEPT if self._shown[number] > 0 else RECOVERABLE if any(map(self._followed, fact.items)) else LOST
        old = self._fate[number]
        if old != fate:
            counts = self._counts[fact.type]
            if old is not None:
                counts[old] -= 1
            counts[fate] += 1
            self._fate[number] = fate
            self._changes.append((call, number, fate))

    def call(self, number: int, start: int, request: tuple[Item, ...], uses: Iterable[HiddenUse],
             fired: bool) -> None:
        """Take in call ``number``'s request (its reply starts at item ``start``) and what its reply
        used that the request had hidden."""
        changed = self._follow(request)
        while self._born < len(self._facts) and self._facts[self._born].item < start:
            changed.add(self._born)
            self._born += 1
        for fact in sorted(n for n in changed if n < self._born):
            self._judge(number, fact)
        for use in uses:
            for fact in self._holders.get(use.item, ()):
                text = self._facts[fact].text
                if self._fate[fact] == LOST and fact not in self._used and (use.span in text or text in use.span):
                    self._used[fact] = (number, self._facts[fact])
        if fired:
            self._firings.append((number, self.counts()))

    def counts(self) -> Counts:
        return {kind: dict(fates) for kind, fates in self._counts.items()}

    def fates(self) -> Fates:
        return Fates(self.counts(), tuple(self._firings), tuple(self._used.values()), self._facts,
                     tuple(self._changes))


def fates_to_json(fates: Fates) -> dict[str, Any]:
    """``replay --json``'s ``facts``: the lost facts the agent used later first, then the totals per type."""
    return {"lost_then_used": [{"call": call, "type": fact.type, "text": fact.text, "item": fact.item}
                               for call, fact in fates.lost_then_used],
            "end": fates.end,
            "firings": [{"call": call, "totals": counts} for call, counts in fates.firings]}
