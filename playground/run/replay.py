"""A whole run, call by call: what each LLM call's prompt costs with and without a policy.

Each assistant turn is one call; its request is everything before it (instructions, tools and
all). The policy is applied at every call as an agent would, in one of two modes:

* ``stored``: edits are written into the history the agent keeps (the book's optimizer): the next
  call's request is the previous edited request plus what came since.
* ``per-call``: edits are made on a copy for each request and the history stays whole (LangChain's
  middleware, Anthropic's server-side context editing), so an item that newly crosses into the
  edited region breaks the cache again.

Counting is incremental: every input item is counted once, for the whole run; a request is
compared with the previous one by item identity and only the items after the first difference
are counted (the meter caches per text) and hashed for the prompt cache.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Hashable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..conversation import (
    Conversation,
    Item,
    LastShared,
    Message,
    content_text,
    is_instruction,
    shared,
    turn_end,
    turn_starts,
)
from ..errors import InputError
from ..facts.ledger import Ledger
from ..meter.tokens import Layout, Meter, turn_billed
from ..meter.turns import Turns
from ..policies import AsItRanPolicy, Policy, PolicyResult
from ..words import plural
from .fates import Fates, FateTracker, fates_to_json
from .hidden import HiddenUse, SpanIndex, Tracker, calls_with, lost_calls, to_json
from .prices import Price, rounded, summary_cost
from .promptcache import PromptCache, call_cost, check_cache, input_cost, link

MODES = ("stored", "per-call")
Progress = Callable[[int, int], None]  # told the calls done and the calls in all
FULL, AS_RAN = "full-history", "as-it-ran"
BASELINES = ("auto", AS_RAN, FULL)


@dataclass(frozen=True)
class Call:
    """One LLM call of the run. ``index`` is the assistant turn's position in the input's own list."""

    index: int
    position: int  # where the turn starts in the conversation's items
    tokens_without: int
    tokens_with: int
    cached_without: int
    cached_with: int
    written_without: int  # tokens written to the cache (billed at the cache-write price)
    written_with: int
    output_tokens: int  # the turn's own items, billed as output alike with and without
    cost_without: float  # the whole call: prompt (input_cost_without) and reply
    cost_with: float  # the same, plus summarization_cost: a summary is not free
    fired: str | None
    tokens_lost: int = 0  # by this call's application of the policy
    tokens_retrievable: int = 0
    input_cost_without: float = 0.0  # the prompt alone, as the page's cost line bills a request
    input_cost_with: float = 0.0
    # the LLM call that wrote this call's summary, if the policy summarized (``summarycall``)
    summarization_input_tokens: int = 0
    summarization_output_tokens: int = 0
    summarization_cost: float = 0.0
    hidden_used: tuple[HiddenUse, ...] = ()  # spans of items this call's request hid that its reply used
    # the whole history the log holds, when the baseline (the ``without`` side) is the run as it ran
    tokens_full: int | None = None
    cost_full: float | None = None


@dataclass(frozen=True)
class Totals:
    tokens_without: int
    tokens_with: int
    cached_tokens_without: int
    cached_tokens_with: int
    cost_without: float
    cost_with: float  # summarization included
    summarization_cost: float = 0.0


@dataclass(frozen=True)
class BreakEven:
    """When a firing of the policy repays its cache miss. ``extra`` is what the firing call cost
    beyond carrying on at the saving rate of the last call before it that did not fire (0 before
    any); ``repaid_after`` is how many further calls it took to earn that back (0: the firing call
    itself was cheaper), None if the run ended, or the policy fired again, first. An estimate: that
    rate stands for what not firing would have saved. A firing call's own saving is no rate: after
    a costly firing, the next one measured against it looked free ("cache miss $0.0000")."""

    call: int  # position in ``Replay.calls``
    index: int
    extra: float
    repaid_after: int | None


@dataclass(frozen=True)
class Replay:
    calls: tuple[Call, ...]
    policy: str
    params: dict[str, Any]
    mode: str
    cache: str
    price: Price
    tokens_lost: int  # stored: what every firing removed for good; per-call: what the last request lacks
    tokens_retrievable: int
    final: Conversation = field(repr=False)  # the last request as sent
    summarizer: Price | None = None  # whose prices the summarization calls were billed at
    baseline: str = FULL  # what the ``without`` side sends: the log's whole history, or the run as it ran
    inferred: tuple[int, ...] = ()  # the calls (numbers in ``calls``) where a compaction inferred from bills acts
    facts: Fates | None = None  # the ledger's facts: kept, recoverable or lost (``fates``)

    def full_history(self, call: Call) -> int:
        """The tokens of ``call``'s request had the agent sent the whole history its log holds."""
        return call.tokens_without if call.tokens_full is None else call.tokens_full

    def over_window(self) -> str | None:
        """A note when the full history grows past the model's window: no provider takes such a request,
        so the agent must have cut what it sent (said whether or not the log shows how)."""
        window = self.price.context_window
        over = [n for n, call in enumerate(self.calls) if window and self.full_history(call) > window]
        if not over:
            return None
        largest = max(self.full_history(call) for call in self.calls)
        kept = ("the baseline is the run as it ran" if self.baseline == AS_RAN else
                "the log shows no cut, so the baseline is that history, larger than anything the agent sent")
        return (f"the full history the log holds reaches {largest:,} tokens, over {self.price.model}'s window of "
                f"{window:,} from call {over[0]} on ({plural(len(over), 'call')}): no provider accepts this; the agent "
                f"must have cut it — {kept}")

    @property
    def hidden_used(self) -> tuple[HiddenUse, ...]:
        return tuple(use for call in self.calls for use in call.hidden_used)

    @property
    def totals(self) -> Totals:
        calls = self.calls
        return Totals(sum(c.tokens_without for c in calls), sum(c.tokens_with for c in calls),
                      sum(c.cached_without for c in calls), sum(c.cached_with for c in calls),
                      sum(c.cost_without for c in calls), sum(c.cost_with for c in calls),
                      sum(c.summarization_cost for c in calls))

    def break_even(self) -> tuple[BreakEven, ...]:
        saving = [c.cost_without - c.cost_with for c in self.calls]
        fired = [k for k, c in enumerate(self.calls) if c.fired]
        rates, rate = [], 0.0  # before each call, the saving of the last call before it that did not fire
        for call, saved in zip(self.calls, saving, strict=True):
            rates.append(rate)
            rate = rate if call.fired else saved
        found = []
        for n, k in enumerate(fired):
            rate = rates[k]
            stop = fired[n + 1] if n + 1 < len(fired) else len(self.calls)
            running, repaid = 0.0, None
            for j in range(k, stop):
                running += saving[j] - rate
                if running >= -1e-12:
                    repaid = j - k
                    break
            extra = rate - saving[k]  # (NaN at an unknown price: no extra cost is invented)
            found.append(BreakEven(k, self.calls[k].index, extra if math.isnan(extra) else max(0.0, extra), repaid))
        return tuple(found)


