"""A policy over a corpus of runs: each run replayed under each strategy, then the whole corpus.

Each run goes through the same machinery as ``compare`` (``replay`` under each policy, one meter
for all of them, so every item is counted once per run), so a run's numbers are exactly what
``python -m playground compare FILE --json`` prints for that file. ``evaluate_batch`` is the one
function every executor ships to its workers: it takes small picklable values (``Source``,
``Setup``) and returns small ones (``RunResult``, ``Failed``, ``Skipped``); a worker holds one run
at a time and keeps nothing between runs.
"""

from __future__ import annotations

import csv
import io
import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from . import formats, limits
from .compaction import DEFAULT_THRESHOLD
from .compare import Row, row_of, rows_to_json
from .corpus import Failed, Skipped, Source
from .engine import Engine
from .errorpatterns import error_detail
from .errors import InputError
from .model import Conversation, Item, ToolCall, ToolResult, pairs
from .policies import POLICIES, make
from .prices import read_prices
from .promptcache import check_cache
from .replay import Replay, call_starts, replay
from .summarize import DEFAULT_KEEP_STEPS
from .tokens import Meter

PERCENTILES = (10, 50, 90)
WORST = 10


@dataclass(frozen=True)
class Setup:
    """Everything a worker needs to evaluate a run, as plain values: the strategies and every
    policy's options as ``compare`` takes them (the rules as their JSON, or a preset's name —
    ``suggested`` is built per run, for that run's tools)."""

    strategies: tuple[str, ...] = tuple(POLICIES)
    preset: str | None = None
    rules: Any = None  # rules JSON (a --rules file) or Rules (the page's, never pickled); None: the book's
    label: str = "book"
    threshold: int = DEFAULT_THRESHOLD
    limit: int | None = None  # summarize at or above this; None: at the threshold, as the command line does
    keep_recent: int = 0
    summarize: bool = True
    keep_steps: int = DEFAULT_KEEP_STEPS
    window: int = 10
    trigger: int = 100_000
    keep: int = 3
    clear_at_least: int = 0
    exclude_tools: tuple[str, ...] = ()
    clear_tool_inputs: bool = False
    model: str | None = None
    cache: str | None = None
    mode: str = "stored"
    max_input_mb: int = limits.DEFAULT_MAX_INPUT_MB

    def options(self, conversation: Conversation) -> dict[str, Any]:
        """Every strategy's options for this run (each policy takes the ones it knows)."""
        from .rules import Rules, book_rules, load_rules
        from .rulesets import RULESETS

        if self.preset:
            if self.preset not in RULESETS:
                raise InputError(f"no such rule preset here (this installation has: {', '.join(RULESETS)})",
                                 where="--preset", value=self.preset)
            rules = RULESETS[self.preset][1](conversation)
        elif self.rules is None or isinstance(self.rules, Rules):
            rules = self.rules or book_rules()
        else:
            rules = load_rules(self.rules)
        return {"rules": rules, "label": self.preset or self.label, "threshold": self.threshold,
                "limit": self.threshold if self.limit is None else self.limit, "keep_recent": self.keep_recent,
                "summarize": self.summarize, "keep_steps": self.keep_steps, "window": self.window,
                "trigger": self.trigger, "keep": self.keep, "clear_at_least": self.clear_at_least,
                "exclude_tools": self.exclude_tools, "clear_tool_inputs": self.clear_tool_inputs}


@dataclass(frozen=True)
class StrategyResult:
    """One strategy over one run: ``row`` is compare's row; the rest is what the corpus adds."""

    row: Row
    cost_none: float  # the same run with no policy: what the saving is measured from
    error_results: int  # error results the run's last request would hold without the policy
    errors_kept: int  # of those, still there as they were
    pairs_intact: bool  # every call in the last request still has its result, and every result its call
    hidden_used_calls: int | None

    @property
    def saving(self) -> float:
        return self.cost_none - self.row.cost


@dataclass(frozen=True)
class RunResult:
    source: str
    format: str
    model: str
    calls: int
    strategies: tuple[StrategyResult, ...]


Outcome = RunResult | Failed | Skipped


def hidden_used_calls(run: Replay) -> int | None:
    """Calls after which the agent used data the policy had hidden from it. The quality measure
    lands in ``replay`` separately; until it is wired here, this is unknown (None), never 0."""
    return None


def _error_results(items: Sequence[Item]) -> list[Item]:
    return [item for item in items if isinstance(item, ToolResult) and error_detail(item)]


def _pairs_intact(original: Sequence[Item], sent: Sequence[Item]) -> bool:
    """No result without its call, and no call the run answered without its result, in what was sent."""
    sent = tuple(sent)
    answered = pairs(sent)
    if sum(isinstance(item, ToolResult) for item in sent) != len(answered):
        return False
    present = {item.call_id for item in sent if isinstance(item, ToolCall)}
    was_answered = {original[call].call_id for call in pairs(tuple(original))}
    return {sent[call].call_id for call in answered} >= was_answered & present


