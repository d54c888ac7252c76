"""What it keeps, as values: a replay's facts (``run.fates``) as the page's *What it keeps* view shows
them — each fact with its fate at the end of the run and where it was stated, the lost facts the agent
used later first (the worst case); the totals per type; and, per type, the share of its facts still
kept or recoverable at each call (the survival line). And the line that says which types an LLM's
summary dropped (``summarize.dropped_facts``).

Everything is read from the replay's ``Fates``: its ``changes`` give each fact's fate at every call,
so nothing is replayed again and the series costs what the changes do, not calls times facts."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from itertools import groupby
from typing import Any

from ..facts.ledger import TYPES
from ..run.fates import FATES, KEPT, LOST, RECOVERABLE, Counts
from ..run.replay import Replay

TYPE_WORDS = {"requirement": "requirements", "path_written": "paths written", "path_read": "paths read",
              "command": "commands", "error": "errors"}
HEAD = 120
_FATE_ORDER = {LOST: 0, RECOVERABLE: 1, KEPT: 2}  # within a type, what the policy took first


@dataclass(frozen=True)
class KeptFact:
    """One fact of the run: its type, text and fate at the end of the run, where it was first stated
    (``item``, a position in the conversation, and ``span``, characters of that item's text), and
    ``used_at``: the call whose reply used it after the policy had lost it (None: not so used)."""

    type: str
    text: str
    fate: str
    item: int
    span: tuple[int, int]
    used_at: int | None = None

    @property
    def kind(self) -> str:
        """The type in words: ``path read``."""
        return self.type.replace("_", " ")

    @property
    def head(self) -> str:
        """The fact's first line, cut to ``HEAD`` characters: a command or an error line can be long."""
        line = self.text.split("\n", 1)[0]
        return line if len(line) <= HEAD else line[:HEAD] + "…"


@dataclass(frozen=True)
class Keeps:
    """What the view shows. ``facts``: the lost-then-used first (by the call that used them), then by
    type (``ledger.TYPES``), lost before recoverable before kept, each in the order stated. ``totals``:
    per type, how many facts end kept, recoverable or lost. ``survival``: the chart's rows, one per type
    at each call where that type's share of facts kept or recoverable changed, and at the last call (a
    step line: the share holds until the next row). ``unreached``: facts stated only in the last reply,
    which no request reached."""

    calls: int
    facts: tuple[KeptFact, ...]
    totals: Counts
    survival: tuple[dict[str, Any], ...]
    unreached: int

    @property
    def lost_then_used(self) -> tuple[KeptFact, ...]:
        return tuple(fact for fact in self.facts if fact.used_at is not None)


def _survival(changes: tuple[tuple[int, int, str], ...], types: list[str], calls: int) -> list[dict[str, Any]]:
    """Per type, its facts' fates followed through the changes: a row where its share moves, and at the end."""
    counts: Counts = {kind: dict.fromkeys(FATES, 0) for kind in TYPES}
    fate: dict[int, str] = {}
    last: dict[str, tuple[int, float]] = {}  # type -> the call and share of its last row
    rows: list[dict[str, Any]] = []

    def row(call: int, kind: str, always: bool = False) -> None:
        fates = counts[kind]
        stated = sum(fates.values())
        share = (fates[KEPT] + fates[RECOVERABLE]) / stated
        if always or last.get(kind, (0, None))[1] != share:
            last[kind] = (call, share)
            rows.append({"call": call, "type": TYPE_WORDS[kind], "share": share, "stated": stated, **fates})

    for call, group in groupby(changes, key=lambda change: change[0]):
        moved = set()
        for _, number, new in group:
            kind = types[number]
            old = fate.get(number)
            if old is not None:
                counts[kind][old] -= 1
            counts[kind][new] += 1
            fate[number] = new
            moved.add(kind)
        for kind in TYPES:
            if kind in moved:
                row(call, kind)
    for kind in TYPES:
        if kind in last and last[kind][0] != calls - 1:
            row(calls - 1, kind, always=True)
    return rows


def what_it_keeps(run: Replay) -> Keeps:
    """The view's values for ``run`` (a replay: its ``facts`` are followed whenever it is made)."""
    if run.facts is None or not run.calls:
        return Keeps(len(run.calls), (), {kind: dict.fromkeys(FATES, 0) for kind in TYPES}, (), 0)
    fates = run.facts
    end: dict[int, str] = {number: fate for _, number, fate in fates.changes}
    used = {(fact.type, fact.text): call for call, fact in fates.lost_then_used}  # (a type's texts are unique)
    facts = [KeptFact(fact.type, fact.text, end[number], fact.item, fact.span, used.get((fact.type, fact.text)))
             for number, fact in enumerate(fates.facts) if number in end]
    order = {kind: rank for rank, kind in enumerate(TYPES)}
    facts.sort(key=lambda fact: (fact.used_at is None, fact.used_at or 0, order[fact.type], _FATE_ORDER[fact.fate]))
    survival = _survival(fates.changes, [fact.type for fact in fates.facts], len(run.calls))
    return Keeps(len(run.calls), tuple(facts), fates.end, tuple(survival), len(fates.facts) - len(end))


def dropped_line(found: Mapping[str, tuple[int, int]]) -> str:
    """One line on an LLM's summary: which fact types it dropped (``summarize.dropped_facts``' figures)."""
    left = [f"{TYPE_WORDS[kind]} ({missing} of {stated})" for kind, (missing, stated) in found.items() if missing]
    if not found:
        return "Facts: the span the endpoint summarized states no requirement, path, command or error."
    if not left:
        return "Facts: the endpoint's summary names every requirement, path, command and error of the span it replaced."
    return (f"Facts the endpoint's summary dropped (not in it word for word): {', '.join(left)}. The request no "
            "longer holds them.")
