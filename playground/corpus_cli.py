"""The corpus commands: ``python -m playground evaluate|tune PATH…``, on a local process pool
(the default) or a Dask cluster, with a progress bar on the terminal (tqdm, on stderr, only
when stderr is a terminal) and a final table, or JSON, CSV or Parquet."""

from __future__ import annotations

import argparse
import functools
import heapq
import json
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from . import corpus, executors, formats
from .errors import InputError
from .evaluate import partition, problems_to_json
from .policies import POLICIES

PARQUET_MISSING = "--parquet needs pyarrow (Streamlit installs it; else `pip install pyarrow`), or use --csv"


def _progress(outcomes: Iterator[tuple[int, Any]], what: str) -> Iterator[tuple[int, Any]]:
    from tqdm import tqdm

    # The corpus streams: its size is not known up front, so the bar counts files done and their rate.
    yield from tqdm(outcomes, desc=what, unit=" files", file=sys.stderr, disable=None, leave=False)


def _outcomes(args: argparse.Namespace, task: executors.Task, what: str) -> list[tuple[int, Any]]:
    found = corpus.find(args.paths, args.max_input_mb)
    return list(_progress(executors.run(found, task, executor=args.executor, workers=args.workers,
                                        scheduler=args.scheduler), what))


def _strategies(args: argparse.Namespace) -> tuple[str, ...]:
    return tuple(dict.fromkeys(args.strategy or POLICIES))


def _parquet(rows: list[dict[str, Any]], path: str) -> None:
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:
        raise InputError(PARQUET_MISSING) from None
    try:
        pyarrow.parquet.write_table(pyarrow.Table.from_pylist(rows), path)
    except OSError as exc:
        raise InputError(f"cannot write the file ({exc})", where=path) from None


def _problems(failed: Iterable[corpus.Failed], skipped: Iterable[corpus.Skipped]) -> list[str]:
    return ([f"failed  {f.message}" for f in failed]
            + [f"skipped {s.source}: {s.reason}" for s in skipped])


def evaluation_table(aggregate: dict[str, Any], failed: list[corpus.Failed], skipped: list[corpus.Skipped]) -> str:
    """The final table: one line per strategy over the whole corpus."""
    from .cli import _money

    lines = [f"{aggregate['runs']} runs, {aggregate['failed']} failed, {aggregate['skipped']} skipped",
             f"{'strategy':<16} {'cost':>12} {'cost none':>12} {'median saving':>14} {'p90 saving':>11} "
             f"{'costs more':>10} {'errors kept':>12} {'pairs intact':>12} {'lost':>11} {'hidden used':>11}"]
    for s in aggregate["strategies"]:
        hidden = "unknown" if s["hidden_used_calls"] is None else f"{s['hidden_used_calls']:,}"
        lines.append(f"{s['strategy']:<16} {_money(s['cost']):>12} {_money(s['cost_none']):>12} "
                     f"{_money(s['median_saving']):>14} {_money(s['saving_percentiles']['p90']):>11} "
                     f"{s['share_costs_more_than_none']:>10.0%} {s['errors_kept']:>5,} of {s['error_results']:<3,} "
                     f"{s['runs_pairs_intact']:>5,} of {s['runs']:<3,} {s['tokens_lost']:>11,} {hidden:>11}")
    return "\n".join(lines + _problems(failed, skipped)) + "\n"


def in_order(outcomes: Iterable[tuple[int, Any]]) -> Iterator[Any]:
    """Numbered outcomes, as they complete, put back in corpus order (every number comes once):
    only those that arrived before an earlier one wait."""
    waiting: list[tuple[int, Any]] = []
    expected = 0
    for order, outcome in outcomes:
        heapq.heappush(waiting, (order, id(outcome), outcome))
        while waiting and waiting[0][0] == expected:
            yield heapq.heappop(waiting)[2]
            expected += 1


@contextmanager
def _opened(path: str | None) -> Iterator[TextIO | None]:
    if path is None:
        yield None
    elif path == "-":
        yield sys.stdout
    else:
        try:
            with open(path, "w", encoding="utf-8", newline="") as stream:
                yield stream
        except OSError as exc:
            raise InputError(f"cannot write the file ({exc.strerror or exc})", where=path) from None