def strategy_result(run: Replay, conversation: Conversation) -> StrategyResult:
    """compare's row for ``run`` and what the corpus view adds to it."""
    starts = call_starts(conversation.items)
    original = conversation.items[:starts[-1]] if starts else ()
    errors = _error_results(original)
    kept = {id(item) for item in run.final.items}
    return StrategyResult(row_of(run), run.totals.cost_without, len(errors), sum(id(item) in kept for item in errors),
                          _pairs_intact(original, run.final.items), hidden_used_calls(run))


def _conversation(data: Any) -> tuple[Conversation, str | None]:
    """The run in ``data`` and the model it names: an API request or agent log, or a preset file
    (its ``conversation``, priced as its ``model``)."""
    if isinstance(data, dict) and "conversation" in data and "title" in data:
        from .presets import parse_preset

        preset = parse_preset(data, "preset")
        return preset.conversation, preset.model
    return formats.read(data, formats.detect(data)), None


def evaluate_run(conversation: Conversation, setup: Setup, source: str, model: str | None = None,
                 meter: Meter | None = None) -> RunResult:
    """Every strategy of ``setup`` replayed over one run, with one meter for all of them."""
    model = setup.model or model or conversation.model
    meter = meter or Engine().meter(model)
    price = read_prices().get(model)
    cache = setup.cache or price.provider
    check_cache(cache, price.provider, price.model, where="cache")
    options = setup.options(conversation)
    results = tuple(strategy_result(replay(conversation, make(name, **options), meter, price, mode=setup.mode,
                                           cache=cache), conversation) for name in setup.strategies)
    return RunResult(source, conversation.source or conversation.format, price.model,
                     len(call_starts(conversation.items)), results)


def load(source: Source, setup: Setup) -> tuple[Conversation, str | None] | Failed | Skipped:
    """One run read and recognised, with the model its file names (a preset's); what is not a run
    is Skipped, what cannot be read is Failed with its located message."""
    try:
        data = formats.parse_text(source.read(setup.max_input_mb))
        conversation, model = _conversation(data)
    except InputError as exc:
        if exc.message.startswith("unrecognised format"):
            return Skipped(source.name, "not a conversation: no reader recognises it")
        return Failed(source.name, str(exc.within(source.name)))
    if not call_starts(conversation.items):
        return Skipped(source.name, "no LLM call in it (no assistant turn)")
    return conversation, model


def guarded(source: Source, work: Callable[[Source], Any]) -> Any:
    """``work(source)``, or its failure as a value — never an exception, so the rest of the corpus
    goes on (a bug on one run is reported as that run's failure)."""
    try:
        return work(source)
    except InputError as exc:
        return Failed(source.name, str(exc.within(source.name)))
    except Exception as exc:
        return Failed(source.name, f"internal error (please report): {type(exc).__name__}: {exc}")


def evaluate_source(source: Source, setup: Setup) -> Outcome:
    """One run read, recognised and evaluated under every strategy of ``setup``."""
    def work(source: Source) -> Outcome:
        loaded = load(source, setup)
        return loaded if isinstance(loaded, Failed | Skipped) else evaluate_run(loaded[0], setup, source.name,
                                                                                 loaded[1])
    return guarded(source, work)


def evaluate_batch(batch: Sequence[tuple[int, Source]], setup: Setup) -> list[tuple[int, Outcome]]:
    """The task every executor ships (``functools.partial(evaluate_batch, setup=…)``): a few runs
    per task (a Dask task costs ~7 ms of CPU on its own), each tagged with its place in the corpus
    so results can be put back in order."""
    return [(order, evaluate_source(source, setup)) for order, source in batch]


# ---------------------------------------------------------------------------------------------
# The whole corpus


def _percentiles(values: Sequence[float]) -> dict[str, float]:
    if not values:
        return {f"p{p}": 0.0 for p in PERCENTILES}
    if len(values) == 1:
        return {f"p{p}": values[0] for p in PERCENTILES}
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    return {f"p{p}": cuts[p - 1] for p in PERCENTILES}


