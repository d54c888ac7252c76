"""The run as it ran: at every call, the request the agent really sent, from its own log.

Where the log shows the agent compacting its own context (``Conversation.compactions``: Claude
Code's compact boundaries, Codex's ``compacted`` lines, OpenHands' condensations), every call after
a compaction sent what the agent kept, what it added (its summary) and the log's items since — not
the whole ever-growing history that ``none`` replays. This policy sends exactly that, so ``compare``
can put what the agent really did beside what ours would have done. The items it drops are lost
(the agent's summary stands for them), and the agent's summarization call is billed like ours
(``summarize.call.estimate``: the agent's context before it compacted as the input, with our
summarization prompt standing for the agent's, and the summary the log holds as the output). On a
conversation without compactions it changes nothing: it is ``none``.

A replay hands a policy either the log's items up to a call (``per-call``) or its own last request
plus what came since (``stored``); both end with the log's item before the call, which says which
call this is, so both modes send the same requests.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..conversation import AgentCompaction, Conversation, Item, turn_starts
from ..meter.tokens import Meter
from ..summarize.call import SummaryCall, estimate
from .base import PolicyResult, unchanged


class _Positions:
    """Where each item of a log stands (by identity) and where its calls start, for the log seen last:
    a replay asks at every call, so the map is built once per log, not once per call. Owned by one
    policy; it holds the log, so an id in the map is never another object's."""

    def __init__(self) -> None:
        self._log: tuple[Item, ...] | None = None
        self._at: dict[int, int] = {}
        self._starts: list[int] = []

    def of(self, log: tuple[Item, ...]) -> tuple[dict[int, int], list[int]]:
        if log is not self._log:
            self._log, self._at, self._starts = log, {id(item): p for p, item in enumerate(log)}, turn_starts(log)
        return self._at, self._starts


def sent_after(record: AgentCompaction, end: int) -> tuple[Item, ...]:
    """The request the agent sent for the call that starts at ``end`` in its log, after ``record``."""
    log = record.log
    return (*(log[p] for p in record.kept), *record.added, *log[record.position:end])


def latest(records: tuple[AgentCompaction, ...], end: int) -> AgentCompaction | None:
    """The agent's newest compaction before the call that starts at ``end``."""
    before = [record for record in records if record.position <= end]
    return before[-1] if before else None


def held(conversation: Conversation) -> Conversation:
    """The context the agent held at the end of its log: after its last compaction, only what it kept,
    added and went on with — what the page's meters measure, since the whole history such a log
    holds was never one request. A log without compactions is its own context (the same object)."""
    record = latest(conversation.compactions, len(conversation.items))
    if record is None:
        return conversation
    return conversation.with_items(sent_after(record, len(conversation.items)))


@dataclass(frozen=True)
class AsItRanPolicy:
    positions: _Positions = field(default_factory=_Positions, compare=False, repr=False)
    name: ClassVar[str] = "as-it-ran"

    def params(self) -> dict[str, Any]:
        return {}

    def apply(self, conversation: Conversation, meter: Meter) -> PolicyResult:
        records, items = conversation.compactions, conversation.items
        if not records or not items:
            return unchanged(conversation)
        at, starts = self.positions.of(records[0].log)
        last = at.get(id(items[-1]))  # the request ends where its call starts in the log
        end = -1 if last is None else last + 1
        record = latest(records, end)
        if record is None:
            return unchanged(conversation)
        target = sent_after(record, end)
        if items == target:
            return unchanged(conversation)  # already the agent's request (stored mode, after the first call)
        sent = {id(item) for item in target}
        dropped = sum(tokens for item, tokens in zip(items, meter.items(items), strict=True) if id(item) not in sent)
        after = bisect.bisect_left(starts, record.position)
        first = after < len(starts) and starts[after] == end  # the first call after it: its summary is billed here
        return PolicyResult(conversation.with_items(target), "agent compaction", tokens_lost=dropped,
                            summarization=_summarization(records, record, meter) if first else None)


def _summarization(records: tuple[AgentCompaction, ...], record: AgentCompaction, meter: Meter) -> SummaryCall | None:
    """The agent's call that wrote its summary: what it had in context before compacting (its request
    after the compaction before, up to this one) in, the summary it wrote out."""
    if record.trigger == "truncation":
        return None  # a cut by rule (Cline's context manager deletes a range): no model wrote anything
    log = record.log
    summary = log[record.position] if record.summary and record.position < len(log) else (
        record.added[-1] if record.added else None)
    if summary is None:
        return None
    earlier = latest(records, record.position - 1)
    context = sent_after(earlier, record.position) if earlier else log[:record.position]
    return estimate(sum(meter.items(context)), meter.items((summary,))[0], meter)