call_starts = turn_starts  # each assistant turn is one LLM call's reply: where the calls of a run begin


@dataclass(frozen=True)
class Fixed:
    """The parts of a prompt outside its items: the head (tool definitions, instructions) that
    comes first and what comes last (reply priming, request options). Tool definitions may cost
    a little more or less when a system message is present, so the head has two sizes; both are
    measured with the meter itself (calibration and every accounting included)."""

    head_alone: int
    head_with_system: int
    tail: int

    @classmethod
    def of(cls, conversation: Conversation, meter: Meter) -> Fixed:
        bare = meter.count(conversation.with_items(()))
        system = Message(role="system", content="")
        with_system = meter.count(conversation.with_items((system,)))
        return cls(bare.total - bare.priming, with_system.total - with_system.items[0] - with_system.priming,
                   bare.priming)

    def head(self, has_system: bool) -> int:
        return self.head_with_system if has_system else self.head_alone


class GrowingPrompt:
    """One side's prompt as the run goes: items, their counts, and for each prefix its identity
    (a chain of content keys, for the cache) and its length in tokens — all kept incrementally."""

    def __init__(self, count: Callable[[tuple[Item, ...], int, bool], int],
                 shared: Callable[[tuple[Item, ...], tuple[Item, ...], int], int] = shared) -> None:
        self._count = count  # (items, position, whether thinking or reasoning there is billed: ``Turns``)
        self._shared = shared  # how many leading items two requests have in common (equal items count and link alike)
        self._turns = Turns()  # where each kind of turn-billed item's current turn begins
        self.items: tuple[Item, ...] = ()
        self.chain: list[int] = []
        self.offsets: list[int] = []
        self._head: tuple[int, Hashable] | None = None

    def update(self, items: tuple[Item, ...], head: int, head_key: Hashable, at_least: int = 0, again: int = 0) -> None:
        """Follow the next request; its first ``at_least`` items are known to be the last one's.
        ``again``: how many of the shared items before the first difference to count again (an
        item's count depends on the one after it, parallel calls, and a wrapped agent's request
        ends where the next one goes on; replay counts its input items knowing their neighbours)."""
        if self._head != (head, head_key):  # a new head: nothing is shared
            self._head = (head, head_key)
            self.items, self.chain, self.offsets = (), [hash(head_key)], [head]
        # (thinking and reasoning before a user message that came or went count again: ``Turns``)
        same = self._turns.follow(items, max(0, self._shared(self.items, items, at_least) - again))
        del self.chain[same + 1:], self.offsets[same + 1:]
        chain, offsets, billed = self.chain, self.offsets, self._turns.billed
        for position in range(same, len(items)):
            item = items[position]
            chain.append(link(chain[-1], item))
            offsets.append(offsets[-1] + self._count(items, position, billed(item, position)))
        self.items = items


