"""Suggested rules checked on the run they are for: a row goes when the agent used again, later
in this very run, what the row would hide — and the row saves too little for it.

``suggest`` judges rows by arguments and sizes alone. The run says more: it records what the agent
did next. Replayed with the suggested rows (``hidden``: the spans of an earlier item a reply quoted
that its request had replaced), some rows hide things the agent keeps working with — an agent's
next edit copies its last edit's ``new_string``, and the edited snippet an edit result shows is its
latest view of the file. A reference still lets it fetch them again, but each such call costs a
re-fetch and a turn. So, row by row, the check weighs what a row saves against the calls whose
reply used what it hid: leaving the row out, the share of the run's prompt tokens no longer saved
over the share of the run's calls no longer hidden-then-used (both shares, so a run twice as long
with the same habits weighs the same). The row with the lowest figure goes if that is under
``BAR``; then the rest are weighed again, as rows hide overlapping things.

The replay is at threshold 0 and ``keep_recent`` 3 (every row at its full effect once over any
threshold, the newest tool uses kept, as an agent that keeps its working set does), stored, with
no summary: what is measured is the rows alone.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..conversation import Conversation
from ..meter.tokens import Meter
from ..policies import RulesPolicy
from ..rules.ruleset import load_rules
from ..run.hidden import SpanIndex, calls_with
from ..run.prices import read_prices
from ..run.replay import replay
from .suggest import Row, Suggestion, suggest_rules

BAR = 1.0  # a row must save at least this share of the run's prompt tokens per share of its calls it makes
# use something hidden: 5% of the calls hidden-then-used is worth it for 5% of the prompt tokens, not for 2%
KEEP_RECENT = 3


@dataclass(frozen=True)
class _Measure:
    saved: float  # the share of the run's prompt tokens saved (against no policy)
    hidden: float  # the share of the run's calls whose reply used something their request had hidden
    hidden_calls: int


class _Run:
    """One conversation, replayed under sets of rows: its prices and spans read once."""

    def __init__(self, conversation: Conversation, meter: Meter) -> None:
        self.conversation, self.meter = conversation, meter
        self.price = read_prices().get(conversation.model or meter.choice.model or None, conversation.format)
        self.spans = SpanIndex.of(conversation)

    def measure(self, rows: tuple[Row, ...]) -> _Measure:
        rules = load_rules(Suggestion(rows, ()).rules_json())
        run = replay(self.conversation, RulesPolicy(rules=rules, threshold=0, keep_recent=KEEP_RECENT,
                                                    summarize=False), self.meter, self.price, spans=self.spans)
        calls = calls_with(run.hidden_used)
        base = run.totals.tokens_without  # every replay counts the run without a policy beside it
        saved = 1 - run.totals.tokens_with / base if base else 0.0
        return _Measure(saved, calls / len(run.calls) if run.calls else 0.0, calls)


def check(conversation: Conversation, suggestion: Suggestion, meter: Meter) -> Suggestion:
    """``suggestion`` without the rows the run argues against, each named in the notes with what
    it would have saved and hidden."""
    if not suggestion.rows or not conversation.items:
        return suggestion
    run = _Run(conversation, meter)
    rows, notes = suggestion.rows, list(suggestion.notes)
    whole = run.measure(rows)
    while whole.hidden_calls and len(rows) > 1:
        weighed = []
        for row in rows:
            rest = tuple(r for r in rows if r is not row)
            without = run.measure(rest)
            spared = whole.hidden_calls - without.hidden_calls
            if spared > 0:
                weighed.append(((whole.saved - without.saved) / (whole.hidden - without.hidden), row, rest, without,
                                spared))
        if not weighed:
            break
        figure, row, rest, without, spared = min(weighed, key=lambda w: w[0])
        if figure >= BAR:
            break
        notes.append(_dropped(row, whole.saved - without.saved, whole.hidden - without.hidden, spared))
        rows, whole = rest, without
    while rows and whole.saved < 0:  # replayed, the rows make the run larger: a suggestion never does
        whole, row, rows = max(((run.measure(rest), row, rest) for row in rows
                                for rest in [tuple(r for r in rows if r is not row)]), key=lambda w: w[0].saved)
        notes.append(f"{_name(row)}: not suggested — replayed on this run, the rows made it larger "
                     f"(threshold 0, keep_recent {KEEP_RECENT})")
    return replace(suggestion, rows=rows, notes=tuple(notes)) if rows != suggestion.rows else suggestion


def _name(row: Row) -> str:
    return f"{row.tool}.{row.rule['argument']}" if row.table == "tool_calls" else f"{row.tool} results"


def _dropped(row: Row, saved: float, hidden: float, spared: int) -> str:
    what = _name(row)
    return (f"{what}: not suggested — replayed on this run, the agent's replies in {spared} more "
            f"call{'s' if spared != 1 else ''} ({hidden:.1%} of the run's calls) used what it would hide, for "
            f"{saved:.1%} of the run's prompt tokens (under {BAR:g}× the share of calls; threshold 0, keep_recent "
            f"{KEEP_RECENT})")


def checked_rules(conversation: Conversation, meter: Meter, recall: bool = False) -> Suggestion:
    """The suggestion for ``conversation``, checked on it: what the page, the CLI and the
    ``suggested`` preset offer (``recall``: references with a recall key for tools that cannot be re-run)."""
    return check(conversation, suggest_rules(conversation, meter, recall), meter)
