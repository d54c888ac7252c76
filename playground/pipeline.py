"""The whole optimizer, in the book's order: count, compact behind the threshold, and only if
the request is still too large, summarize the older history."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from .compaction import Compaction, DecisionCache, Settings, compact
from .model import Conversation
from .rules import Rules
from .summarize import OfflineSummarizer, Summarization, Summarizer, SummarySettings, check_limit, run
from .tokens import Meter


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
    summarization: Summarization | None  # None: summarization is off, or the request was below the threshold

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
