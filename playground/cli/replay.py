"""``replay``: one run, call by call, under one policy: each call's tokens, prompt cache and cost
with and without it, where it fired and whether the cache miss was repaid, and what it hid that
the agent then used."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..policies import make
from ..policies.provenance import source_of
from ..run.billed import log_fit, with_bills
from ..run.hidden import calls_with, lost_calls
from ..run.prices import money
from ..run.replay import AS_RAN, Replay, replay, replay_to_json
from ..run.roundtrip import RoundTrip, recall_to_json, round_trips
from ..tune.suggest import unmatched_message
from ..words import plural
from .arguments import FILE_HELP
from .output import dump, say_unmatched, write
from .policy_flags import add_policy_choice
from .run_options import add_run_arguments, load_run


def add_parser(commands: Any) -> None:
    p = commands.add_parser("replay", help="replay a run call by call: tokens, prompt cache and cost with and "
                                           "without a policy")
    p.add_argument("file", help=FILE_HELP)
    add_policy_choice(p, "replay")
    p.add_argument("--json", action="store_true", help="print the calls and totals as JSON")
    p.add_argument("--recall", action="store_true",
                   help="charge each call whose reply used something its request had hidden a recall round trip: "
                        "the recall calls, the originals and one more request (docs/replay.md)")
    add_run_arguments(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    loaded = load_run(args)
    options, conversation, meter, price, cache = (loaded.options, loaded.conversation, loaded.meter, loaded.price,
                                                  loaded.cache)
    settings = loaded.settings()
    policy = make(args.policy, settings)
    if args.policy == "rules":
        say_unmatched(unmatched_message(conversation, meter.count(conversation), settings.rules), options.preset)
    summarizer = options.summarizer_price(price)
    done = replay(conversation, policy, meter, price, mode=options.mode, cache=cache, summarizer=summarizer,
                  baseline=options.baseline)
    bills = log_fit(conversation, price, done if meter.calibration is None else None)  # (its counts are ours)
    trips = round_trips(done, conversation, meter) if args.recall else None
    if args.json:
        data = replay_to_json(done) | (recall_to_json(done, trips) if trips is not None else {})
        write(dump(with_bills(data, bills, meter.choice.model, conversation.source) if bills else data), None)
        return 0
    lines = [f"{policy.name} {json.dumps(policy.params())}, mode {done.mode}, cache {cache}, "
             f"{price.model} prices ({price.source}), summaries billed at {summarizer.model} prices",
             f"source: {source_of(policy.name)}",
             f"{'call':>6} {'index':>6} {'tokens without':>15} {'tokens with':>12} {'cached without':>15} "
             f"{'cached with':>12} {'cost without':>13} {'cost with':>10}  fired"]
    lines += [f"{n:>6} {c.index:>6} {c.tokens_without:>15,} {c.tokens_with:>12,} {c.cached_without:>15,} "
              f"{c.cached_with:>12,} {money(c.cost_without):>13} {money(c.cost_with):>10}  {c.fired or ''}"
              for n, c in enumerate(done.calls)]
    t = done.totals
    lines.append(f"{'total':>6} {'':>6} {t.tokens_without:>15,} {t.tokens_with:>12,} {t.cached_tokens_without:>15,} "
                 f"{t.cached_tokens_with:>12,} {money(t.cost_without):>13} {money(t.cost_with):>10}")
    lines += baseline_lines(done)
    if t.summarization_cost:
        lines.append(f"summarization calls: {money(t.summarization_cost)} of the cost with ({summarizer.model} "
                     "prices; the span as input, the summary as output)")
    for even in done.break_even():
        repaid = "not repaid before the next firing or the end" if even.repaid_after is None else (
            f"repaid after {even.repaid_after} more call(s)")
        lines.append(f"fired at call {even.call} (index {even.index}): cache miss {money(even.extra)}, {repaid}")
    hidden = done.hidden_used
    lines.append(f"hidden then used: {plural(calls_with(hidden), 'call')} used a piece of an earlier item their "
                 f"request had hidden ({lost_calls(hidden)} of them one no tool call brings back; --json lists each)")
    if trips is not None:
        lines.append(recall_line(done, trips))
    if bills:
        lines.append(f"{bills.describe()} --json gives each call's bill (billed_input_tokens) and "
                     "the fit as log_calibration.calibration, which --calibration reads from a file.")
    write("\n".join(lines) + "\n", None)
    return 0


def baseline_lines(replayed: Replay) -> list[str]:
    """What ``without`` means on this run, and the full history as the second figure where it is not that."""
    window = replayed.over_window()
    if replayed.baseline != AS_RAN:
        return [f"note: {window}"] if window else []
    full = sum(replayed.full_history(call) for call in replayed.calls)
    cuts = ", ".join(map(str, replayed.inferred))
    inferred = f"; cuts inferred from the bills at calls {cuts}" if cuts else ""
    return [f"without = the run as it ran (what the agent really sent{inferred}); the full history the log holds "
            f"would have been {full:,} tokens, {money(sum(call.cost_full or 0.0 for call in replayed.calls))} "
            "(--baseline full-history replays against it)", *([f"note: {window}"] if window else [])]


def recall_line(replayed: Replay, trips: tuple[RoundTrip, ...]) -> str:
    """The recall round trips charged (``--recall``), and the run's cost with them."""
    cost = sum(trip.cost for trip in trips)
    return (f"recall: {plural(len(trips), 'round trip')} ({plural(sum(len(t.items) for t in trips), 'original')} "
            f"recalled): {sum(t.call_tokens for t in trips):,} tokens of recall calls, "
            f"{sum(t.result_tokens for t in trips):,} of originals, {sum(t.prompt_tokens for t in trips):,} prompt "
            f"tokens in the extra requests ({sum(t.cached_tokens for t in trips):,} cached), {money(cost)}; "
            f"cost with recall {money(replayed.totals.cost_with + cost)}")