def counter(original: tuple[Item, ...], counts: tuple[int, ...], meter: Meter
             ) -> Callable[[tuple[Item, ...], int, bool], int]:
    """Tokens of the item at a position of a request, given whether its thinking or reasoning is
    billed there: an input item's count from the one pass over the input (but for those, whose
    count depends on the request's turn), an edited item's from the meter (whose per-text cache
    makes it cheap)."""
    known = {id(item): count for item, count in zip(original, counts, strict=True) if not turn_billed(item)}

    def count(items: tuple[Item, ...], position: int, billed: bool) -> int:
        item = items[position]
        found = known.get(id(item))
        if found is not None:
            return found
        parallel, continues = Layout.at(items, position)  # parallel calls and continued blocks: the neighbours
        return meter.item(item, parallel=parallel, continues=continues, thinking=billed)

    return count


def applied(conversation: Conversation, policy: Policy, meter: Meter, mode: str = "stored",
            until: int | None = None) -> Iterator[tuple[int, PolicyResult]]:
    """Each call's start in the items and the policy's result for its request, as an agent applies
    it in ``mode``: the one loop replay and the live probe share, so both see the same requests."""
    return ((start, result) for start, _, result in _applied(conversation, policy, meter, mode, until))


def _applied(conversation: Conversation, policy: Policy, meter: Meter, mode: str, until: int | None
             ) -> Iterator[tuple[int, Conversation, PolicyResult]]:
    """``applied``, with the request each call gave the policy: per call that is the run's items
    before the call, so the replay's full side takes it rather than copying the run at every call."""
    items = conversation.items
    given: tuple[Item, ...] = ()  # per call: the run's items so far
    history: tuple[Item, ...] = ()  # stored: what was sent last
    previous = 0
    for start in call_starts(items)[:until]:
        new = items[previous:start]
        previous = start
        request = conversation.grown(given if mode == "per-call" else history, new)  # (which says it only grew)
        result = policy.apply(request, meter)
        given, history = request.items, result.conversation.items
        yield start, request, result


