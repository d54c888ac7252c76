"""``compare``: one run replayed under every policy (or those named), one row each: tokens, cache,
cost, summaries, what each hid that the agent then used, and where each policy comes from."""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from typing import Any

from ..agent.policy_file import load_policy
from ..corpus.evaluate import ALL
from ..export.native import native_settings
from ..export.native_gap import native_compare, to_json
from ..policies import POLICIES, make, offered
from ..policies.provenance import source_of
from ..run.compare import compare, rows_to_json
from ..run.prices import money
from ..tune.suggest import unmatched_message
from .arguments import FILE_HELP
from .output import dump, note, say_unmatched, write
from .run_options import LoadedRun, add_run_arguments, load_run


def add_parser(commands: Any) -> None:
    p = commands.add_parser("compare", help="replay a run under every policy and print one row each")
    p.add_argument("file", help=FILE_HELP)
    p.add_argument("--json", action="store_true", help="print the rows as JSON")
    p.add_argument("--policy", "--strategy", dest="policy", choices=[*POLICIES, ALL], action="append",
                   metavar="POLICY", help="compare only these (repeat the option; default and all: every policy): "
                                          "%(choices)s")
    p.add_argument("--native", metavar="WORKSPACE_OR_RULES",
                   help="compile the policy in this workspace (or rules) file into each agent's and provider's own "
                        "setting, and compare each, run under its emulation here, with the tuned policy (the other "
                        "policy options are not read)")
    add_run_arguments(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    loaded = load_run(args)
    if args.native:
        return _native(args, loaded)
    asked = list(POLICIES) if not args.policy or ALL in args.policy else args.policy
    names = offered(asked, loaded.conversation)
    if args.policy and ALL not in args.policy and set(args.policy) - set(names):
        note("as-it-ran left out: the log records no compaction by the agent, so the run as it ran is the none row")
    settings = loaded.settings()
    policies = [make(name, settings) for name in names]
    options, conversation, meter, price, cache = (loaded.options, loaded.conversation, loaded.meter, loaded.price,
                                                  loaded.cache)
    if any(policy.name == "rules" for policy in policies):
        say_unmatched(unmatched_message(conversation, meter.count(conversation), settings.rules), options.preset)
    summarizer = options.summarizer_price(price)
    rows = compare(conversation, policies, meter, price, mode=options.mode, cache=cache, summarizer=summarizer,
                   baseline=options.baseline)
    if args.json:
        write(dump(rows_to_json(rows)), None)
        return 0
    width = max(len("strategy"), *(len(r.policy) + 2 for r in rows))  # the longest name, with " *"
    lines = [f"mode {options.mode}, cache {cache}, {price.model} prices ({price.source}); summaries billed at "
             f"{summarizer.model} prices (the span as input, the summary as output) and included in cost",
             f"{'strategy':<{width}} {'tokens final':>12} {'tokens billed':>14} {'cached':>12} {'cost':>10} "
             f"{'summaries':>10} {'hidden used':>11} {'lost':>9} {'retrievable':>11}  parameters"]
    lines += [f"{r.policy + (' *' if r.baseline else ''):<{width}} {r.tokens_final:>12,} {r.tokens_billed:>14,} "
              f"{r.cached_tokens:>12,} "
              f"{money(r.cost):>10} {money(r.summarization_cost):>10} "
              f"{f'{r.hidden_used_calls} ({r.hidden_used_lost})':>11} {r.tokens_lost:>9,} "
              f"{r.tokens_retrievable:>11,}  {json.dumps(r.params)}" for r in rows]
    lines.append("hidden used: calls whose reply used a piece of an earlier item their request had hidden (in "
                 "brackets, of those, the calls that used one no tool call brings back)")
    lines.append("* the baseline: " + ("the run as it ran, what the agent really sent (none: the full history its "
                                       "log holds, never sent)" if any(r.baseline and r.policy == "as-it-ran"
                                                                       for r in rows) else
                                       "none, the run as the log holds it"))
    lines += ["", "sources:"] + [f"  {r.policy}: {source_of(r.policy)}" for r in rows]
    write("\n".join(lines) + "\n", None)
    return 0


def _native(args: argparse.Namespace, loaded: LoadedRun) -> int:
    """``--native``: the tuned policy's row, then one per native setting with its gap to it, and
    what each cannot express."""
    tuned = load_policy(args.native, args.max_input_mb)
    settings = tuned.settings
    if settings.context_window is None:
        settings = replace(settings, context_window=loaded.price.context_window)
    compiled = native_settings(loaded.conversation, settings, settings.context_window or 0)
    found = native_compare(loaded.conversation, tuned.make(), compiled, loaded.meter, loaded.price, mode=tuned.mode,
                           cache=loaded.cache, summarizer=loaded.options.summarizer_price(loaded.price))
    if args.json:
        write(dump(to_json(found)), None)
        return 0
    base = found.tuned
    lines = [f"{tuned.name} from {args.native} (mode {tuned.mode}) beside each agent's own setting compiled from it, "
             f"run here under its emulation; cache {loaded.cache}, {loaded.price.model} prices",
             f"{'target':<20} {'emulated as':<28} {'mode':<8} {'tokens billed':>14} {'cost':>10} {'hidden used':>11}"
             f"  cannot express",
             f"{'tuned':<20} {tuned.name:<28} {tuned.mode:<8} {base.tokens_billed:>14,} {money(base.cost):>10} "
             f"{base.hidden_used_calls:>11}"]
    for gap in found.gaps:
        setting, row = gap.setting, gap.row
        figures = (f"{row.tokens_billed:>14,} {money(row.cost):>10} {row.hidden_used_calls:>11}" if row else
                   f"{'-':>14} {'-':>10} {'-':>11}")
        lines.append(f"{setting.target:<20} {setting.emulation or '-':<28} {setting.mode:<8} {figures}  "
                     f"{len(setting.cannot)}")
    for gap in found.gaps:
        setting = gap.setting
        lines += ["", f"{setting.target}: {setting.title}, in {setting.where}"]
        lines += [f"  {line}" for line in setting.text.splitlines()]
        lines += [f"  cannot: {reason}" for reason in setting.cannot]
    write("\n".join(lines) + "\n", None)
    return 0
