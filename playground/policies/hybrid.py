"""Masking, then summarization when the masked request is still at or over ``limit`` — the hybrid
JetBrains found saved a further 7–11% over either alone."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..compaction import DEFAULT_THRESHOLD
from ..conversation import Conversation
from ..meter.tokens import Meter
from ..summarize.call import from_report
from ..summarize.history import DEFAULT_KEEP_STEPS, Carry, SummarySettings
from ..summarize.offline import OfflineSummarizer
from .base import PolicyResult, RunningTotal, unchanged
from .masking import DEFAULT_WINDOW, MaskingPolicy, Memo
from .summarize import summarize_over


@dataclass(frozen=True)
class HybridPolicy:
    window: int = DEFAULT_WINDOW
    limit: int = DEFAULT_THRESHOLD
    keep_steps: int = DEFAULT_KEEP_STEPS
    memo: Memo = field(default_factory=dict, compare=False, repr=False)
    totals: RunningTotal = field(default_factory=RunningTotal, compare=False, repr=False)
    summarizer: OfflineSummarizer = field(default_factory=OfflineSummarizer, compare=False, repr=False)
    carry: Carry | None = field(default_factory=Carry, compare=False, repr=False)  # None: each request whole
    # masks as the masking policy does: a request that extends the last one masks only what crossed the window
    masking: MaskingPolicy = field(init=False, compare=False, repr=False)
    name: ClassVar[str] = "hybrid"

    def __post_init__(self) -> None:
        object.__setattr__(self, "masking", MaskingPolicy(self.window, memo=self.memo))
        SummarySettings(limit=self.limit, keep_steps=self.keep_steps)

    def params(self) -> dict[str, Any]:
        return {"window": self.window, "limit": self.limit, "keep_steps": self.keep_steps}

    def apply(self, conversation: Conversation, meter: Meter) -> PolicyResult:
        masking = self.masking.apply(conversation, meter)
        masked, removed, count = masking.conversation, masking.tokens_lost, masking.fired is not None
        last = self.masking.last  # the request masked before shares its items up to the first output masked now
        total = self.totals.total(masked, meter, (last.before, last.same))
        if self.carry is not None and total >= self.limit:
            self.carry.follows(last.before, last.same, masked.items)
        done = (summarize_over(conversation, masked, self.limit, self.keep_steps, meter, self.summarizer,
                               None if self.carry is None else (self.carry, total)) if total >= self.limit else None)
        if done is None:
            return (PolicyResult(masked, "masking", tokens_lost=removed, kept=masking.kept) if count
                    else unchanged(conversation))
        report = done.report
        self.totals.remember(done.conversation, report.tokens_after, meter)
        fired = "masking+summarization" if count else "summarization"
        return PolicyResult(done.conversation, fired, tokens_lost=removed + report.tokens_before - report.tokens_after,
                            report=report, summarization=from_report(report, meter))
