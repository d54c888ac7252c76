"""What ``evaluate`` and ``tune`` share: the corpus flags, the corpus ``Setup`` its workers take
(plain values: a rules file travels as its JSON), the runs as they complete with a progress bar,
put back in corpus order, and the lines that say what failed or was skipped."""

from __future__ import annotations

import argparse
import heapq
import sys
from collections.abc import Iterable, Iterator
from typing import Any

from ..corpus import executors, finder
from ..corpus.evaluate import ALL, Setup, named_policies
from ..policies import OURS, POLICIES
from .arguments import add_input_limit, number
from .inputs import checked_rules, load_json
from .policy_flags import add_policy_arguments, policy_settings


def add_corpus_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="+", metavar="PATH",
                   help="files, folders (recursively), globs, .zip / .tar.gz archives and .gz files")
    p.add_argument("--policy", "--strategy", dest="policy", choices=[*POLICIES, ALL], action="append",
                   metavar="POLICY", help="these policies (repeat the option; default: the playground's own — "
                        f"{', '.join(OURS)} — and as-it-ran where a log shows the agent compacting; all: every "
                        "policy, the agents' and providers' own too, about three times the work): %(choices)s")
    add_policy_arguments(p)
    p.add_argument("--workers", type=number,
                   help=f"worker processes (default: this machine's cores, {executors.default_workers()}; 0: this "
                        "process alone)")
    p.add_argument("--executor", choices=executors.EXECUTORS, default="local",
                   help="local: a process pool here (default); dask: a Dask cluster (requirements-dask.txt), a "
                        "LocalCluster unless --scheduler names one")
    p.add_argument("--scheduler", metavar="ADDRESS", help="with --executor dask: an existing cluster, tcp://host:port")
    add_input_limit(p)


def corpus_setup(args: argparse.Namespace) -> Setup:
    """The corpus commands' ``Setup``: a rules file is read and checked here, once, and travels
    to the workers as its JSON, as does a prices file."""
    rules = None
    if args.rules:
        rules = load_json(args.rules, args.max_input_mb)
        checked_rules(rules, args.rules)  # bad rules fail here, with the file's name
    return Setup(policies=named_policies(args.policy), preset=args.preset, rules=rules,
                 policy=policy_settings(args), model=args.model, cache=args.cache, mode=args.mode,
                 max_input_mb=args.max_input_mb, baseline=args.baseline, summarizer_model=args.summarizer_model,
                 prices=load_json(args.prices, args.max_input_mb) if args.prices else None)


def outcomes(args: argparse.Namespace, task: executors.Task, what: str) -> Iterator[tuple[int, Any]]:
    """The numbered outcomes of ``task`` over the corpus, as they complete. The paths are looked at
    now, so a bad one fails before any output is begun."""
    found = finder.find(args.paths, args.max_input_mb)
    return _progress(executors.run(found, task, executor=args.executor, workers=args.workers,
                                   scheduler=args.scheduler), what)


def _progress(outcomes: Iterator[tuple[int, Any]], what: str) -> Iterator[tuple[int, Any]]:
    from tqdm import tqdm

    # The corpus streams: its size is not known up front, so the bar counts files done and their rate.
    yield from tqdm(outcomes, desc=what, unit=" files", file=sys.stderr, disable=None, leave=False)


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


def problems(failed: Iterable[finder.Failed], skipped: Iterable[finder.Skipped]) -> list[str]:
    return ([f"failed  {f.message}" for f in failed]
            + [f"skipped {s.source}: {s.reason}" for s in skipped])
