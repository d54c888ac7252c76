"""``tune``: policy parameters swept over a corpus: for each policy, the cheapest setting that
hides data the agent then used in at most ``--max-hidden-used`` calls, and the front of cost
against those calls."""

from __future__ import annotations

import argparse
import functools
import json
from typing import Any

from ..corpus.evaluate import partition, problems_to_json
from ..run.prices import money
from .arguments import tokens
from .corpus_runs import add_corpus_arguments, corpus_setup, outcomes, problems
from .output import dump, write


def add_parser(commands: Any) -> None:
    from ..corpus.sweep import DEFAULT_GRID

    p = commands.add_parser("tune", help="sweep policy parameters over a corpus: the cheapest setting and the "
                                         "front of cost against hidden-then-used calls")
    add_corpus_arguments(p)
    p.add_argument("--grid", nargs="+", metavar="NAME=VALUES",
                   help=f"the axes to sweep, e.g. threshold=20000:150000:10000 keep_recent=0:5 window=2,5,10 "
                        f"(default: {' '.join(DEFAULT_GRID)})")
    p.add_argument("--max-hidden-used", type=tokens, metavar="R",
                   help="the best setting may hide data the agent then used in at most R calls over the corpus")
    p.add_argument("--json", action="store_true", help="print every policy's front and best as JSON")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..corpus.sweep import DEFAULT_GRID, Grid, summarize, tune_batch

    setup = corpus_setup(args)
    grid = Grid.parse(args.grid or DEFAULT_GRID)
    runs, failed, skipped = partition(list(outcomes(args, functools.partial(tune_batch, setup=setup, grid=grid),
                                                    "tune")))
    result = summarize(runs, setup, grid, args.max_hidden_used) | problems_to_json(failed, skipped)
    if args.json:
        write(dump(result), None)
    else:
        write(tune_table(result) + "".join(line + "\n" for line in problems(failed, skipped)), None)
    return 0


def tune_table(result: dict[str, Any]) -> str:
    """Each policy's best setting and its front, after the corpus's prices and modes."""
    lines = [f"{result['runs']} runs, mode {result['mode']}; hidden-then-used calls: {result['hidden_used_calls']}"]
    lines += [f"priced as {p['model']} ({p['source']}), cache {p['cache']}: {p['runs']} runs" for p in result["prices"]]
    for s in result["strategies"]:
        chosen = s["best"]
        lines.append(f"{s['strategy']}: best {json.dumps(chosen['params']) if chosen else '(none)'}"
                     + (f" at {money(chosen['cost'])}" if chosen else "")
                     + "; front: " + ", ".join(f"{json.dumps(p['params'])} {money(p['cost'])}" for p in s["front"]))
    return "\n".join(lines) + "\n"
