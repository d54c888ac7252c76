"""What an agent's log says the provider billed, call by call, beside our count of the log's
request; and the calibration those bills give.

Logs record the input tokens billed for each call (``Conversation.billed``: Claude Code's
``usage``, Codex's ``token_count``, Gemini CLI's ``tokens``). Two things separate a bill from our
count of the request the log holds, and they are of different kinds:

- what the agent sends that its log does not hold — its system prompt and tool definitions —
  is the same number of tokens on every call (an *offset*);
- the meter's own error is a share of what it counts (a *factor*).

So ``billed ≈ offset + factor × counted``, fitted per log. The factor is the median, over
consecutive calls, of the bill's growth over our count's growth (what a call adds is only items
the log holds, so the offset cancels; a median ignores one odd call), and the offset the median of
what is left. Only the calls before the agent first cut its own context are fitted: after it, the
log holds more than the agent sent (a bill that falls is that cut — a run's requests otherwise
only grow).

Some logs round their bills (Aider writes ``4.5k``: ``Conversation.billed_digits`` significant digits
at least). Each bill is then known only to within half a unit of its last digit (``BilledCall.within``);
a slope counts only between calls our count grew between by ``ROUNDED_GROWTH`` times what the two
bills' rounding could move it, so rounding cannot pass for the meter's share, and ``describe`` says
how far the bills themselves are from exact.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from itertools import pairwise
from statistics import median

from ..conversation import Conversation, is_instruction
from ..errors import InputError
from ..meter.calibration import FACTOR_RANGE, to_json
from ..meter.factor import Calibration
from ..meter.tokens import Meter
from ..policies import NonePolicy
from ..words import plural
from .prices import Price
from .replay import Replay, replay

CUT = 0.9  # a bill below this share of the one before: the agent cut its context (compacted, cleared)
MIN_GROWTH = 50  # tokens our count must grow by between two calls for their slope to count
ROUNDED_GROWTH = 10  # …and this many times the two bills' rounding, so it moves a slope by a tenth at most
BILLED = "billed (log)"  # the chart's name for the bills' line


@dataclass(frozen=True)
class BilledCall:
    """One call the log billed: its number in the run, where its reply starts, our count of its
    request (uncalibrated: the meter as published or fitted, nothing from this log) and the bill."""

    call: int
    position: int
    counted: int
    billed: int
    within: int = 0  # the bill is exact to ± this (half a unit of the last digit a rounding log keeps)


@dataclass(frozen=True)
class LogFit:
    """The bills of a log beside our counts, and ``billed ≈ offset + factor × counted`` fitted on the
    first ``fitted`` of them (the calls before the agent first cut its context)."""

    calls: tuple[BilledCall, ...]
    fitted: int
    factor: float
    offset: int
    digits: int | None = None  # the significant digits the log kept in its bills (None: exact)
    # what of the agent's request the log holds besides its turns: a system prompt (Codex's base
    # instructions, a system message) and tool definitions; what it lacks is what the offset stands for
    system: bool = False
    tools: bool = False
    # (where it starts, its offset) for each fresh context the agent began (Aider's new session, /clear):
    # what it sends beside its turns — the files it added, a repo map — is its own in each; () for one offset
    sessions: tuple[tuple[int, int], ...] = ()

    def estimate(self, counted: int, position: int | None = None) -> int:
        """The bill for a request we count ``counted``, at the call starting at ``position`` (its session's offset)."""
        return self.offset_at(position) + round(counted * self.factor)

    def offset_at(self, position: int | None) -> int:
        if not self.sessions or position is None:
            return self.offset
        at = bisect.bisect_right([start for start, _ in self.sessions], position) - 1
        return self.sessions[max(at, 0)][1]

    def misses(self, calibrated: bool) -> list[float]:
        """The share by which our count misses the bill on each fitted call: as it is, or with this
        fit applied."""
        return [abs((self.estimate(c.counted, c.position) if calibrated else c.counted) - c.billed) / c.billed
                for c in self.calls[:self.fitted] if c.billed]

    def error(self, calibrated: bool) -> float:
        """The median of ``misses``: what a typical call is off by."""
        misses = self.misses(calibrated)
        return median(misses) if misses else 0.0

    def describe(self) -> str:
        """The fit in words, for the CLI and the Run view alike."""
        cut = (f" (those before the first bill that fell — the agent cut its own context there, or another model "
               f"answered — and not the {plural(len(self.calls) - self.fitted, 'call')} after it)"
               ) if self.fitted < len(self.calls) else ""
        return (f"The log records the input tokens billed for {plural(len(self.calls), 'call')}. Our count of the "
                f"log's request misses them by {self.error(False):.1%} on the median call: {self._lacks()}. "
                f"Fitted on {plural(self.fitted, 'call')}{cut}: billed ≈ {self._offsets()} + "
                f"{self.factor:.3f} × our count, which misses by {self.error(True):.1%} (at most "
                f"{max(self.misses(True), default=0.0):.1%}).{self._rounding()}")

    def _offsets(self) -> str:
        """The offset in words: one, or each session's where the agent began afresh."""
        if len(self.sessions) < 2:
            return f"{self.offset:,}"
        low, high = min(o for _, o in self.sessions), max(o for _, o in self.sessions)
        return (f"an offset of its own in each of the {len(self.sessions)} sessions the agent began afresh "
                f"({low:,}–{high:,}: what it sends beside its turns, files and a repo map, is each session's own)")

    def _lacks(self) -> str:
        """What the log leaves out of the agent's request (a rollout with its instructions holds a
        system prompt: saying it holds none would be false)."""
        if self.system and self.tools:
            return "the log holds the system prompt and tool definitions; the rest is what the agent sends beside them"
        if self.system:
            return "the log holds the system prompt but no tool definitions"
        return "the log holds no system prompt" + ("" if self.tools else " or tool definitions")

    def _rounding(self) -> str:
        """What rounded bills allow one to say: how far a bill is from exact on the median call."""
        if self.digits is None:
            return ""
        share = median(c.within / c.billed for c in self.calls if c.billed)
        return (f" The log rounds its bills to {self.digits} significant digits (at least): each is within "
                f"±{share:.1%} of what was billed on the median call, so a miss that small is the rounding's.")

    def calibration(self, model: str, source: str) -> Calibration:
        return Calibration(model, self.factor, self.fitted, self.offset, source)

    def to_json(self, model: str, source: str) -> dict:
        """For ``replay --json``: the calibration as a ``--calibration`` file holds it, and how well it fits
        (and, for a log that rounds its bills, to how many digits)."""
        rounded = {} if self.digits is None else {"billed_digits": self.digits}
        return {"calibration": to_json({model: self.calibration(model, source)}), "calls": len(self.calls),
                "fitted_calls": self.fitted, "median_error": round(self.error(False), 4),
                "median_error_calibrated": round(self.error(True), 4), **rounded}


def billed_calls(conversation: Conversation, price: Price, run: Replay | None = None) -> tuple[BilledCall, ...]:
    """The calls the log billed, each beside our uncalibrated count of its request: ``run``'s
    counts without a policy, when the caller has a replay of this conversation made with an
    uncalibrated meter; else a replay with no policy and a fresh meter (a calibration in effect
    must not fit itself)."""
    if not conversation.billed:
        return ()
    bills, digits = dict(conversation.billed), conversation.billed_digits
    if run is None:
        run = replay(conversation, NonePolicy(), Meter(conversation.model or price.model), price)
    return tuple(BilledCall(number, call.position, call.tokens_without, bills[call.position],
                            rounding(bills[call.position], digits))
                 for number, call in enumerate(run.calls) if call.position in bills)


def rounding(tokens: int, digits: int | None) -> int:
    """How far a bill written with ``digits`` significant digits (None: every digit) can be from
    the count it rounds: half a unit of its last kept digit (4,500 to two digits: ±50)."""
    places = len(str(abs(tokens))) - (digits or 0)
    return 10 ** places // 2 if digits is not None and places > 0 else 0


def _grew(a: BilledCall, b: BilledCall) -> bool:
    """Our count grew enough between two calls for the bills' growth over it to be a slope."""
    return b.counted - a.counted >= max(MIN_GROWTH, ROUNDED_GROWTH * (a.within + b.within))


def fit_bills(calls: tuple[BilledCall, ...], digits: int | None = None, system: bool = False,
        tools: bool = False, fresh: tuple[int, ...] = ()) -> LogFit:
    """``billed ≈ offset + factor × counted`` on the calls before the first cut (see the module).
    ``fresh``: where the agent began a fresh context (a session that starts afresh, ``sessions``): a
    bill that falls there is that new start, not a cut, and each such session gets its own offset."""
    if not calls:
        raise InputError("the log records no billed usage for its calls", where="billed")
    starts = sorted(fresh)

    def session(call: BilledCall) -> int:
        return bisect.bisect_right(starts, call.position)

    fitted = next((k for k in range(1, len(calls)) if calls[k].billed < CUT * calls[k - 1].billed
                   and session(calls[k]) == session(calls[k - 1])), len(calls))
    first = calls[:fitted]
    slopes = [(b.billed - a.billed) / (b.counted - a.counted) for a, b in pairwise(first)
              if session(a) == session(b) and _grew(a, b)]
    low, high = FACTOR_RANGE
    factor = median(slopes) if slopes else 1.0
    if not low <= factor <= high:  # the bills do not grow with the log: no share to fit, only the offset
        factor = 1.0
    offset = round(median(c.billed - c.counted * factor for c in first))
    if offset < 0:  # the log cannot hold more than was sent: what is left is the meter's share alone
        ratios = [c.billed / c.counted for c in first if c.counted]
        factor, offset = (min(high, max(low, median(ratios))) if ratios else 1.0), 0
    return LogFit(calls, fitted, factor, offset, digits, system, tools, _sessions(first, starts, factor, offset))


def _sessions(calls: tuple[BilledCall, ...], starts: list[int], factor: float, offset: int
              ) -> tuple[tuple[int, int], ...]:
    """Each fresh context's own offset, from its own fitted calls (the whole fit's where it has none)."""
    if not starts:
        return ()
    found, by = [], {}
    for call in calls:
        by.setdefault(bisect.bisect_right(starts, call.position), []).append(call)
    for number, start in enumerate([-1, *starts]):
        own = by.get(number)
        found.append((start, max(0, round(median(c.billed - c.counted * factor for c in own))) if own else offset))
    return tuple(found)


def log_fit(conversation: Conversation, price: Price, run: Replay | None = None) -> LogFit | None:
    """The fit for a log that records its bills, else None (``run``: as for ``billed_calls``)."""
    calls = billed_calls(conversation, price, run)
    system = bool(conversation.instructions) or any(is_instruction(item) for item in conversation.items)
    return fit_bills(calls, conversation.billed_digits, system, bool(conversation.tools), fresh_starts(conversation)
               ) if calls else None


def fresh_starts(conversation: Conversation) -> tuple[int, ...]:
    """Where the agent began a fresh context: a compaction that kept, added and summarized nothing (a new session)."""
    return tuple(record.position for record in conversation.compactions
                 if not (record.kept or record.added or record.summary))


def with_bills(data: dict, found: LogFit, model: str, source: str) -> dict:
    """``replay --json`` with the log's bill on each call it recorded one for
    (``billed_input_tokens``) and the calibration they give (``log_calibration``)."""
    calls = [dict(call) for call in data["calls"]]
    for billed in found.calls:
        if billed.call < len(calls):
            calls[billed.call]["billed_input_tokens"] = billed.billed
    return {**data, "calls": calls, "log_calibration": found.to_json(model, source)}


def bill_rows(found: LogFit, run: Replay) -> list[dict]:
    """The bills as one more side of the Run view's prompt-tokens chart (``replay.chart_rows``' shape)."""
    return [{"call": billed.call, "index": run.calls[billed.call].index, "side": BILLED, "tokens": billed.billed,
             "fired": ""} for billed in found.calls if billed.call < len(run.calls)]
