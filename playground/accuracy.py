"""How close our meters come to what the API billed, on recorded requests.

Each fixture case is a request body exactly as sent (``other_request_params`` merged in) with
the ``prompt_tokens`` the API returned. Core cases are the ones our accounting claims to cover:
no ``response_format`` or ``web_search_options`` (which add tokens we do not model), not
``o1-mini``.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import formats
from .tokens import count

FIXTURE_FILES = ("openai_cookbook_cases.json", "recorded_api_cases.json", "issue_reported_cases.json")
_REQUEST_KEYS = ("model", "messages", "tools", "tool_choice")
_NOT_MODELLED = ("response_format", "web_search_options")


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


def measure(folder: Path) -> list[Case]:
    cases = []
    for name in FIXTURE_FILES:
        path = folder / name
        if not path.exists():
            continue
        for number, raw in enumerate(json.loads(path.read_text())):
            body = request_body(raw)
            counted = count(formats.read(body, "chat"))
            cases.append(Case(name, number, body["model"], raw["api_prompt_tokens"], counted.total, counted.exact,
                              is_core(body), raw.get("note")))
    return cases


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


def render(cases: list[Case]) -> str:
    """A plain-text report: per file, per model, the core set, and every case off by more than 2."""
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
    return "\n".join(lines).lstrip("\n")
