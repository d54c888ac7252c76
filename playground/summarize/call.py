"""A summary is not free: the LLM call that writes it, as tokens a replay bills.

Every summarizing policy (ours and the agents') reports one ``SummaryCall`` when it summarizes:
the span it replaces is the call's input (with the summarization prompt), the summary its output.
No LLM is called here, so both are estimates, said how in ``estimate``: the input is the span as
the meter counts it in the request (held to the summarizer's own input cap where the policy has
one), plus the prompt; the output is the summary the offline summarizer wrote, counted by the same
meter. Billed (``run.prices.summary_cost``) at the summarizer's list prices (from the
catalogue, ``run.prices``), uncached: the summarization request is a different prompt from the agent's.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..meter.tokens import Meter
from .history import DEFAULT_PROMPT, DEFAULT_TRANSCRIPT_BUDGET, SummaryReport


@dataclass(frozen=True)
class SummaryCall:
    """One summarization call: what the summarizer read and what it wrote, in tokens."""

    input_tokens: int
    output_tokens: int


def estimate(span_tokens: int, summary_tokens: int, meter: Meter, input_cap: int | None = None) -> SummaryCall:
    """The call that would have written a summary of ``span_tokens`` tokens into one of
    ``summary_tokens``: the span (at most ``input_cap`` tokens of it, when the summarizer trims its
    input) and the summarization prompt in, the summary out."""
    read = span_tokens if input_cap is None else min(span_tokens, input_cap)
    return SummaryCall(read + meter.text(DEFAULT_PROMPT), summary_tokens)


def from_report(report: SummaryReport, meter: Meter) -> SummaryCall:
    """The call behind a summarization of ours (``summarize.run``): our summarizer reads at most
    its transcript budget of the span."""
    return estimate(report.span_tokens, report.summary_tokens, meter, DEFAULT_TRANSCRIPT_BUDGET)
