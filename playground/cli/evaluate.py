"""``evaluate``: every run of a corpus under the policies, one row per run and policy, and the
whole corpus's aggregate. Runs stream out as they are evaluated (JSON and CSV are written run by
run, in corpus order); what is kept is the aggregate's few numbers per run, and the failed and
skipped."""

from __future__ import annotations

import argparse
import functools
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from .. import formats
from ..corpus import finder
from ..corpus.evaluate import Aggregate, csv_writer, evaluate_batch, problems_to_json, run_rows, run_to_json
from ..errors import InputError
from ..run.prices import money
from ..words import plural
from .corpus_runs import add_corpus_arguments, corpus_setup, in_order, outcomes, problems
from .output import dump

PARQUET_MISSING = "--parquet needs pyarrow (Streamlit installs it; else `pip install pyarrow`), or use --csv"


def add_parser(commands: Any) -> None:
    p = commands.add_parser("evaluate", help="evaluate the policies over a corpus of runs, one row per run and "
                                             "policy, and the whole corpus")
    add_corpus_arguments(p)
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print runs, failed, skipped and the aggregate as JSON")
    out.add_argument("--csv", metavar="OUT", help="write one row per run and policy as CSV (- for stdout)")
    out.add_argument("--parquet", metavar="OUT", help="write the same rows as Parquet (needs pyarrow)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    numbered = outcomes(args, functools.partial(evaluate_batch, setup=corpus_setup(args)), "evaluate")
    total, failed, skipped, parquet = Aggregate(), [], [], []
    out = sys.stdout if args.json else None
    with _opened(args.csv) as csv_out:
        writer = None
        if out:
            out.write('{"runs": [')
        for outcome in in_order(numbered):
            if isinstance(outcome, finder.Failed | finder.Skipped):
                (failed if isinstance(outcome, finder.Failed) else skipped).append(outcome)
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
        rest = dump(problems_to_json(failed, skipped) | {"aggregate": aggregate})
        out.write("\n]," + formats.keep_surrogates(rest[1:]))
    elif args.csv != "-":  # stdout holds the CSV alone
        sys.stdout.write(evaluation_table(aggregate, failed, skipped))
    return 0


def evaluation_table(aggregate: dict[str, Any], failed: list[finder.Failed], skipped: list[finder.Skipped]) -> str:
    """The final table: one line per policy over the whole corpus."""
    lines = [f"{aggregate['runs']} runs, {aggregate['failed']} failed, {aggregate['skipped']} skipped",
             f"{'strategy':<16} {'cost':>12} {'cost none':>12} {'median saving':>14} {'p90 saving':>11} "
             f"{'costs more':>10} {'errors kept':>12} {'pairs intact':>12} {'lost':>11} {'hidden used':>11}"]
    for s in aggregate["strategies"]:
        hidden = "unknown" if s["hidden_used_calls"] is None else f"{s['hidden_used_calls']:,}"
        lines.append(f"{s['strategy']:<16} {money(s['cost']):>12} {money(s['cost_none']):>12} "
                     f"{money(s['median_saving']):>14} {money(s['saving_percentiles']['p90']):>11} "
                     f"{s['share_costs_more_than_none']:>10.0%} {s['errors_kept']:>5,} of {s['error_results']:<3,} "
                     f"{s['runs_pairs_intact']:>5,} of {s['runs']:<3,} {s['tokens_lost']:>11,} {hidden:>11}")
    unpriced = max((s["runs_unpriced"] for s in aggregate["strategies"]), default=0)
    if unpriced:
        lines.append(f"{plural(unpriced, 'run')} of a model whose price is unknown: counted, left out of the medians "
                     "and percentiles, and the cost sums are unknown")
    return "\n".join(lines + problems(failed, skipped)) + "\n"


@contextmanager
def _opened(path: str | None) -> Iterator[TextIO | None]:
    """The CSV's stream: none, stdout (``-``) or the file, written as the runs arrive."""
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
