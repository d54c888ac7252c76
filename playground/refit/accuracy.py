"""How close our meters come to what the API billed, on recorded requests — and how close they
should come on a request we have not seen.

Chat Completions: each fixture case is a request body exactly as sent (``other_request_params``
merged in) with the ``prompt_tokens`` the API returned. Core cases are the ones our accounting
claims to cover: no ``response_format`` or ``web_search_options`` (which add tokens we do not
model), not ``o1-mini``.

Anthropic Messages and OpenAI Responses: real requests with the input tokens billed. Cases
tagged ``not_body_computable`` (server tools, files by id…) are measured but listed apart.

Every fitted constant is also checked leave-one-out (``fitting.leave_one_out``): each case is
predicted with the constants refitted on all the other cases, the error to expect on a new request.
"""

from __future__ import annotations

import dataclasses
import json
import statistics
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import formats
from ..errors import InputError
from ..meter import accounting, claude, tokens
from ..meter.tokens import count
from .fitting import Sample, fit_constants, leave_one_out

FIXTURE_FILES = ("openai_cookbook_cases.json", "recorded_api_cases.json", "issue_reported_cases.json")
PROVIDER_FILES = {"anthropic": "anthropic_recorded_cases.json", "responses": "responses_recorded_cases.json"}
_REQUEST_KEYS = ("model", "messages", "tools", "tool_choice")
_NOT_MODELLED = ("response_format", "web_search_options")
# Recorded bookkeeping, not request keys.
_NOT_REQUEST = ("api_input_tokens", "api_usage", "response_model", "categories", "source", "note", "date",
                "repository")
# Real recorded requests kept with the code (tests/recorded-bills), read with the shared ones: what only they hold
# (custom tools, reasoning items sent back, bills of a date) is fitted on them.
REPOSITORY_FILES = {"responses": Path(__file__).resolve().parents[2] / "tests" / "recorded-bills" / "responses.json"}


@dataclass(frozen=True)
class Case:
    file: str
    number: int
    model: str
    billed: int
    counted: int
    exact_flag: bool
    core: bool
    note: str | None
    loo: int | None = None  # predicted with the fitted constants refitted without this case

    @property
    def error(self) -> int:
        return self.counted - self.billed


def request_body(case: dict[str, Any]) -> dict[str, Any]:
    """The whole request as recorded: its messages, tools and every other parameter."""
    body = {key: case[key] for key in _REQUEST_KEYS if key in case}
    body.update(case.get("other_request_params") or {})
    return body


def is_core(body: dict[str, Any]) -> bool:
    return not any(key in body for key in _NOT_MODELLED) and body.get("model") != "o1-mini"


def _samples(conversations: list[Any], billed: list[float], features: Callable[[Any], Mapping[str, float]],
             shipped: Mapping[str, float], totals: list[int]) -> list[Sample]:
    """Samples whose fixed part is the meter's total less its fitted part at shipped values."""
    samples = []
    for conversation, paid, total in zip(conversations, billed, totals, strict=True):
        found = features(conversation)
        fitted = sum(shipped.get(name, 0.0) * value for name, value in found.items())
        samples.append(Sample(total - fitted, found, paid))
    return samples


def measure(folder: Path) -> list[Case]:
    cases: list[Case] = []
    conversations: list[Any] = []
    for name in FIXTURE_FILES:
        path = folder / name
        if not path.exists():
            continue
        for number, raw in enumerate(json.loads(path.read_text())):
            body = request_body(raw)
            conversation = formats.read(body, "chat")
            counted = count(conversation)
            conversations.append(conversation)
            cases.append(Case(name, number, body["model"], raw["api_prompt_tokens"], counted.total, counted.exact,
                              is_core(body), raw.get("note")))
    meters: dict[str, tokens.Meter] = {}

    def features(conversation: Any) -> Mapping[str, float]:
        model = conversation.model or ""
        return meters.setdefault(model, tokens.Meter(model)).chat_features(conversation)

    # Only core cases fit the constants (the others hold what we do not model), as they were fitted.
    core = [i for i, case in enumerate(cases) if case.core and case.file == "recorded_api_cases.json"]
    samples = _samples([conversations[i] for i in core], [cases[i].billed for i in core], features,
                       accounting.CHAT_FITTED, [cases[i].counted for i in core])
    predicted = leave_one_out(samples, accounting.CHAT_FITTED, relative=False, integers=True)
    loo = dict(zip(core, predicted, strict=True))
    return [Case(**{**case.__dict__, "loo": round(loo[i]) if i in loo else None}) for i, case in enumerate(cases)]


