"""Summarization alone (OpenHands-style): when the request reaches ``limit`` tokens, keep the
first user message (and the system messages) and the newest ``keep_steps`` steps, and replace the
rest with one summary — here the offline extractive summarizer, so a replay needs no LLM. A
summary cannot be undone by calling a tool: what it replaced counts as lost.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..compaction import DEFAULT_THRESHOLD
from ..conversation import Conversation
from ..meter.tokens import Meter
from ..summarize.call import from_report
from ..summarize.history import DEFAULT_KEEP_STEPS, Carry, SummaryResult, SummarySettings, run
from ..summarize.offline import OfflineSummarizer
from .base import PolicyResult, RunningTotal, unchanged


def summarize_over(original: Conversation, current: Conversation, limit: int, keep_steps: int,
                   meter: Meter, summarizer: OfflineSummarizer, carry: tuple[Carry, int] | None = None
                   ) -> SummaryResult | None:
    """``current`` summarized when it is at or over ``limit`` — the summary read from ``original``,
    whose items stand at the same positions — or None when that did not make it smaller.
    ``summarizer`` is the policy's own, so what it read of each item is read once per run, and
    ``carry`` its ``Carry`` with ``current``'s total, so the cut and the counts follow the run."""
    done = run(original, current, SummarySettings(limit=limit, keep_steps=keep_steps), summarizer, meter,
               carry=carry)
    report = done.report
    return done if report.status == "summarized" and report.tokens_after < report.tokens_before else None


@dataclass(frozen=True)
class SummarizePolicy:
    limit: int = DEFAULT_THRESHOLD
    keep_steps: int = DEFAULT_KEEP_STEPS
    totals: RunningTotal = field(default_factory=RunningTotal, compare=False, repr=False)
    summarizer: OfflineSummarizer = field(default_factory=OfflineSummarizer, compare=False, repr=False)
    carry: Carry | None = field(default_factory=Carry, compare=False, repr=False)  # None: each request whole
    name: ClassVar[str] = "summarize"

    def __post_init__(self) -> None:
        SummarySettings(limit=self.limit, keep_steps=self.keep_steps)  # the same checks, the same messages

    def params(self) -> dict[str, Any]:
        return {"limit": self.limit, "keep_steps": self.keep_steps}

    def apply(self, conversation: Conversation, meter: Meter) -> PolicyResult:
        total = self.totals.total(conversation, meter)
        if total < self.limit:
            return unchanged(conversation)
        grew = conversation.grew
        if self.carry is not None and grew is not None:  # (the carry then compares only what was appended)
            self.carry.follows(grew[0], len(grew[0]), conversation.items)
        done = summarize_over(conversation, conversation, self.limit, self.keep_steps, meter, self.summarizer,
                              None if self.carry is None else (self.carry, total))
        if done is None:
            return unchanged(conversation)
        report = done.report
        self.totals.remember(done.conversation, report.tokens_after, meter)
        return PolicyResult(done.conversation, "summarization", tokens_lost=report.tokens_before - report.tokens_after,
                            report=report, summarization=from_report(report, meter))