def _sent_again(mode: str, result: PolicyResult, kept: int, last: tuple[Item, ...]) -> int:
    """How many leading items of ``result``'s request are known to be those of the request sent
    before (``last``; ``kept``: the ``kept`` of the result that sent it), so the two are compared
    only after them. Stored, the request given is the last one sent with items appended: ``kept``
    says it. Per call it is the last request given with items appended, so both results keep the
    run's items up to the smaller ``kept`` — or the policy says how much of what it sent last it
    sent again (``follows``: masking, clearing and pruning, an older output edited since), held to
    its last item's identity."""
    items = result.conversation.items
    if mode == "stored":
        return min(result.kept, len(last))
    known, follows = min(result.kept, kept, len(last)), result.follows
    if known < follows <= min(len(last), len(items)) and items[follows - 1] is last[follows - 1]:
        return follows
    return known


def baseline_of(conversation: Conversation, baseline: str = "auto") -> str:
    """What the ``without`` side of a replay sends: ``auto`` is the run as it ran wherever the log
    shows (or its bills imply, ``inferred``) the agent managing its own context — the full history
    such a log holds was never sent — and the full history elsewhere, where the two are the same."""
    if baseline not in BASELINES:
        raise InputError(f"unknown baseline (choose {', '.join(BASELINES)})", where="baseline", value=baseline)
    if baseline == "auto":
        return AS_RAN if conversation.compactions else FULL
    return baseline


def replay(conversation: Conversation, policy: Policy, meter: Meter, price: Price, *, mode: str = "stored",
           cache: str | None = None, until: int | None = None, summarizer: Price | None = None,
           spans: SpanIndex | None = None, baseline: str = "auto", ledger: Ledger | None = None,
           progress: Progress | None = None) -> Replay:
    """Every call of the run with and without ``policy`` (stop after ``until`` calls if given), with
    the prompt cache of ``price``'s provider unless ``cache`` names one (it must fit the provider:
    ``promptcache.check_cache``). A summary the policy writes is billed as one more LLM call at
    ``summarizer``'s prices (default: the run's own model's). Each call also says what its reply
    used that its request had hidden (``Call.hidden_used``, see ``hidden``; ``spans``, the
    conversation's ``SpanIndex``, shares one between replays). The ``without`` side is ``baseline``
    (``baseline_of``); when that is the run as it ran, each call also carries the full history's
    tokens and cost (``Call.tokens_full``), the second figure. The run's facts (``ledger``, shared like
    ``spans``) are followed too: kept, recoverable or lost at each firing and at the end (``fates``).
    ``progress`` is told after each call how many calls are done and how many there are in all, so a page
    can show a long replay's way."""
    if mode not in MODES:
        raise InputError(f"unknown mode (choose {', '.join(MODES)})", where="mode", value=mode)
    cache = price.cache if cache is None else cache
    check_cache(cache, price.cache, price.model)
    summarizer = price if summarizer is None else summarizer
    items = conversation.items
    counts = meter.items(items)
    count = counter(items, counts, meter)
    fixed = Fixed.of(conversation, meter)
    last_shared = LastShared()  # the sent side and the tracker compare the same two requests at every call
    baseline = baseline_of(conversation, baseline)
    as_ran = _as_ran(conversation, meter, mode, until) if baseline == AS_RAN else None
    # without, with, and (when the baseline is the run as it ran) the full history as a second figure
    sides = (GrowingPrompt(count), GrowingPrompt(count, last_shared), *((GrowingPrompt(count),) if as_ran else ()))
    caches = tuple(PromptCache(cache, price.min_cacheable) for _ in sides)
    has_system = bool(content_text(conversation.instructions))
    sent = conversation
    calls: list[Call] = []
    lost = retrievable = kept = 0  # (kept: per call, how many leading items the last result sent as given)
    previous = 0
    tracker = Tracker(conversation, SpanIndex.of(conversation) if spans is None else spans,
                      getattr(policy, "references", False), last_shared)
    total = len(call_starts(items)[:until]) if progress is not None else 0
    fates = FateTracker(conversation, Ledger.of(conversation) if ledger is None else ledger,
                        getattr(policy, "references", False), last_shared)
    for start, request, result in _applied(conversation, policy, meter, mode, until):
        has_system = has_system or any(is_instruction(item) for item in items[previous:start])
        previous = start
        sent = result.conversation
        head = fixed.head(has_system)
        # the run's own items only grow; stored, what was sent last is the history the policy was given
        full = sides[2] if as_ran else sides[0]
        # (per call, the request given is the run's items so far: that very tuple, not a copy of the run)
        full.update(request.items if mode == "per-call" else items[:start], head, ("head", has_system), len(full.items))
        agent = next(as_ran) if as_ran else None  # what the agent sent, and the summary it wrote for it
        if agent:
            sides[0].update(agent.conversation.items, head, ("head", has_system))
        known, kept = _sent_again(mode, result, kept, sides[1].items), result.kept
        sides[1].update(sent.items, head, ("head", has_system), known)
        uses = [cache_.use(side.chain, side.offsets) for cache_, side in zip(caches, sides, strict=True)]
        prompts = [side.offsets[-1] + fixed.tail for side in sides]
        end = turn_end(items, start)
        output = sum(counts[start:end])
        if mode == "stored":
            lost, retrievable = lost + result.tokens_lost, retrievable + result.tokens_retrievable
        else:
            lost, retrievable = result.tokens_lost, result.tokens_retrievable
        origin = items[start].origin
        summary = result.summarization
        summarizing = summary_cost(summary, summarizer) if summary else 0.0
        used = tracker.call(len(calls), start, end, sent.items)
        fates.call(len(calls), start, sent.items, used, bool(result.fired))
        calls.append(Call(
            index=origin.index if origin else start, position=start,
            tokens_without=prompts[0], tokens_with=prompts[1],
            cached_without=uses[0].read, cached_with=uses[1].read,
            written_without=uses[0].written, written_with=uses[1].written, output_tokens=output,
            cost_without=call_cost(prompts[0], uses[0], output, price) + (
                summary_cost(agent.summarization, summarizer) if agent and agent.summarization else 0.0),
            cost_with=call_cost(prompts[1], uses[1], output, price) + summarizing,
            fired=result.fired, tokens_lost=result.tokens_lost, tokens_retrievable=result.tokens_retrievable,
            input_cost_without=input_cost(prompts[0], uses[0], price),
            input_cost_with=input_cost(prompts[1], uses[1], price),
            summarization_input_tokens=summary.input_tokens if summary else 0,
            summarization_output_tokens=summary.output_tokens if summary else 0, summarization_cost=summarizing,
            hidden_used=used,
            tokens_full=prompts[2] if as_ran else None,
            cost_full=call_cost(prompts[2], uses[2], output, price) if as_ran else None))
        if progress is not None:
            progress(len(calls), total)
    return Replay(tuple(calls), policy.name, policy.params(), mode, cache, price, lost, retrievable, sent, summarizer,
                  baseline, _inferred_calls(conversation, calls) if baseline == AS_RAN else (), fates.fates())