@dataclass(frozen=True)
class ProviderCase:
    """One recorded Anthropic or Responses request: our count, the bill, the leave-one-out
    prediction, and every reason our count is an estimate."""

    format: str
    number: int
    model: str
    billed: int
    counted: int
    loo: int | None
    computable: bool
    encrypted: bool
    estimate_because: tuple[str, ...] = field(default=())
    repository: bool = False  # one of the repository's own recorded cases (tests/recorded-bills), not the shared set
    kind: str = ""  # what a repository case was kept for (its first category)

    @property
    def error(self) -> float:
        """Relative error of our count."""
        return (self.counted - self.billed) / self.billed

    @property
    def loo_error(self) -> float | None:
        return None if self.loo is None else (self.loo - self.billed) / self.billed


@dataclass(frozen=True)
class ProviderMeasure:
    cases: tuple[ProviderCase, ...]
    fitted: Mapping[str, float]  # constants fitted on every computable case
    shipped: Mapping[str, float]
    samples: tuple[Sample, ...]  # the computable cases as the fit sees them


def _provider_body(raw: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in raw.items() if key not in _NOT_REQUEST}


def measure_provider(folder: Path, format: str) -> ProviderMeasure | None:
    """Count every recorded request of ``format`` and predict the computable ones leave-one-out."""
    path = folder / PROVIDER_FILES[format]
    if not path.exists():
        return None
    shipped = claude.CONSTANTS if format == "anthropic" else accounting.RESPONSES
    meters: dict[str, tokens.Meter] = {}
    rows: list[tuple[int, dict[str, Any], Any, tokens.TokenCount | None]] = []
    for number, raw in enumerate(_recorded(path, format)):
        try:
            conversation = formats.read(_provider_body(raw), format)
        except InputError as error:  # a request our reader refuses: listed with its reason
            rows.append((number, raw, str(error), None))
            continue
        if raw.get("date"):  # the day it was billed: some bills changed over time
            conversation = dataclasses.replace(conversation, started=raw["date"])
        meter = meters.setdefault(raw["model"], tokens.Meter(raw["model"]))
        rows.append((number, raw, conversation, meter.count(conversation)))

    def features(conversation: Any) -> Mapping[str, float]:
        meter = meters[conversation.model]
        return meter.claude_features(conversation) if format == "anthropic" else meter.responses_features(conversation)

    fittable = [row for row in rows if row[3] is not None and _computable(row[1])]
    samples = _samples([row[2] for row in fittable], [row[1]["api_input_tokens"] for row in fittable], features,
                       shipped, [row[3].total for row in fittable])
    prior = {name: value for name, value in shipped.items() if any(name in s.features for s in samples)}
    loo = dict(zip((row[0] for row in fittable), leave_one_out(samples, prior), strict=True))
    cases = tuple(ProviderCase(format, number, raw["model"], raw["api_input_tokens"],
                               result.total if result else 0, round(loo[number]) if number in loo else None,
                               _computable(raw), _encrypted(raw),
                               result.notes if result else (f"not readable: {conversation}",),
                               bool(raw.get("repository")), (raw.get("categories") or [""])[0])
                  for number, raw, conversation, result in rows)
    return ProviderMeasure(cases, fit_constants(samples, prior), shipped, tuple(samples))


def _recorded(path: Path, format: str) -> list[dict[str, Any]]:
    """The shared cases, then the repository's own (each marked ``repository``), in that order."""
    cases = json.loads(path.read_text())
    extra = REPOSITORY_FILES.get(format)
    if extra is not None and extra.exists():
        cases += [{**raw, "repository": True} for raw in json.loads(extra.read_text())]
    return cases


def _computable(raw: dict[str, Any]) -> bool:
    return "not_body_computable" not in raw.get("categories", ())


def _encrypted(raw: dict[str, Any]) -> bool:
    return "encrypted_reasoning" in raw.get("categories", ())


@dataclass(frozen=True)
class Summary:
    label: str
    cases: int
    exact: int
    within_2: int
    worst: int
    worst_percent: float


def summarize(label: str, cases: list[Case]) -> Summary:
    worst = max(cases, key=lambda c: abs(c.error))
    return Summary(label, len(cases), sum(c.error == 0 for c in cases), sum(abs(c.error) <= 2 for c in cases),
                   worst.error, max(abs(c.error) / c.billed * 100 for c in cases))


def by_model(cases: list[Case]) -> list[Summary]:
    groups: dict[str, list[Case]] = defaultdict(list)
    for case in cases:
        groups[case.model].append(case)
    return [summarize(model, group) for model, group in sorted(groups.items())]


def _percent(values: list[float]) -> str:
    if not values:
        return f"{'-':>8} {'-':>8}"
    absolute = [abs(v) * 100 for v in values]
    return f"{statistics.median(absolute):7.1f}% {max(absolute):7.1f}%"


