"""The whole optimizer, in the book's order: count, compact behind the threshold, and only if
the request is still too large, summarize the older history."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from .compaction import Compaction, DecisionCache, Settings, compact
from .model import Conversation
from .rules import Rules
from .summarize import OfflineSummarizer, Summarization, Summarizer, SummarySettings, run
from .tokens import Meter


@dataclass(frozen=True)
class Optimized:
    conversation: Conversation  # what to send
    compaction: Compaction
    summarization: Summarization | None  # None: summarization is off, or the request was below the threshold


def optimize(conversation: Conversation, rules: Rules, settings: Settings, summary: SummarySettings | None = None,
             summarizer: Summarizer | None = None, model: str | None = None,
             cache: Mapping[tuple[str, str], str] | None = None, prefer: str | None = None, *,
             meter: Meter | None = None, decisions: DecisionCache | None = None) -> Optimized:
    """Compaction, then — when ``summary`` is given and the request is still at or over its
    limit — summarization (offline unless a summarizer is given; see ``summarize.run`` for the
    cache of summaries already made)."""
    counter = meter or Meter(model or conversation.model)
    compacted = compact(conversation, rules, settings, model, meter=counter, cache=decisions)
    if summary is None or compacted.report.stage == "below_threshold":
        return Optimized(compacted.conversation, compacted, None)
    done = run(conversation, compacted.conversation, summary, summarizer or OfflineSummarizer(), counter, cache,
               prefer)
    return Optimized(done.conversation, compacted, done)