def cmd_evaluate(args: argparse.Namespace) -> int:
    """Runs stream out as they are evaluated (JSON and CSV are written run by run, in corpus
    order); what is kept is the aggregate's few numbers per run, and the failed and skipped."""
    from .cli import _dump, policy_setup
    from .evaluate import Aggregate, csv_writer, evaluate_batch, run_rows, run_to_json

    setup = policy_setup(args, _strategies(args))
    found = corpus.find(args.paths, args.max_input_mb)
    outcomes = _progress(executors.run(found, functools.partial(evaluate_batch, setup=setup), executor=args.executor,
                                       workers=args.workers, scheduler=args.scheduler), "evaluate")
    total, failed, skipped, parquet = Aggregate(), [], [], []
    out = sys.stdout if args.json else None
    with _opened(args.csv) as csv_out:
        writer = None
        if out:
            out.write('{"runs": [')
        for outcome in in_order(outcomes):
            if isinstance(outcome, corpus.Failed | corpus.Skipped):
                (failed if isinstance(outcome, corpus.Failed) else skipped).append(outcome)
                continue
            if out:
                out.write(("\n" if not total.runs else ",\n") + formats.keep_surrogates(
                    json.dumps(run_to_json(outcome), ensure_ascii=False)))
            total.add(outcome)
            rows = run_rows(outcome)
            if csv_out:
                writer = writer or csv_writer(csv_out, rows[0])
                writer.writerows(rows)
            if args.parquet:
                parquet.extend(rows)
    aggregate = total.to_json(len(failed), len(skipped))
    if args.parquet:
        _parquet(parquet, args.parquet)
    if out:
        rest = _dump(problems_to_json(failed, skipped) | {"aggregate": aggregate})
        out.write("\n]," + formats.keep_surrogates(rest[1:]))
    elif args.csv != "-":  # stdout holds the CSV alone
        sys.stdout.write(evaluation_table(aggregate, failed, skipped))
    return 0


def tune_table(result: dict[str, Any]) -> str:
    from .cli import _money

    lines = [f"{result['runs']} runs, mode {result['mode']}; hidden-then-used calls: {result['hidden_used_calls']}"]
    lines += [f"priced as {p['model']} ({p['source']}), cache {p['cache']}: {p['runs']} runs" for p in result["prices"]]
    for s in result["strategies"]:
        chosen = s["best"]
        lines.append(f"{s['strategy']}: best {json.dumps(chosen['params']) if chosen else '(none)'}"
                     + (f" at {_money(chosen['cost'])}" if chosen else "")
                     + "; front: " + ", ".join(f"{json.dumps(p['params'])} {_money(p['cost'])}" for p in s["front"]))
    return "\n".join(lines) + "\n"


def cmd_tune(args: argparse.Namespace) -> int:
    from .cli import _dump, _write, policy_setup
    from .tune import DEFAULT_GRID, Grid, summarize, tune_batch

    setup = policy_setup(args, _strategies(args))
    grid = Grid.parse(args.grid or DEFAULT_GRID)
    runs, failed, skipped = partition(_outcomes(args, functools.partial(tune_batch, setup=setup, grid=grid), "tune"))
    result = summarize(runs, setup, grid, args.max_hidden_used) | problems_to_json(failed, skipped)
    if args.json:
        _write(_dump(result), None)
    else:
        _write(tune_table(result) + "".join(line + "\n" for line in _problems(failed, skipped)), None)
    return 0


def _common(p: argparse.ArgumentParser) -> None:
    from .cli import _count, _input_limit, _policy_arguments

    p.add_argument("paths", nargs="+", metavar="PATH",
                   help="files, folders (recursively), globs, .zip / .tar.gz archives and .gz files")
    p.add_argument("--strategy", choices=list(POLICIES), action="append",
                   help="only these strategies (repeat the option; default: every strategy)")
    _policy_arguments(p)
    p.add_argument("--workers", type=_count,
                   help=f"worker processes (default: this machine's cores, {executors.default_workers()}; 0: this "
                        "process alone)")
    p.add_argument("--executor", choices=executors.EXECUTORS, default="local",
                   help="local: a process pool here (default); dask: a Dask cluster (requirements-dask.txt), a "
                        "LocalCluster unless --scheduler names one")
    p.add_argument("--scheduler", metavar="ADDRESS", help="with --executor dask: an existing cluster, tcp://host:port")
    _input_limit(p)


def add_commands(commands: Any) -> None:
    from .cli import _tokens
    from .tune import DEFAULT_GRID

    p = commands.add_parser("evaluate", help="evaluate the policies over a corpus of runs, one row per run and "
                                             "strategy, and the whole corpus")
    _common(p)
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print runs, failed, skipped and the aggregate as JSON")
    out.add_argument("--csv", metavar="OUT", help="write one row per run and strategy as CSV (- for stdout)")
    out.add_argument("--parquet", metavar="OUT", help="write the same rows as Parquet (needs pyarrow)")
    p.set_defaults(run=cmd_evaluate)

    p = commands.add_parser("tune", help="sweep policy parameters over a corpus: the cheapest setting and the "
                                         "front of cost against hidden-then-used calls")
    _common(p)
    p.add_argument("--grid", nargs="+", metavar="NAME=VALUES",
                   help=f"the axes to sweep, e.g. threshold=20000:150000:10000 keep_recent=0:5 window=2,5,10 "
                        f"(default: {' '.join(DEFAULT_GRID)})")
    p.add_argument("--max-hidden-used", type=_tokens, metavar="R",
                   help="the best setting may hide data the agent then used in at most R calls over the corpus")
    p.add_argument("--json", action="store_true", help="print every strategy's front and best as JSON")
    p.set_defaults(run=cmd_tune)