def render_provider(measured: ProviderMeasure) -> list[str]:
    """Median and worst relative error, ours and leave-one-out, per group; the not computable
    cases apart; the constants as shipped beside a fresh fit on all cases."""
    cases = measured.cases
    title = {"anthropic": "Anthropic Messages", "responses": "OpenAI Responses"}[cases[0].format]
    lines = ["", f"{PROVIDER_FILES[cases[0].format]} ({title}): relative error |counted - billed| / billed",
             f"{'':32} {'cases':>5} {'median':>8} {'worst':>8} {'LOO med':>8} {'LOO worst':>9}"]
    own = [c for c in cases if c.repository]
    computable = [c for c in cases if c.computable and not c.repository]
    encrypted = [c for c in computable if c.encrypted]
    groups: list[tuple[str, list[ProviderCase]]] = [
        ("computable, no encrypted reasoning" if encrypted else "computable",
         [c for c in computable if not c.encrypted]),
        ("computable, encrypted reasoning", encrypted),
    ]
    models: dict[str, list[ProviderCase]] = defaultdict(list)
    for case in computable:
        if not case.encrypted:
            models[case.model].append(case)
    groups += [(f"  {model}", group) for model, group in sorted(models.items())]
    groups.append(("tests/recorded-bills", own))
    groups += [(f"  {kind}", [c for c in own if c.kind == kind]) for kind in sorted({c.kind for c in own})]
    for label, group in groups:
        if group:
            loo = [c.loo_error for c in group if c.loo_error is not None]
            lines.append(f"  {label:30} {len(group):5} {_percent([c.error for c in group])} {_percent(loo)}")
    if encrypted:
        said = sum(any("reasoning item" in note for note in c.estimate_because) for c in encrypted)
        lines.append(f"  encrypted reasoning cases whose estimate_because says so: {said}/{len(encrypted)}")
    unexplained = [c for c in cases if c.counted != c.billed and not c.estimate_because]
    lines.append(f"  cases off the bill with no reason in estimate_because: {len(unexplained)}")
    apart = [c for c in cases if not c.computable]
    if apart:
        lines += ["", f"  not_body_computable ({len(apart)}, listed apart: server tools, files by id…):"]
        lines += [f"    #{c.number} {c.model}: counted {c.counted}, billed {c.billed} ({c.error * 100:+.0f}%)"
                  for c in apart]
    lines += ["", "  constants: shipped | fitted now on all computable cases"]
    lines += [f"    {name:40} {measured.shipped[name]:9.3f} | {value:9.3f}" for name, value in measured.fitted.items()]
    return lines


def _chat_loo(cases: list[Case]) -> list[str]:
    scored = [c for c in cases if c.loo is not None]
    if not scored:
        return []
    off = [c.loo - c.billed for c in scored]
    within = sum(abs(e) <= 2 for e in off)
    worst = max(scored, key=lambda c: abs(c.loo - c.billed))
    return ["", "fitted Chat constants, leave-one-out (core recorded cases; each predicted with the constants "
            "refitted without it, rounded):",
            f"  {len(scored)} cases: exact {sum(e == 0 for e in off)}, within ±2 {within} "
            f"({within / len(scored) * 100:.1f}%), worst {worst.loo - worst.billed:+d} (#{worst.number} {worst.model})"]


def render(cases: list[Case], providers: list[ProviderMeasure] | None = None) -> str:
    """A plain-text report: per file, per model, the core set, and every case off by more than 2;
    then the leave-one-out check and the Anthropic and Responses tables."""
    lines = []
    header = f"{'':32} {'cases':>5} {'exact':>5} {'±2':>5} {'worst':>6} {'worst %':>7}"
    for name in FIXTURE_FILES:
        in_file = [c for c in cases if c.file == name]
        if not in_file:
            continue
        lines += ["", name, header]
        for summary in [summarize("all", in_file), summarize("core", [c for c in in_file if c.core]) if any(
                c.core for c in in_file) else None, *by_model(in_file)]:
            if summary:
                lines.append(f"  {summary.label:30} {summary.cases:5} {summary.exact:5} {summary.within_2:5} "
                             f"{summary.worst:6} {summary.worst_percent:6.1f}%")
    off = [c for c in cases if abs(c.error) > 2]
    if off:
        lines += ["", "off by more than 2 tokens:"]
        lines += [f"  {c.file} #{c.number} {c.model}: counted {c.counted}, billed {c.billed} ({c.error:+d})"
                  f"{'' if c.core else '  [not core]'}{'  note: ' + c.note if c.note else ''}" for c in off]
    lines += _chat_loo(cases)
    for measured in providers or []:
        lines += render_provider(measured)
    return "\n".join(lines).lstrip("\n")