def _inferred_calls(conversation: Conversation, calls: list[Call]) -> tuple[int, ...]:
    """The calls at which the agent's compactions inferred from the bills fell (each once)."""
    positions = [call.position for call in calls]
    return tuple(dict.fromkeys(bisect.bisect_left(positions, record.position) for record in conversation.compactions
                               if record.inferred and record.position <= (positions[-1] if positions else -1)))


def _as_ran(conversation: Conversation, meter: Meter, mode: str, until: int | None) -> Iterator[PolicyResult]:
    """Each call's request as the agent sent it (the ``as-it-ran`` policy's), for the baseline side,
    with the agent's own summarization call where it wrote one (billed to the baseline, as to that row)."""
    return (result for _, result in applied(conversation, AsItRanPolicy(), meter, mode, until))


def sweep(conversation: Conversation, make: Callable[[int], Policy], thresholds: Iterable[int], meter: Meter,
          price: Price, *, mode: str = "stored", cache: str | None = None) -> list[tuple[int, float]]:
    """Whole-run cost with the policy ``make(threshold)`` for each threshold: the curve a person
    picks a threshold from."""
    spans = SpanIndex.of(conversation)
    return [(threshold, replay(conversation, make(threshold), meter, price, mode=mode, cache=cache,
                               spans=spans).totals.cost_with)
            for threshold in thresholds]


