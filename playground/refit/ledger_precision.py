"""How right the ledger's extraction is (``facts.ledger``), measured on hand-labelled facts from real runs
(``tests/labels/ledger.json``): per type, the share of the labelled facts it still extracts that are real
(precision), and of the real facts, labelled or found missing by reading, the share it extracts (recall).
Used by the test that holds the figures in docs/ledger.md and by ``scripts/benchmark_ledger.py``, which
prints them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..conversation import Conversation
from ..facts.ledger import Ledger


@dataclass(frozen=True)
class Extraction:
    """One type's figures: labelled facts still extracted and of those real (precision); on the runs read
    whole for misses, the real facts it extracts and those it missed (recall)."""

    type: str
    extracted: int
    real: int
    caught: int
    missed: int

    @property
    def precision(self) -> float:
        return self.real / self.extracted if self.extracted else 0.0

    @property
    def recall(self) -> float:
        return self.caught / (self.caught + self.missed) if self.caught + self.missed else 0.0


def measure(labels: Mapping[str, Any], load: Callable[[str], Conversation]) -> dict[str, Extraction]:
    """Extract every labelled run's ledger again and count, per type, the labelled facts found."""
    cases, missed = labels["cases"], labels["missed"]
    found: set[tuple[str, str, str]] = set()
    for source in sorted({case["source"] for case in cases} | {miss["source"] for miss in missed}):
        found |= {(source, fact.type, fact.text) for fact in Ledger.of(load(source)).facts}
    figures = {}
    for kind in dict.fromkeys(case["type"] for case in cases):
        still = [case for case in cases if case["type"] == kind and (case["source"], kind, case["text"]) in found]
        read = set(labels["recall_from"].get(kind, ()))  # the runs read whole for what it missed
        real = [case for case in cases if case["type"] == kind and case["real"] and case["source"] in read]
        caught = sum((case["source"], kind, case["text"]) in found for case in real)
        misses = [miss for miss in missed if miss["type"] == kind and (miss["source"], kind, miss["text"]) not in found]
        figures[kind] = Extraction(kind, len(still), sum(case["real"] for case in still), caught,
                                   len(real) - caught + len(misses))
    return figures
