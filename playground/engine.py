"""The engine: one object that owns what outlives a call — a meter per model (each with its
per-text count cache) and the compaction decision cache — like an httpx ``Client``.

The page keeps one per browser session, the CLI makes one per run, and the module-level
functions (``tokens.count``, ``compaction.compact``, ``pipeline.optimize``) are thin
conveniences over a throwaway one. Nothing here is global, so two sessions never share items.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from .calibration import Calibration
from .compaction import Compaction, DecisionCache, Settings, Step, compact, walk
from .model import Conversation
from .pipeline import Optimized, optimize
from .rules import Rules
from .summarize import Summarizer, SummarySettings
from .tokens import Meter, TokenCount


class Engine:
    """Count, compact and optimize with caches that live as long as this object."""

    def __init__(self) -> None:
        self._meters: dict[str, Meter] = {}
        self.decisions = DecisionCache()
        # Per-model corrections from real usage (calibration.py), applied by this engine's meters.
        self.calibrations: dict[str, Calibration] = {}

    def meter(self, model: str | None) -> Meter:
        """This engine's meter for ``model``: its cache makes a rerun re-count only changed text.
        A meter is remade when the model's calibration changed (set, replaced or removed)."""
        key = model or ""
        calibration = self.calibrations.get(key)
        meter = self._meters.get(key)
        if meter is None or meter.calibration is not calibration:
            meter = self._meters[key] = Meter(model, calibration)
        return meter

    def count(self, conversation: Conversation, model: str | None = None) -> TokenCount:
        return self.meter(model or conversation.model).count(conversation)

    def compact(self, conversation: Conversation, rules: Rules | None = None, settings: Settings | None = None,
                model: str | None = None) -> Compaction:
        return compact(conversation, rules, settings, model, meter=self.meter(model or conversation.model),
                       cache=self.decisions)

    def walk(self, conversation: Conversation, rules: Rules, settings: Settings, model: str | None = None, *,
             detail: bool = True) -> Iterator[Step]:
        """The compaction pass as steps (``compaction.walk``), with this engine's meter and decisions."""
        return walk(conversation, rules, settings, self.meter(model or conversation.model), self.decisions,
                    detail=detail)

    def optimize(self, conversation: Conversation, rules: Rules, settings: Settings,
                 summary: SummarySettings | None = None, summarizer: Summarizer | None = None,
                 model: str | None = None, cache: Mapping[tuple[str, str], str] | None = None,
                 prefer: str | None = None) -> Optimized:
        return optimize(conversation, rules, settings, summary, summarizer, model, cache, prefer,
                        meter=self.meter(model or conversation.model), decisions=self.decisions)
