"""Where a person's own conversation starts: the playground's defaults for its model, stated once.

A conversation someone pastes, uploads or builds is counted with its own model (or the nearest
listed one of the same provider) and compacted with these settings — never with whatever preset or
lesson ran last: a preset's threshold is set for that preset's size (5,000 of a 200,000 window
summarized a 115k-token log 93.7% away) and a lesson's ``keep_recent`` for its task. The page says
where each setting came from (``provenance``), so a number is never a mystery.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ..rules.ruleset import Rules, book_rules
from ..run.prices import PriceTable

BOOK_THRESHOLD = 50_000  # the book's threshold
WINDOW_SHARE = 0.5  # at most half the context window: compaction fires while there is room for the reply
KEEP_RECENT = 0  # the book's pass: the not-yet-read guard alone protects the newest results

# The settings whose origin the page names, in the order it names them.
SETTINGS = ("model", "threshold", "keep_recent", "errors", "rules")
YOU = "you changed it"


@dataclass(frozen=True)
class Defaults:
    """The settings a person's own conversation starts from."""

    model: str
    threshold: int
    keep_recent: int = KEEP_RECENT
    compact_errors: bool = False
    detect_errors: bool = True
    rules: Rules = field(default_factory=book_rules)

    def describe(self) -> str:
        """The defaults in words, for the page's caption (docs/page.md says the same)."""
        why = "the book's" if self.threshold == BOOK_THRESHOLD else f"half of {self.model}'s context window"
        return (f"threshold {self.threshold:,} ({why}), keep_recent {self.keep_recent}, error results kept, "
                "the book's rules")


def defaults_for(model: str, table: PriceTable) -> Defaults:
    """The defaults for ``model``: the book's 50,000-token threshold, capped at half the model's
    context window (a threshold the request can never reach before the window is full compacts
    nothing), ``keep_recent`` 0, error results kept, the book's rules."""
    window = table.get(model).context_window  # (None: the catalogue does not know it, so the book's alone)
    return Defaults(model=model, threshold=BOOK_THRESHOLD if window is None else
                    min(BOOK_THRESHOLD, int(window * WINDOW_SHARE)))


def provenance(origins: Mapping[str, str]) -> str:
    """Where each setting came from, settings of one origin together
    (``model, threshold and rules: the preset “Coding agent”; keep_recent: you changed it``)."""
    groups: dict[str, list[str]] = {}
    for name in SETTINGS:
        if name in origins:
            groups.setdefault(origins[name], []).append(name)
    return "; ".join(f"{names[0] if len(names) == 1 else ', '.join(names[:-1]) + ' and ' + names[-1]}: {origin}"
                     for origin, names in groups.items())
