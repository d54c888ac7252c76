"""The engine: the whole optimizer in the book's order — count, compact behind the threshold,
and only if the request is still too large, summarize the older history (``optimize``) — and
one object that owns what outlives a call — a meter per model (each with its
per-text count cache) and the compaction decision cache — like an httpx ``Client``.

The page keeps one per browser session, the CLI makes one per run, and the module-level
functions (``tokens.count``, ``compaction.compact``, ``engine.optimize``) are thin
conveniences over a throwaway one. Nothing here is global, so two sessions never share items.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from .compaction import Compaction, DecisionCache, Settings, Step, compact, walk
from .conversation import Conversation
from .meter.factor import Calibration
from .meter.tokens import Meter, TokenCount
from .rules.ruleset import Rules
from .summarize.history import Summarizer, SummaryResult, SummarySettings, check_limit, run
from .summarize.offline import OfflineSummarizer


@dataclass(frozen=True)
class Stage:
    """One point on the way from the request to what is sent, and what the step to it saved.
    ``lossy``: the step cannot be undone by calling a tool (a summary), unlike compaction."""

    key: str  # "before", "after_compaction", "final"
    label: str
    tokens: int
    saved: int  # tokens the step to this stage removed (0 for "before")
    lossy: bool


@dataclass(frozen=True)
class Optimized:
    conversation: Conversation  # what to send
    compaction: Compaction
    summarization: SummaryResult | None  # None: summarization is off, or the request was below the threshold

    @property
    def tokens_before(self) -> int:
        return self.compaction.report.tokens_before

    @property
    def tokens_after_compaction(self) -> int:
        return self.compaction.report.tokens_after

    @property
    def tokens_final(self) -> int:
        """The request as sent: after the summary when one was applied, else after compaction."""
        done = self.summarization
        return done.report.tokens_after if done is not None else self.tokens_after_compaction

    @property
    def stages(self) -> tuple[Stage, Stage, Stage]:
        """Before → after compaction → after summarization, so a lossy summary's saving is never
        shown as compaction's. The last stage equals the second when no summary was applied."""
        before, compacted, final = self.tokens_before, self.tokens_after_compaction, self.tokens_final
        return (Stage("before", "Before", before, 0, False),
                Stage("after_compaction", "After compaction", compacted, before - compacted, False),
                Stage("final", "After summarization", final, compacted - final, True))


def optimize(conversation: Conversation, rules: Rules, settings: Settings, summary: SummarySettings | None = None,
             summarizer: Summarizer | None = None, model: str | None = None,
             cache: Mapping[tuple[str, str], str] | None = None, prefer: str | None = None, *,
             meter: Meter | None = None, decisions: DecisionCache | None = None) -> Optimized:
    """Compaction, then — when ``summary`` is given and the request is still at or over its
    limit — summarization (offline unless a summarizer is given; see ``summarize.run`` for the
    cache of summaries already made). A summary limit below the threshold is refused
    (InputError): summarization is the last resort after compaction."""
    if summary is not None:
        check_limit(summary.limit, settings.threshold)
    counter = meter or Meter(model or conversation.model)
    compacted = compact(conversation, rules, settings, model, meter=counter, cache=decisions)
    if summary is None or compacted.report.stage == "below_threshold":
        return Optimized(compacted.conversation, compacted, None)
    done = run(conversation, compacted.conversation, summary, summarizer or OfflineSummarizer(), counter, cache,
               prefer)
    return Optimized(done.conversation, compacted, done)


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
