"""Benchmark: ``evaluate`` over a seeded corpus of many small runs and a few large ones, on the
local process pool and on a Dask LocalCluster, with 1 and 2 workers. Everything is measured in
this one run and printed as ratios:

    python scripts/benchmark_corpus.py [--small 10000] [--large 100] [--policy P …]

Prints runs/s and tokens/s per executor and worker count (tokens: each run's prompt counted once),
the scaling from 1 to 2 workers (target ≥ 1.7× on the large runs), Dask's time over the local
pool's on the same workers (target ≤ 1.3×), tokens/s of one worker against one tiktoken pass
over the same text in one process (target ≥ 0.3×), and the peak memory of one process while
evaluating the whole corpus against evaluating its largest run alone (target < 2×).
"""

from __future__ import annotations

import argparse
import functools
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from benchmark import all_text, synthetic  # noqa: E402  (the count benchmark's seeded agent run)

from playground import formats  # noqa: E402
from playground.corpus import executors, finder  # noqa: E402
from playground.corpus.evaluate import ALL, Evaluation, Setup, evaluate_batch, named_policies  # noqa: E402
from playground.meter.encodings import get_encoding  # noqa: E402
from playground.meter.tokens import Meter  # noqa: E402
from playground.policies import POLICIES  # noqa: E402


def write_corpus(folder: Path, small: int, large: int, seed: int = 17) -> dict[str, int]:
    """``small`` runs of 2–6k tokens and ``large`` ones of 40–80k, as Chat request files; their
    prompt tokens, counted once."""
    rng = random.Random(seed)
    meter = Meter("gpt-4o")
    tokens: dict[str, int] = {}
    for kind, n, low, high in (("small", small, 2_000, 6_000), ("large", large, 40_000, 80_000)):
        (folder / kind).mkdir()
        for number in range(n):
            body = synthetic(rng.randint(low, high), seed=rng.randrange(1 << 30))
            path = folder / kind / f"run-{number:05d}.json"
            path.write_text(json.dumps(body))
            tokens[str(path)] = meter.count(formats.read(body)).total
    return tokens


def timed(folder: Path, setup: Setup, executor: str, workers: int) -> tuple[float, Evaluation]:
    """Seconds to evaluate every run under ``folder`` (the executor's start-up included)."""
    start = time.perf_counter()
    outcomes = list(executors.run(finder.find([str(folder)]), functools.partial(evaluate_batch, setup=setup),
                                  executor=executor, workers=workers))
    return time.perf_counter() - start, Evaluation.of(outcomes)


def floor(folder: Path) -> tuple[float, int]:
    """One tiktoken pass over all the runs' text in this process: seconds and tokens."""
    texts = [all_text(formats.loads(path.read_bytes())) for path in sorted(folder.glob("*.json"))]
    encoding = get_encoding("o200k_base")
    start = time.perf_counter()
    tokens = sum(len(encoding.encode_ordinary(text)) for text in texts)
    return time.perf_counter() - start, tokens


def peak_mb(*paths: str, policies: tuple[str, ...]) -> float:
    """The largest resident set of any one process of ``evaluate`` (the CLI or its worker) over ``paths``."""
    options = [arg for name in policies for arg in ("--policy", name)]
    code = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL); "
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    done = subprocess.run([sys.executable, "-c", code, sys.executable, "-m", "playground", "evaluate", *paths,
                           "--workers", "1", "--json", *options], cwd=ROOT, capture_output=True, text=True, check=True)
    return int(done.stdout.strip()) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--small", type=int, default=10_000, help="small runs in the corpus (default 10000)")
    parser.add_argument("--large", type=int, default=100, help="large runs in the corpus (default 100)")
    parser.add_argument("--policy", "--strategy", dest="policy", choices=[*POLICIES, ALL], action="append",
                        metavar="POLICY", help="these policies (--strategy, the older name, still works; default: "
                                               "evaluate's own default; all: every policy)")
    parser.add_argument("--executor", choices=executors.EXECUTORS, action="append",
                        help="only these executors (default: both)")
    args = parser.parse_args()
    setup = Setup(policies=named_policies(args.policy))
    chosen = args.executor or list(executors.EXECUTORS)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        start = time.perf_counter()
        tokens = write_corpus(folder, args.small, args.large)
        print(f"corpus: {args.small:,} small runs ({sum(v for k, v in tokens.items() if '/small/' in k):,} tokens), "
              f"{args.large:,} large ({sum(v for k, v in tokens.items() if '/large/' in k):,} tokens), "
              f"written in {time.perf_counter() - start:.0f} s; strategies {', '.join(setup.policies)}")
        seconds: dict[tuple[str, str, int], float] = {}
        results: dict[tuple[str, str, int], dict] = {}
        (folder / "one").mkdir()
        (folder / "one" / "run.json").write_bytes(next((folder / "small").glob("*.json")).read_bytes())
        startup = {(executor, workers): timed(folder / "one", setup, executor, workers)[0]
                   for executor in chosen for workers in (1, 2)}
        print("start-up and shutdown with one small run (subtracted below): "
              + ", ".join(f"{e} {w}w {t:.1f} s" for (e, w), t in startup.items()))
        for kind in ("large", "small"):  # rates below leave out start-up (and shutdown)
            total = sum(v for k, v in tokens.items() if f"/{kind}/" in k)
            runs = args.large if kind == "large" else args.small
            for executor in chosen:
                for workers in (1, 2):
                    whole, evaluation = timed(folder / kind, setup, executor, workers)
                    took = seconds[kind, executor, workers] = max(1e-9, whole - startup[executor, workers])
                    results[kind, executor, workers] = evaluation.to_json()["aggregate"]
                    assert not evaluation.failed, evaluation.failed[:3]
                    print(f"{kind:<5} {executor:<5} {workers} worker(s): {took:8.1f} s  {runs / took:8.1f} runs/s  "
                          f"{total / took:10,.0f} tokens/s  ({whole:.1f} s with start-up)", flush=True)
        for kind in ("large", "small"):
            for executor in chosen:
                print(f"scaling 1 -> 2 workers, {kind}, {executor}: "
                      f"{seconds[kind, executor, 1] / seconds[kind, executor, 2]:.2f}x (target >= 1.7 on large)")
            if len(chosen) == 2:
                for workers in (1, 2):
                    print(f"dask / local, {kind}, {workers} worker(s): "
                          f"{seconds[kind, 'dask', workers] / seconds[kind, 'local', workers]:.2f}x (target <= 1.3)")
                assert results[kind, "dask", 2] == results[kind, "local", 2], "the executors disagree"
        floor_seconds, floor_tokens = floor(folder / "large")
        large_total = sum(v for k, v in tokens.items() if "/large/" in k)
        per_worker = large_total / seconds["large", chosen[0], 1]
        print(f"one tiktoken pass over the large runs' text: {floor_tokens / floor_seconds:,.0f} tokens/s; evaluate "
              f"with 1 worker ({chosen[0]}): {per_worker:,.0f} tokens/s = "
              f"{per_worker / (floor_tokens / floor_seconds):.2f}x (target >= 0.3)")
        largest = max((k for k in tokens if "/large/" in k), key=lambda k: tokens[k])
        alone, whole = peak_mb(largest, policies=setup.policies), peak_mb(tmp, policies=setup.policies)
        print(f"peak memory of one process: the largest run alone {alone:.0f} MB, the whole corpus {whole:.0f} MB = "
              f"{whole / alone:.2f}x (target < 2)")


if __name__ == "__main__":
    main()
