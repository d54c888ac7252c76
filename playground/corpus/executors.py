"""Where a corpus is evaluated: in this process, a local process pool (the default), or a Dask
cluster — the same function (``evaluate.evaluate_batch``) shipped to each, so the numbers are
identical wherever they were computed.

Runs travel as paths (a worker reads its own files; only tar members and uploads go as bytes),
a few runs per task (a Dask task costs ~7 ms of CPU on its own), and at most a small window of
tasks is in flight, so memory stays bounded by the runs being worked on, not by the corpus.
Dask is optional (``requirements-dask.txt``): it is imported only when asked for.
"""

from __future__ import annotations

import importlib
import logging
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator
from concurrent import futures  # its process pool (and multiprocessing) loads only when a pool is made
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import islice
from typing import Any

from .. import limits
from ..errors import InputError
from .finder import Failed, Found, Skipped, Source

EXECUTORS = ("local", "dask")
# runs per task: a Dask task costs milliseconds of scheduling of its own, so small runs go 32 to a task (with 8,
# Dask took 1.37-1.45x the pool's time on the benchmark's small runs, with 32 1.28-1.30x)
BATCH_RUNS = 32
BATCH_BYTES = 1024 * 1024  # ... or fewer, once their files add up to this: a few large runs make a task
DASK_MISSING = ("--executor dask needs Dask's distributed scheduler, which is optional: install it with "
                "`pip install -r requirements-dask.txt`")

Batch = list[tuple[int, Source]]
Task = Callable[[Batch], list[tuple[int, Any]]]  # picklable: a module-level function, or a partial of one


def _size(source: Source) -> int:
    if source.data is not None:
        return len(source.data)
    try:
        return os.path.getsize(source.path) if source.member is None and source.path else 0
    except OSError:
        return 0


def batches(found: Iterable[Found], emit: Callable[[int, Failed | Skipped], None]) -> Iterator[Batch]:
    """The runs of ``found`` in batches, numbered in corpus order; what the finder already decided
    (skipped, failed) goes straight to ``emit`` with its number."""
    batch: Batch = []
    weight = 0
    for order, item in enumerate(found):
        if not isinstance(item, Source):
            emit(order, item)
            continue
        batch.append((order, item))
        weight += _size(item)
        if len(batch) >= BATCH_RUNS or weight >= BATCH_BYTES:
            yield batch
            batch, weight = [], 0
    if batch:
        yield batch


@dataclass(frozen=True)
class _Workers:
    """What the corpus needs of an executor: send a batch (a future back), wait for the first done."""

    submit: Callable[[Batch], Any]
    wait: Callable[[set], tuple[set, set]]


def _windowed(workers: _Workers, work: Iterator[Batch], window: int) -> Iterator[list[tuple[int, Any]]]:
    """At most ``window`` tasks in flight, results as they complete."""
    pending = {workers.submit(batch) for batch in islice(work, window)}
    while pending:
        done, pending = workers.wait(pending)
        for future in done:
            yield future.result()
            pending.update(workers.submit(batch) for batch in islice(work, 1))


@contextmanager
def _local(task: Task, workers: int) -> Iterator[_Workers]:
    with futures.ProcessPoolExecutor(workers) as pool:
        yield _Workers(lambda batch: pool.submit(task, batch),
                       lambda pending: tuple(futures.wait(pending, return_when=futures.FIRST_COMPLETED)))


@contextmanager
def _dask(task: Task, workers: int, scheduler: str | None) -> Iterator[_Workers]:
    try:  # optional, so looked up by name: the app's requirements (and its start) never need it
        distributed = importlib.import_module("distributed")
    except ImportError:
        raise InputError(DASK_MISSING) from None
    Client, LocalCluster, dask_wait = distributed.Client, distributed.LocalCluster, distributed.wait  # noqa: N806

    def on(client: Any) -> _Workers:
        return _Workers(lambda batch: client.submit(task, batch, pure=False),
                        lambda pending: tuple(map(set, dask_wait(list(pending), return_when="FIRST_COMPLETED"))))

    if scheduler:
        try:
            client = Client(scheduler, timeout=30)
        except (OSError, TimeoutError) as exc:
            raise InputError(f"cannot reach the Dask scheduler ({exc})", where="--scheduler", value=scheduler) from None
        with client:
            yield on(client)
        return
    # Quiet and local: loopback only, the scheduler's HTTP server on a free port (not 0.0.0.0:8787), errors only.
    with tempfile.TemporaryDirectory(prefix="playground-dask-") as scratch, \
            LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                         dashboard_address="127.0.0.1:0", silence_logs=logging.ERROR,
                         local_directory=scratch) as cluster, Client(cluster) as client:
        client.wait_for_workers(workers)
        yield on(client)


def default_workers() -> int:
    return limits.cores()


def run(found: Iterable[Found], task: Task, *, executor: str = "local", workers: int | None = None,
        scheduler: str | None = None) -> Iterator[tuple[int, Any]]:
    """Every outcome of the corpus as it comes: ``task``'s results and what the finder skipped or
    failed, numbered in corpus order (but not yielded in it). ``workers`` 0 runs ``task`` in this
    process (the page, and tests of the engine alone)."""
    if executor not in EXECUTORS:
        raise InputError(f"unknown executor (choose {', '.join(EXECUTORS)})", where="--executor", value=executor)
    workers = default_workers() if workers is None else workers
    early: list[tuple[int, Any]] = []
    work = batches(found, lambda order, outcome: early.append((order, outcome)))
    if executor == "local" and workers == 0:
        results: Iterator[list[tuple[int, Any]]] = map(task, work)
        for done in results:
            yield from early
            early.clear()
            yield from done
        yield from early
        return
    context = _local(task, workers) if executor == "local" else _dask(task, max(1, workers), scheduler)
    with context as pool:
        for done in _windowed(pool, work, window=2 * max(1, workers)):
            yield from early
            early.clear()
            yield from done
    yield from early