def aggregate(runs: Sequence[RunResult], failed: int = 0, skipped: int = 0) -> dict[str, Any]:
    """Totals, medians and percentiles per strategy over ``runs`` (in corpus order), the ten runs
    that save least (most negative first) and the share of runs where the policy costs more than none."""
    strategies: list[dict[str, Any]] = []
    names = list(dict.fromkeys(s.row.strategy for run in runs for s in run.strategies))
    for name in names:
        rows = [(run.source, s) for run in runs for s in run.strategies if s.row.strategy == name]
        costs = [s.row.cost for _, s in rows]
        savings = [s.saving for _, s in rows]
        hidden = [s.hidden_used_calls for _, s in rows]
        known = all(h is not None for h in hidden)
        worst = sorted(rows, key=lambda pair: pair[1].saving)[:WORST]
        strategies.append({
            "strategy": name, "runs": len(rows),
            "tokens_billed": sum(s.row.tokens_billed for _, s in rows),
            "cached_tokens": sum(s.row.cached_tokens for _, s in rows),
            "cost": round(sum(costs), 8), "cost_none": round(sum(s.cost_none for _, s in rows), 8),
            "tokens_lost": sum(s.row.tokens_lost for _, s in rows),
            "tokens_retrievable": sum(s.row.tokens_retrievable for _, s in rows),
            "hidden_used_calls": sum(hidden) if known else None,  # type: ignore[arg-type]
            "errors_kept": sum(s.errors_kept for _, s in rows), "error_results": sum(s.error_results for _, s in rows),
            "runs_pairs_intact": sum(s.pairs_intact for _, s in rows),
            "median_cost": round(statistics.median(costs), 8) if costs else 0.0,
            "median_saving": round(statistics.median(savings), 8) if savings else 0.0,
            "cost_percentiles": {k: round(v, 8) for k, v in _percentiles(costs).items()},
            "saving_percentiles": {k: round(v, 8) for k, v in _percentiles(savings).items()},
            "share_costs_more_than_none": (sum(s.saving < -1e-12 for _, s in rows) / len(rows)) if rows else 0.0,
            "worst_by_saving": [{"source": source, "saving": round(s.saving, 8)} for source, s in worst],
            "worst_by_hidden_used": [{"source": source, "hidden_used_calls": s.hidden_used_calls} for source, s in
                                     sorted(rows, key=lambda pair: -(pair[1].hidden_used_calls or 0))[:WORST]]
            if known else [],
        })
    return {"runs": len(runs), "failed": failed, "skipped": skipped, "strategies": strategies}


def run_to_json(run: RunResult) -> dict[str, Any]:
    """One run as ``evaluate --json`` prints it: compare's numbers for each strategy, and the
    corpus's additions (saving, errors kept, pairs intact)."""
    strategies = []
    for result in run.strategies:
        row = rows_to_json([result.row])[0]
        strategies.append({key: row[key] for key in ("strategy", "tokens_billed", "cached_tokens", "cost",
                                                      "tokens_lost", "tokens_retrievable")}
                          | {"hidden_used_calls": result.hidden_used_calls, "cost_none": round(result.cost_none, 8),
                             "saving": round(result.saving, 8), "errors_kept": result.errors_kept,
                             "error_results": result.error_results, "pairs_intact": result.pairs_intact})
    return {"source": run.source, "format": run.format, "model": run.model, "calls": run.calls,
            "strategies": strategies}


def partition(outcomes: Iterable[tuple[int, Any]]) -> tuple[tuple[Any, ...], tuple[Failed, ...], tuple[Skipped, ...]]:
    """Numbered outcomes (in any order) as the results, the failures and the skips, each in corpus order."""
    ordered = [outcome for _, outcome in sorted(outcomes, key=lambda pair: pair[0])]
    return (tuple(o for o in ordered if not isinstance(o, Failed | Skipped)),
            tuple(o for o in ordered if isinstance(o, Failed)), tuple(o for o in ordered if isinstance(o, Skipped)))


def problems_to_json(failed: Iterable[Failed], skipped: Iterable[Skipped]) -> dict[str, Any]:
    return {"failed": [{"source": f.source, "message": f.message} for f in failed],
            "skipped": [{"source": s.source, "reason": s.reason} for s in skipped]}


@dataclass(frozen=True)
class Evaluation:
    """The whole corpus's outcome, in corpus order."""

    runs: tuple[RunResult, ...]
    failed: tuple[Failed, ...]
    skipped: tuple[Skipped, ...]

    @classmethod
    def of(cls, outcomes: Iterable[tuple[int, Outcome]]) -> Evaluation:
        return cls(*partition(outcomes))

    def to_json(self) -> dict[str, Any]:
        return {"runs": [run_to_json(run) for run in self.runs]} | problems_to_json(self.failed, self.skipped) | {
                "aggregate": aggregate(self.runs, len(self.failed), len(self.skipped))}

    def csv(self) -> str:
        """The table as CSV text, for ``--csv`` and the page's download."""
        rows = self.table()
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=list(rows[0]) if rows else ["source"], lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        return out.getvalue()

    def table(self) -> list[dict[str, Any]]:
        """One flat row per run and strategy: the CSV, the Parquet file and the page's table."""
        return [{"source": run.source, "format": run.format, "model": run.model, "calls": run.calls} | strategy
                for run in self.runs for strategy in run_to_json(run)["strategies"]]