def replay_to_json(run: Replay) -> dict[str, Any]:
    """The CLI's ``--json``: exactly the calls and totals the issue names."""
    calls = [{"index": c.index, "tokens_without": c.tokens_without, "tokens_with": c.tokens_with,
              "cached_tokens_without": c.cached_without, "cached_tokens_with": c.cached_with,
              "cost_without": rounded(c.cost_without), "cost_with": rounded(c.cost_with), "fired": c.fired,
              "summarization_input_tokens": c.summarization_input_tokens,
              "summarization_output_tokens": c.summarization_output_tokens,
              "summarization_cost": rounded(c.summarization_cost)}
             for c in run.calls]
    if run.baseline == AS_RAN:
        for row, call in zip(calls, run.calls, strict=True):
            row["as_ran_tokens"], row["full_history_tokens"] = call.tokens_without, call.tokens_full
    totals = run.totals
    hidden = run.hidden_used
    full = {} if run.baseline != AS_RAN else {
        "tokens_full_history": sum(run.full_history(call) for call in run.calls),
        "cost_full_history": rounded(sum(call.cost_full or 0.0 for call in run.calls)),
        "inferred_compactions": list(run.inferred)}
    window = run.over_window()
    return {"calls": calls, "totals": {"baseline": run.baseline, **full,
        "tokens_without": totals.tokens_without, "tokens_with": totals.tokens_with,
        "cached_tokens_without": totals.cached_tokens_without, "cached_tokens_with": totals.cached_tokens_with,
        "cost_without": rounded(totals.cost_without), "cost_with": rounded(totals.cost_with),
        "summarization_cost": rounded(totals.summarization_cost),
        "summarizer": run.summarizer.model if run.summarizer else None},
        "priced_as": run.price.priced_as, "price_note": None if run.price.known else run.price.source,
        "hidden_used": to_json(hidden), "hidden_used_calls": calls_with(hidden), "hidden_used_lost": lost_calls(hidden),
        **({"facts": fates_to_json(run.facts)} if run.facts else {}),
        **({"notes": [window]} if window else {})}


def chart_rows(run: Replay) -> list[dict[str, Any]]:
    """One row per call and side (``without`` / ``with``), for the Run view's charts: prompt
    tokens, the cached share of them, the cost so far, and (on the ``with`` side) how many spans
    the call's reply used that its request had hidden."""
    rows: list[dict[str, Any]] = []
    spent = {"without": 0.0, "with": 0.0}
    for number, call in enumerate(run.calls):
        for side, tokens, cached, cost in (("without", call.tokens_without, call.cached_without, call.cost_without),
                                           ("with", call.tokens_with, call.cached_with, call.cost_with)):
            spent[side] += cost
            rows.append({"call": number, "index": call.index, "side": side, "tokens": tokens,
                         "cached_share": cached / tokens if tokens else 0.0, "cumulative_cost": spent[side],
                         "fired": call.fired or "",
                         "hidden_used": len(call.hidden_used) if side == "with" else 0})
    return rows


def sweep_points(largest: int, count: int = 8) -> list[int]:
    """Thresholds from 0 to just above the largest prompt of the run, evenly spread: the last
    one never fires, so the curve ends at the cost of doing nothing."""
    if largest <= 0:
        return [0]
    step = max(1, -(-largest // (count - 1)))
    return [step * n for n in range(count - 1)] + [largest + 1]


def compaction_marks(run: Replay, conversation: Conversation) -> list[dict[str, Any]]:
    """One row per compaction the agent did itself (``Conversation.compactions``), at the first call
    of the run after it: where the Run view's chart marks that the agent compacted."""
    positions = [call.position for call in run.calls]
    marks = []
    for record in conversation.compactions:
        number = bisect.bisect_left(positions, record.position)
        if number < len(positions):
            marks.append({"call": number, "index": run.calls[number].index, "where": record.where,
                          "trigger": record.trigger or "", "tokens_before": record.tokens_before})
    return marks
