"""Policies side by side: the same run replayed under each policy, one row each."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..conversation import Conversation
from ..facts.ledger import Ledger
from ..meter.tokens import Meter
from ..policies import AsItRanPolicy, NonePolicy, Policy
from ..policies.provenance import source_of
from .fates import Counts
from .hidden import SpanIndex, calls_with, lost_calls
from .prices import Price, rounded
from .replay import AS_RAN, FULL, Progress, Replay, baseline_of, call_starts, replay


@dataclass(frozen=True)
class Row:
    policy: str
    params: dict[str, Any]
    tokens_final: int  # the last call's prompt
    tokens_billed: int  # prompt tokens over the whole run
    cached_tokens: int  # of those, read from the prompt cache
    cost: float  # whole run, prompt and replies, and the summarization calls
    tokens_lost: int
    tokens_retrievable: int
    fired: int  # calls where the policy changed the request
    summarization_cost: float = 0.0  # the LLM calls that wrote summaries, at the summarizer's prices
    hidden_used_calls: int = 0  # calls whose reply used a span their request had hidden (``hidden``)
    hidden_used_lost: int = 0  # of those, calls that used one a tool call cannot bring back
    baseline: bool = False  # the row the others are measured against: the run as it ran, or none where it is that
    priced_as: str | None = None  # the catalogue's id of the price used; None: the price is unknown (cost NaN)
    facts: Counts | None = None  # the ledger's facts at the end: per type, kept / recoverable / lost (``fates``)
    facts_lost_then_used: int = 0  # lost facts the agent used later: the worst case


def compare(conversation: Conversation, policies: Iterable[Policy], meter: Meter, price: Price, *,
            mode: str = "stored", cache: str | None = None, summarizer: Price | None = None,
            baseline: str = "auto", progress: Progress | None = None) -> tuple[Row, ...]:
    """One row per policy; summaries billed at ``summarizer``'s prices (default: ``price``). The baseline
    row is ``as-it-ran`` where the log shows (or its bills imply) the agent cutting its own context, else
    ``none`` (``replay.baseline_of``); each row's replay needs no baseline side of its own. ``progress``
    is told the calls replayed so far over every policy, and how many that makes in all."""
    spans = SpanIndex.of(conversation)  # every policy replays the same items: their spans are read once
    ledger = Ledger.of(conversation)  # and their facts
    row = baseline_row(conversation, baseline)
    chosen = tuple(policies)
    calls = len(call_starts(conversation.items)) if progress is not None else 0

    def told(number: int) -> Progress | None:
        """The progress of the ``number``-th policy's replay, as calls of the whole comparison."""
        if progress is None:
            return None
        return lambda done, _: progress(number * calls + done, len(chosen) * calls)

    return tuple(row_of(replay(conversation, policy, meter, price, mode=mode, cache=cache, summarizer=summarizer,
                               spans=spans, baseline=FULL, ledger=ledger, progress=told(number)), row)
                 for number, policy in enumerate(chosen))


def baseline_row(conversation: Conversation, baseline: str = "auto") -> str:
    """The policy whose row is the baseline: the run as it ran where the agent cut its own context."""
    return AsItRanPolicy.name if baseline_of(conversation, baseline) == AS_RAN else NonePolicy.name


def row_of(run: Replay, baseline: str = NonePolicy.name) -> Row:
    """One replay as a row of the comparison (``evaluate`` makes its rows with it too); ``baseline``
    names the policy whose row is the baseline (``baseline_row``)."""
    totals = run.totals
    hidden = run.hidden_used
    return Row(run.policy, run.params, run.calls[-1].tokens_with if run.calls else 0, totals.tokens_with,
               totals.cached_tokens_with, totals.cost_with, run.tokens_lost, run.tokens_retrievable,
               sum(1 for call in run.calls if call.fired), totals.summarization_cost, calls_with(hidden),
               lost_calls(hidden), run.policy == baseline, run.price.priced_as, run.facts.end if run.facts else None,
               len(run.facts.lost_then_used) if run.facts else 0)


def rows_to_json(rows: Iterable[Row]) -> list[dict[str, Any]]:
    return [{"strategy": row.policy, "params": row.params, "tokens_final": row.tokens_final,
             "tokens_billed": row.tokens_billed, "cached_tokens": row.cached_tokens, "cost": rounded(row.cost),
             "tokens_lost": row.tokens_lost, "tokens_retrievable": row.tokens_retrievable, "fired": row.fired,
             "summarization_cost": rounded(row.summarization_cost), "source": source_of(row.policy),
             "hidden_used_calls": row.hidden_used_calls, "hidden_used_lost": row.hidden_used_lost,
             "baseline": row.baseline, "priced_as": row.priced_as,
             **({"facts": {"lost_then_used": row.facts_lost_then_used, **row.facts}} if row.facts else {})}
            for row in rows]
