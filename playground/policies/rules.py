"""The book's way: the two rule tables behind the threshold, and — when the compacted request is
still at or over it — summarization of the older history (``engine.optimize``). References
can be undone by calling the tool again (retrievable), unless the tool's output cannot be
fetched again (``refetch``); a summary cannot be undone (lost)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

from ..compaction import DEFAULT_THRESHOLD, DecisionCache, Settings, apply_rules
from ..conversation import Conversation
from ..engine import optimize
from ..meter.tokens import Meter
from ..rules.ruleset import Rules, book_rules
from ..summarize.call import from_report
from ..summarize.history import DEFAULT_KEEP_STEPS, Carry, SummaryReport, SummarySettings, check_limit
from ..summarize.offline import OfflineSummarizer
from .base import PolicyResult, RunningTotal, unchanged
from .frontier import Frontier
from .summarize import summarize_over


@dataclass(frozen=True)
class RulesPolicy:
    rules: Rules = field(default_factory=book_rules)
    threshold: int = DEFAULT_THRESHOLD
    keep_recent: int = 0
    compact_errors: bool = False  # let the rules replace error results too
    detect_errors: bool = True  # recognise errors by the rules' error patterns as well as the format's flag
    summarize: bool = True
    keep_steps: int = DEFAULT_KEEP_STEPS
    limit: int | None = None  # summarize at or above this many tokens; None: at the threshold, as the book does
    label: str = "book"  # where the rules came from, for tables
    # Owned here so a replay's thousand applications re-decide only items they have not seen.
    decisions: DecisionCache = field(default_factory=DecisionCache, compare=False, repr=False)
    totals: RunningTotal = field(default_factory=RunningTotal, compare=False, repr=False)
    frontier: Frontier = field(default_factory=Frontier, compare=False, repr=False)
    summarizer: OfflineSummarizer = field(default_factory=OfflineSummarizer, compare=False, repr=False)
    # summarizing at every call (per call, once past the limit) carries the cut, the counts and the
    # offline summary's reading from the last call; None: a request to summarize is walked and summarized whole
    carry: Carry | None = field(default_factory=Carry, compare=False, repr=False)
    name: ClassVar[str] = "rules"
    # its replacements are references a tool call follows (``hidden``: retrievable unless the tool is one-off)
    references: ClassVar[bool] = True

    def __post_init__(self) -> None:
        self.settings()  # bad numbers fail when the policy is made, with located messages
        if self.summarize:
            check_limit(self.summary().limit, self.threshold, where="limit")

    def settings(self) -> Settings:
        """The compaction pass's settings, every one of them from this policy's own fields (the
        error switches once were left out, so the Run tab compacted fewer items than the page)."""
        return Settings(**{f.name: getattr(self, f.name) for f in fields(Settings)})

    def summary(self) -> SummarySettings:
        return SummarySettings(limit=self.threshold if self.limit is None else self.limit, keep_steps=self.keep_steps)

    def params(self) -> dict[str, Any]:
        return {"rules": self.label, "threshold": self.threshold, "keep_recent": self.keep_recent,
                "compact_errors": self.compact_errors, "detect_errors": self.detect_errors, "summarize": self.summarize,
                "limit": self.summary().limit, "keep_steps": self.keep_steps}

    def apply(self, conversation: Conversation, meter: Meter) -> PolicyResult:
        total = self.totals.total(conversation, meter)
        if total < self.threshold:  # below it nothing changes: skip the pass
            return unchanged(conversation)
        return self._extended(conversation, total, meter) or self._whole(conversation, meter)

    def _extended(self, conversation: Conversation, total: int, meter: Meter) -> PolicyResult | None:
        """The pass over a request that extends the last one walked: only from the frontier on
        (``frontier``), the total known, and the summary (when the compacted request is still at
        or over the limit) from the carry. None when it does not extend one (or, without a carry,
        when summarization may be needed: it reads the whole request)."""
        plan = self.frontier.plan(conversation.items, conversation.grew)
        if plan is None or plan.start == 0:
            return None
        rest, edits, skipped = apply_rules(conversation.with_items(conversation.items[plan.start:]), self.rules,
                                           self.settings(), meter, self.decisions)
        new = [(plan.start + e.position, e.tool, e.tokens_before - e.tokens_after) for e in edits]
        saved = plan.kept_saved + sum(tokens for _, _, tokens in new)  # per call, the kept edits are the run's
        over = self.summarize and total - saved >= self.summary().limit
        if over and self.carry is None:
            return None
        sent = plan.prefix + rest.items
        self.frontier.walked(conversation.items, sent, ((plan.start + s.position, s.reason) for s in skipped), new,
                             kept_before=plan.start if plan.keeps else None)
        compacted = conversation.with_items(sent)
        if over:  # the carry compares the compacted request with the last from the frontier on
            self.carry.follows(plan.source, plan.start, compacted.items)  # type: ignore[union-attr]
        lost = plan.kept_lost + sum(tokens for _, tool, tokens in new if tool in plan.one_off)
        done = (summarize_over(conversation, compacted, self.summary().limit, self.keep_steps, meter, self.summarizer,
                               (self.carry, total - saved)) if over else None)  # type: ignore[arg-type]
        if done is not None:
            return self._summarized(done.conversation, done.report, bool(plan.kept or new), lost, saved - lost, meter,
                                    0 if plan.keeps else min(plan.start, done.report.start or 0))
        if not plan.kept and not new:
            return unchanged(conversation)
        self.totals.remember(compacted, total - saved, meter)
        return PolicyResult(compacted, "compaction", tokens_lost=lost, tokens_retrievable=saved - lost,
                            kept=0 if plan.keeps else plan.start)  # stored: the items before the frontier stay

    def _whole(self, conversation: Conversation, meter: Meter) -> PolicyResult:
        summary = self.summary() if self.summarize else None
        done = optimize(conversation, self.rules, self.settings(), summary, self.summarizer, meter=meter,
                        decisions=self.decisions)
        report = done.compaction.report
        compacted = bool(report.edits)
        summary_report = done.summarization.report if done.summarization is not None else None
        summarized = (summary_report is not None and summary_report.status == "summarized"
                      and summary_report.tokens_after < report.tokens_after)
        # the frontier follows the compacted request, not the summary: per call, the next request extends the
        # one this was given, and its pass starts from the frontier however often the older history is summarized
        self.frontier.walked(conversation.items, done.compaction.conversation.items,
                             ((s.position, s.reason) for s in report.skipped),
                             ((e.position, e.tool, e.tokens_before - e.tokens_after) for e in report.edits))
        if summarized:
            return self._summarized(done.conversation, summary_report, compacted,  # type: ignore[arg-type]
                                    report.tokens_lost, report.tokens_retrievable, meter, 0, done)
        if not compacted:
            return unchanged(conversation, done)
        self.totals.remember(done.compaction.conversation, report.tokens_after, meter)
        # a reference to a tool whose output calling again does not bring back is as lost as a summary
        return PolicyResult(done.compaction.conversation, "compaction", tokens_lost=report.tokens_lost,
                            tokens_retrievable=report.tokens_retrievable, report=done)

    def _summarized(self, final: Conversation, summary: SummaryReport, compacted: bool, lost: int, retrievable: int,
                    meter: Meter, kept: int, report: Any = None) -> PolicyResult:
        """The request with its older history summarized after the rules: what the summary took
        is lost, beside what the rules' references lost and left retrievable."""
        self.totals.remember(final, summary.tokens_after, meter)
        return PolicyResult(final, "compaction+summarization" if compacted else "summarization",
                            tokens_lost=summary.tokens_before - summary.tokens_after + lost,
                            tokens_retrievable=retrievable, report=report if report is not None else summary,
                            summarization=from_report(summary, meter), kept=kept)
