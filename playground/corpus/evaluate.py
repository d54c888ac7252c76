"""A policy over a corpus of runs: each run replayed under each policy, then the whole corpus.

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
import math
import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from .. import formats, limits
from ..conversation import Conversation, Item, ToolCall, ToolResult, pairs
from ..engine import Engine
from ..errors import InputError
from ..meter.tokens import Meter
from ..policies import LOGGED, OURS, POLICIES, PolicySettings, make, offered
from ..rules.errorpatterns import error_detail
from ..run.compare import Row, baseline_row, row_of, rows_to_json
from ..run.hidden import SpanIndex, calls_with
from ..run.inferred import infer
from ..run.prices import Price, PriceTable, counted_as, load_prices, read_prices, rounded
from ..run.promptcache import check_cache
from ..run.replay import FULL, Replay, baseline_of, call_starts, replay
from .finder import Failed, Skipped, Source

PERCENTILES = (10, 50, 90)
WORST = 10


# What a corpus is evaluated under unless the person names policies: the playground's own, the ones a
# person tunes, and the run as it ran where a log shows the agent compacting. The agents' and providers'
# own (``THEIRS``, fixed parameters from their sources) are one ``--policy`` away, or all with ``all``:
# over a corpus they triple the work and a sweep cannot move them.
DEFAULT_POLICIES: tuple[str, ...] = (*OURS, *LOGGED)
ALL = "all"  # as a policy's name: every policy


def named_policies(names: Iterable[str] | None) -> tuple[str, ...]:
    """The policies a person named, in order, once each (``all`` stands for every one), or the
    default when they named none."""
    chosen = [name for option in names or () for name in (POLICIES if option == ALL else (option,))]
    return tuple(dict.fromkeys(chosen)) or DEFAULT_POLICIES


@dataclass(frozen=True)
class Setup:
    """Everything a worker needs to evaluate a run, as plain values: the policies, every
    policy's settings (``policy``, the one value the page and the command line build), and the
    rules as a preset's name or their JSON — ``suggested`` is built per run, for that run's tools."""

    policies: tuple[str, ...] = DEFAULT_POLICIES
    preset: str | None = None
    rules: Any = None  # rules JSON (a --rules file) or Rules (the page's, never pickled); None: the book's
    policy: PolicySettings = field(default_factory=PolicySettings)  # its rules: None (they are ``rules``)
    model: str | None = None
    cache: str | None = None
    mode: str = "stored"
    max_input_mb: int = limits.DEFAULT_MAX_INPUT_MB
    prices: Any = None  # a person's own prices JSON (``--prices``), over the catalogue; None: the catalogue
    baseline: str = "auto"  # what a run without a policy sends (``replay.baseline_of``)
    summarizer_model: str | None = None  # whose prices summaries are billed at; None: each run's own model's

    def table(self) -> PriceTable:
        """Where this setup's prices come from: the person's own rows first, then the catalogue."""
        return read_prices() if self.prices is None else load_prices(self.prices, "--prices")

    def summarizer(self, table: PriceTable) -> Price | None:
        """The prices summaries are billed at: ``summarizer_model``'s row of ``table`` (the one the run
        is priced from, read once), else (None) each run's own model's."""
        return table.get(self.summarizer_model) if self.summarizer_model else None

    def options(self, conversation: Conversation, context_window: int | None = None) -> PolicySettings:
        """Every policy's settings for this run, its rules made (each policy takes what it has), with
        the run's model's ``context_window`` when given (an agent's own trigger is a share of it)."""
        from ..rules.ruleset import Rules, book_rules, load_rules
        from ..tune.rulesets import ruleset

        if self.preset:
            rules = ruleset(self.preset, conversation)
        elif self.rules is None or isinstance(self.rules, Rules):
            rules = self.rules or self.policy.rules or book_rules()
        else:
            rules = load_rules(self.rules)
        window = self.policy.context_window if context_window is None else context_window
        return replace(self.policy, rules=rules, label=self.preset or self.policy.label, context_window=window)


@dataclass(frozen=True)
class PolicyOnRun:
    """One policy over one run: ``row`` is compare's row; the rest is what the corpus adds."""

    row: Row
    cost_none: float  # the same run with no policy of ours (as it ran, where the agent cut): what saving is from
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
    policies: tuple[PolicyOnRun, ...]
    baseline: str = FULL  # what ``cost_none`` replays: the full history, or the run as it ran (``replay.baseline_of``)
    priced_as: str | None = None  # the catalogue's id of the price used; None: unknown (its costs are null)


Outcome = RunResult | Failed | Skipped


def hidden_used_calls(run: Replay) -> int | None:
    """Calls whose reply used a piece of an earlier item their request had hidden
    (``run.hidden``, as replay and compare report it)."""
    return calls_with(run.hidden_used)


@dataclass(frozen=True)
class Baseline:
    """What every policy's row of one run is measured against, read once per run (not once
    per policy): the error results among the items before the run's last call, and the call ids
    those items answer."""

    errors: tuple[ToolResult, ...]
    answered: frozenset[str]

    @classmethod
    def of(cls, conversation: Conversation) -> Baseline:
        starts = call_starts(conversation.items)
        items = conversation.items[:starts[-1]] if starts else ()
        errors = tuple(item for item in items if isinstance(item, ToolResult) and error_detail(item))
        return cls(errors, frozenset(items[call].call_id for call in pairs(items)))


def _pairs_intact(baseline: Baseline, sent: Sequence[Item]) -> bool:
    """No result without its call, and no call the run answered without its result, in what was sent."""
    sent = tuple(sent)
    answered = pairs(sent)
    if sum(isinstance(item, ToolResult) for item in sent) != len(answered):
        return False
    present = {item.call_id for item in sent if isinstance(item, ToolCall)}
    return {sent[call].call_id for call in answered} >= baseline.answered & present


def policy_on_run(run: Replay, baseline: Baseline, row: str) -> PolicyOnRun:
    """compare's row for ``run`` (``row``: the baseline's policy) and what the corpus view adds to it."""
    kept = {id(item) for item in run.final.items}
    return PolicyOnRun(row_of(run, row), run.totals.cost_without, len(baseline.errors),
                       sum(id(item) in kept for item in baseline.errors),
                       _pairs_intact(baseline, run.final.items), hidden_used_calls(run))


def _conversation(data: Any) -> tuple[Conversation, str | None]:
    """The run in ``data`` and the model it names: an API request or agent log, or a preset file
    (its ``conversation``, priced as its ``model``)."""
    if isinstance(data, dict) and "conversation" in data and "title" in data:
        from ..workbench.presets import parse_preset

        preset = parse_preset(data, "preset")
        return preset.conversation, preset.model
    return formats.read(data), None


def evaluate_run(conversation: Conversation, setup: Setup, source: str, model: str | None = None,
                 meter: Meter | None = None) -> RunResult:
    """Every policy of ``setup`` replayed over one run, with one meter for all of them."""
    model = setup.model or model or counted_as(conversation, read_prices())
    meter = meter or Engine().meter(model)
    table = setup.table()
    price = table.dated(conversation.started).get(model, conversation.format)
    conversation = infer(conversation, price)  # the agent's own cuts its bills show: the baseline is the run as it ran
    cache = setup.cache or price.cache
    check_cache(cache, price.cache, price.model, where="cache")
    options = setup.options(conversation, price.context_window)
    # what the agent wrote and what the run holds are the same under every policy: read them once
    spans, baseline = SpanIndex.of(conversation), Baseline.of(conversation)
    row, summarizer = baseline_row(conversation, setup.baseline), setup.summarizer(table)
    results = tuple(policy_on_run(replay(conversation, make(name, options), meter, price, mode=setup.mode,
                                         cache=cache, spans=spans, summarizer=summarizer, baseline=setup.baseline),
                                  baseline, row)
                    for name in offered(setup.policies, conversation))
    return RunResult(source, conversation.source or conversation.format, price.model,
                     len(call_starts(conversation.items)), results, baseline_of(conversation, setup.baseline),
                     price.priced_as)


def load(source: Source, setup: Setup) -> tuple[Conversation, str | None] | Failed | Skipped:
    """One run read and recognised, with the model its file names (a preset's); what is not a run
    is Skipped, what cannot be read is Failed with its located message."""
    try:  # what the page's upload and the command line read, read the same way (``formats``)
        files = source.folder_files(setup.max_input_mb) if source.folder else None
        if source.folder and files is None:  # a task folder on disk
            conversation, model = formats.read_path(source.path, limit_mb=setup.max_input_mb), None
        elif files is not None:  # a task folder inside an archive
            conversation, model = formats.read_files(files, limit_mb=setup.max_input_mb), None
        else:
            data = formats.parse_input(source.read(setup.max_input_mb), limit_mb=setup.max_input_mb)
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
    """One run read, recognised and evaluated under every policy of ``setup``."""
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


@dataclass
class _Tally:
    """One policy's figures over the runs added so far: sums, and per run only its cost, cost
    without a policy and saving (for medians, percentiles and exact sums)."""

    runs: int = 0
    tokens_billed: int = 0
    cached_tokens: int = 0
    tokens_lost: int = 0
    tokens_retrievable: int = 0
    hidden_used_calls: int | None = 0  # None once any run's is unknown
    errors_kept: int = 0
    error_results: int = 0
    pairs_intact: int = 0
    unpriced: int = 0  # runs whose model has no known price: their costs are left out of the figures below
    costs: list[float] = field(default_factory=list)  # per priced run
    nones: list[float] = field(default_factory=list)
    worst: list[tuple[float, int, str]] = field(default_factory=list)  # (saving, run number, source), the lowest
    most_hidden: list[tuple[int, int, str]] = field(default_factory=list)  # (-hidden_used_calls, run number, source)

    def add(self, source: str, result: PolicyOnRun) -> None:
        row = result.row
        number = self.runs
        self.runs += 1
        self.tokens_billed += row.tokens_billed
        self.cached_tokens += row.cached_tokens
        self.tokens_lost += row.tokens_lost
        self.tokens_retrievable += row.tokens_retrievable
        hidden = result.hidden_used_calls
        self.hidden_used_calls = None if hidden is None or self.hidden_used_calls is None else (
            self.hidden_used_calls + hidden)
        self.errors_kept += result.errors_kept
        self.error_results += result.error_results
        self.pairs_intact += result.pairs_intact
        if math.isnan(row.cost) or math.isnan(result.cost_none):  # an unknown price: counted, never guessed
            self.unpriced += 1
        else:
            self.costs.append(row.cost)
            self.nones.append(result.cost_none)
            self.worst = sorted([*self.worst, (result.saving, number, source)])[:WORST]
        if hidden is not None:
            self.most_hidden = sorted([*self.most_hidden, (-hidden, number, source)])[:WORST]

    def to_json(self, name: str) -> dict[str, Any]:
        costs = self.costs
        savings = [none - cost for cost, none in zip(costs, self.nones, strict=True)]
        known = self.hidden_used_calls is not None
        return {
            "strategy": name, "runs": self.runs, "tokens_billed": self.tokens_billed,
            "cached_tokens": self.cached_tokens,
            # a sum with an unknown part is unknown; medians and percentiles are over the priced runs
            "cost": None if self.unpriced else round(sum(costs), 8),
            "cost_none": None if self.unpriced else round(sum(self.nones), 8), "runs_unpriced": self.unpriced,
            "tokens_lost": self.tokens_lost, "tokens_retrievable": self.tokens_retrievable,
            "hidden_used_calls": self.hidden_used_calls, "errors_kept": self.errors_kept,
            "error_results": self.error_results, "runs_pairs_intact": self.pairs_intact,
            "median_cost": round(statistics.median(costs), 8) if costs else 0.0,
            "median_saving": round(statistics.median(savings), 8) if savings else 0.0,
            "cost_percentiles": {k: round(v, 8) for k, v in _percentiles(costs).items()},
            "saving_percentiles": {k: round(v, 8) for k, v in _percentiles(savings).items()},
            "share_costs_more_than_none": sum(saving < -1e-12 for saving in savings) / len(costs) if costs else 0.0,
            "worst_by_saving": [{"source": source, "saving": round(saving, 8)} for saving, _, source in self.worst],
            "worst_by_hidden_used": [{"source": source, "hidden_used_calls": -hidden}
                                     for hidden, _, source in self.most_hidden] if known else [],
        }


class Aggregate:
    """The whole corpus's figures, fed one run at a time (in corpus order): what it keeps per run
    is a few floats, never the run, so a corpus of any size can stream through it."""

    def __init__(self) -> None:
        self.runs = 0
        self._tallies: dict[str, _Tally] = {}

    def add(self, run: RunResult) -> None:
        self.runs += 1
        for result in run.policies:
            self._tallies.setdefault(result.row.policy, _Tally()).add(run.source, result)

    def to_json(self, failed: int = 0, skipped: int = 0) -> dict[str, Any]:
        """Totals, medians and percentiles per policy, the ten runs that save least (most negative
        first), the share of runs where the policy costs more than none."""
        return {"runs": self.runs, "failed": failed, "skipped": skipped,
                "strategies": [tally.to_json(name) for name, tally in self._tallies.items()]}


def aggregate(runs: Iterable[RunResult], failed: int = 0, skipped: int = 0) -> dict[str, Any]:
    """``Aggregate`` over ``runs`` (in corpus order)."""
    total = Aggregate()
    for run in runs:
        total.add(run)
    return total.to_json(failed, skipped)


def run_to_json(run: RunResult) -> dict[str, Any]:
    """One run as ``evaluate --json`` prints it: compare's numbers for each policy, and the
    corpus's additions (saving, errors kept, pairs intact)."""
    policies = []
    for result in run.policies:
        row = rows_to_json([result.row])[0]
        policies.append({key: row[key] for key in ("strategy", "tokens_billed", "cached_tokens", "cost",
                                                   "tokens_lost", "tokens_retrievable")}
                        | {"hidden_used_calls": result.hidden_used_calls, "cost_none": rounded(result.cost_none),
                           "saving": rounded(result.saving), "errors_kept": result.errors_kept,
                           "error_results": result.error_results, "pairs_intact": result.pairs_intact})
    return {"source": run.source, "format": run.format, "model": run.model, "priced_as": run.priced_as,
            "calls": run.calls, "baseline": run.baseline, "strategies": policies}


def partition(outcomes: Iterable[tuple[int, Any]]) -> tuple[tuple[Any, ...], tuple[Failed, ...], tuple[Skipped, ...]]:
    """Numbered outcomes (in any order) as the results, the failures and the skips, each in corpus order."""
    ordered = [outcome for _, outcome in sorted(outcomes, key=lambda pair: pair[0])]
    return (tuple(o for o in ordered if not isinstance(o, Failed | Skipped)),
            tuple(o for o in ordered if isinstance(o, Failed)), tuple(o for o in ordered if isinstance(o, Skipped)))


def problems_to_json(failed: Iterable[Failed], skipped: Iterable[Skipped]) -> dict[str, Any]:
    return {"failed": [{"source": f.source, "message": f.message} for f in failed],
            "skipped": [{"source": s.source, "reason": s.reason} for s in skipped]}


def csv_writer(stream: Any, first: dict[str, Any]) -> csv.DictWriter:
    """A CSV writer for rows shaped like ``first``, its header written."""
    writer = csv.DictWriter(stream, fieldnames=list(first), lineterminator="\n")
    writer.writeheader()
    return writer


def run_rows(run: RunResult) -> list[dict[str, Any]]:
    """One run as flat rows, one per policy (CSV, Parquet, the page's download)."""
    return [{"source": run.source, "format": run.format, "model": run.model, "priced_as": run.priced_as,
             "calls": run.calls, "baseline": run.baseline} | policy for policy in run_to_json(run)["strategies"]]


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
        csv_writer(out, rows[0] if rows else {"source": ""}).writerows(rows)
        return out.getvalue()

    def table(self) -> list[dict[str, Any]]:
        """One flat row per run and policy: the CSV, the Parquet file and the page's table."""
        return [row for run in self.runs for row in run_rows(run)]
