"""Which trigger to set, from a person's own runs: a grid of policy parameters swept over the
whole corpus, the Pareto front of whole-corpus cost against hidden-then-used calls, and the
cheapest setting within a limit, per policy.

Each run is read once and counted once: one meter serves every policy and every grid point
(its per-text cache makes each further replay re-count only what a setting changed). The task
shipped to the executors is ``tune_batch``, like ``evaluate.evaluate_batch``.

``hidden_used_calls`` is replay's (``run.hidden``): a setting is on the front when no cheaper one
hides less that the agent then used.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..engine import Engine
from ..errors import InputError
from ..policies import PolicySettings, make, takes
from ..run.hidden import SpanIndex
from ..run.prices import counted_as, read_prices
from ..run.promptcache import check_cache
from ..run.replay import replay
from .evaluate import Setup, guarded, hidden_used_calls, load
from .finder import Failed, Skipped, Source

AXES = ("threshold", "keep_recent", "keep_steps", "window", "trigger", "keep", "clear_at_least")
DEFAULT_GRID = ("threshold=20000:140000:20000", "keep_recent=0,3")
MAX_POINTS = 10_000  # per policy: a grid larger than this is a typo, not a sweep


def _values(text: str, where: str) -> tuple[int, ...]:
    """``a:b:step`` (both ends included), ``a:b`` (step 1) or ``a,b,c``."""
    try:
        if ":" in text:
            parts = [int(part) for part in text.split(":")]
            if len(parts) not in (2, 3) or (len(parts) == 3 and parts[2] <= 0) or parts[1] < parts[0]:
                raise ValueError
            low, high, step = parts[0], parts[1], parts[2] if len(parts) == 3 else 1
            values = tuple(range(low, high + 1, step))
        else:
            values = tuple(dict.fromkeys(int(part) for part in text.split(",")))
    except ValueError:
        raise InputError("expected LOW:HIGH:STEP, LOW:HIGH or A,B,C (whole numbers, LOW ≤ HIGH, STEP > 0)",
                         where=where, value=text) from None
    if any(value < 0 for value in values) or not values:
        raise InputError("expected whole numbers, 0 or more", where=where, value=text)
    return values


@dataclass(frozen=True)
class Grid:
    """Named axes of values; each policy sweeps the axes it takes (``threshold`` is also
    summarization's limit, as on the command line)."""

    axes: tuple[tuple[str, tuple[int, ...]], ...]

    @classmethod
    def parse(cls, specs: Sequence[str]) -> Grid:
        axes: dict[str, tuple[int, ...]] = {}
        for spec in specs:
            name, _, values = spec.partition("=")
            name = name.strip().replace("-", "_")
            if name not in AXES or not values:
                raise InputError(f"expected NAME=VALUES, NAME one of {', '.join(AXES)}", where="--grid", value=spec)
            axes[name] = _values(values.strip(), f"--grid {name}")
        return cls(tuple(axes.items()))

    def points(self, policy: str) -> tuple[dict[str, int], ...]:
        fields = takes(policy)
        taken = [(name, values) for name, values in self.axes
                 if name in fields or (name == "threshold" and "limit" in fields)]
        found = tuple(dict(zip([name for name, _ in taken], combo, strict=True))
                      for combo in itertools.product(*(values for _, values in taken)))
        if len(found) > MAX_POINTS:
            raise InputError(f"{len(found):,} settings for {policy}: at most {MAX_POINTS:,}", where="--grid")
        return found


def _options(base: PolicySettings, point: dict[str, int]) -> PolicySettings:
    """The settings at one grid point: a threshold there moves the summarization limit with it."""
    return base.with_options(**point, **({"limit": point["threshold"]} if "threshold" in point else {}))


@dataclass(frozen=True)
class RunCosts:
    """One run's whole-run cost (and hidden-then-used calls) at every grid point, per policy."""

    source: str
    model: str
    price_source: str
    cache: str
    costs: tuple[tuple[str, tuple[tuple[float, int | None], ...]], ...]


def tune_source(source: Source, setup: Setup, grid: Grid) -> RunCosts | Failed | Skipped:
    def work(source: Source) -> RunCosts | Failed | Skipped:
        loaded = load(source, setup)
        if isinstance(loaded, Failed | Skipped):
            return loaded
        conversation, named = loaded
        model = setup.model or named or counted_as(conversation, read_prices())
        meter = Engine().meter(model)  # one meter for every policy and point: each item counted once
        table = setup.table()
        price = table.dated(conversation.started).get(model, conversation.format)
        if not price.known:  # tuning chooses by cost: a run nobody can price has none to choose by
            return Skipped(source.name, f"{price.source}: tune chooses by cost, so this run is left out")
        cache = setup.cache or price.cache
        check_cache(cache, price.cache, price.model, where="cache")
        base, summarizer = setup.options(conversation, price.context_window), setup.summarizer(table)
        spans = SpanIndex.of(conversation)  # what the agent wrote, read once for every policy and point
        costs = []
        for policy in setup.policies:
            found = []
            for point in grid.points(policy):
                run = replay(conversation, make(policy, _options(base, point)), meter, price, mode=setup.mode,
                             cache=cache, spans=spans, summarizer=summarizer, baseline=setup.baseline)
                found.append((run.totals.cost_with, hidden_used_calls(run)))
            costs.append((policy, tuple(found)))
        return RunCosts(source.name, price.model, price.source, cache, tuple(costs))
    return guarded(source, work)


def tune_batch(batch: Sequence[tuple[int, Source]], setup: Setup, grid: Grid) -> list[tuple[int, Any]]:
    """The task the executors ship (``functools.partial(tune_batch, setup=…, grid=…)``)."""
    return [(order, tune_source(source, setup, grid)) for order, source in batch]


@dataclass(frozen=True)
class Point:
    params: dict[str, int]
    cost: float
    hidden_used_calls: int | None

    def to_json(self) -> dict[str, Any]:
        return {"params": self.params, "cost": round(self.cost, 8), "hidden_used_calls": self.hidden_used_calls}


def front(points: Iterable[Point]) -> list[Point]:
    """The Pareto front of cost against hidden-then-used calls: no other point is at least as good
    on both and better on one. An unknown count ranks as equal, so the front is then the cheapest."""
    kept: list[Point] = []
    for point in sorted(points, key=lambda p: (p.cost, p.hidden_used_calls or 0)):
        if not kept or (point.hidden_used_calls or 0) < (kept[-1].hidden_used_calls or 0):
            kept.append(point)
    return kept


def best(points: Sequence[Point], max_hidden_used: int | None) -> Point | None:
    """The cheapest point within the limit (an unknown count passes: it cannot be checked yet)."""
    allowed = [p for p in points if max_hidden_used is None or p.hidden_used_calls is None
               or p.hidden_used_calls <= max_hidden_used]
    return min(allowed, key=lambda p: p.cost, default=None)


def summarize(runs: Sequence[RunCosts], setup: Setup, grid: Grid, max_hidden_used: int | None = None
              ) -> dict[str, Any]:
    """``tune --json``: per policy every point's whole-corpus cost, the front and the best, with
    the cache models and prices the runs were billed by."""
    policies = []
    for policy in setup.policies:
        params = grid.points(policy)
        per_run = [dict(run.costs)[policy] for run in runs]
        points = []
        for n, point in enumerate(params):
            hidden = [found[n][1] for found in per_run]
            points.append(Point(point, sum(found[n][0] for found in per_run),
                                sum(hidden) if all(h is not None for h in hidden) else None))  # type: ignore[arg-type]
        chosen = best(points, max_hidden_used)
        policies.append({"strategy": policy, "front": [p.to_json() for p in front(points)],
                         "best": chosen.to_json() if chosen else None, "points": [p.to_json() for p in points]})
    priced: dict[tuple[str, str, str], int] = {}
    for run in runs:
        key = (run.model, run.price_source, run.cache)
        priced[key] = priced.get(key, 0) + 1
    return {"strategies": policies, "runs": len(runs), "mode": setup.mode,
            "prices": [{"model": model, "source": source, "cache": cache, "runs": count}
                       for (model, source, cache), count in priced.items()],
            "hidden_used_calls": "calls whose reply used a piece of an earlier item their request had hidden "
                                 "(replay's hidden_used), summed over the corpus"}
