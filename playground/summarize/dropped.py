"""What a summary dropped of the ledger: the facts stated in the span it replaced that its text does
not name.

The offline summary keeps every requirement and file written in sections of its own (``kept``); an
LLM's summary keeps what the model chose to write. Which of the span's facts made it is read as the
fates of a replay read a summary (``facts.ledger.probes``): the text holds the start of the fact,
word for word. So a requirement the model put in other words counts as dropped — the agent would
read the paraphrase, not the user's words — and a path or an error line it copied counts as kept."""

from __future__ import annotations

from collections.abc import Iterable

from ..conversation import Item
from ..facts.ledger import TYPES, Reader, probes


def dropped_facts(items: Iterable[Item], text: str) -> dict[str, tuple[int, int]]:
    """Per fact type stated in ``items`` (a summary's span): how many of its facts ``text`` does not
    name, and how many the span states, in ``ledger.TYPES`` order; a type the span does not state is left out."""
    reader = Reader()
    for position, item in enumerate(items):
        reader.add(position, item)
    found: dict[str, list[int]] = {}
    for fact in reader.ledger().facts:
        counts = found.setdefault(fact.type, [0, 0])
        counts[0] += not any(probe in text for probe in probes(fact))
        counts[1] += 1
    return {kind: (found[kind][0], found[kind][1]) for kind in TYPES if kind in found}
