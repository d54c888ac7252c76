"""Guided lessons: content in ``presets/lessons/*.md``, read and checked here.

A lesson asks the learner to do one thing on one preset and checks, against what the page shows,
that it happened. Everything a lesson says and checks is data (TOML front matter between ``+++``
lines, then the Markdown text), so a lesson is written without touching code; this module only
loads it, says precisely where a file is wrong, and evaluates its small declarative condition.
The vocabulary is documented in ``presets/lessons/README.md``.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..compaction import Settings
from ..conversation import Conversation, ToolResult
from ..engine import Optimized
from ..errors import InputError
from ..meter.tokens import Meter
from ..policies import RulesPolicy
from ..rules.ruleset import Rules, book_rules, load_rules
from ..run.hidden import calls_with
from ..run.prices import read_prices
from ..run.replay import replay
from ..summarize.history import DEFAULT_KEEP_STEPS, SummarySettings
from ..tune.checked import checked_rules
from ..tune.rulesets import aggressive

LESSONS_DIR = Path(__file__).resolve().parents[2] / "presets" / "lessons"
FENCE = "+++"

RULE_SETS = ("book", "none", "preset", "suggested", "aggressive")  # named rule sets a change may ask for

# Conditions, each with the type of its value. "…_at_least" holds when that number on the page is at
# least the value; "skipped_for" when some item was left alone for that reason; the rest compare equal.
_EQUAL = ("stage", "summarized", "edited_calls", "edited_errors", "compact_errors", "threshold_below_tokens")
_AT_LEAST = ("threshold", "keep_recent", "edits", "rule_count", "call_rule_count", "result_rule_count",
             "cached_prefix_percent")
# "…_at_most" holds when that figure of the whole run, replayed under the page's rules, is at most the value
_AT_MOST = ("hidden_used_calls",)
CONDITIONS = ({name: bool if name != "stage" else str for name in _EQUAL}
              | {f"{name}_at_least": int for name in _AT_LEAST} | {"skipped_for": str}
              | {f"{name}_at_most": int for name in _AT_MOST})
STAGES = ("below_threshold", "compacted", "still_over")
# State changes a lesson's start and *Show me* may make, and the type of each value.
CHANGES = {"threshold": int, "keep_recent": int, "compact_errors": bool, "summarize": bool, "rules": (str, dict)}


@dataclass(frozen=True)
class Lesson:
    key: str  # the file's stem, e.g. "01-threshold"
    title: str
    preset: str
    task: str  # the one thing to do, in one sentence
    body: str  # Markdown
    done: Mapping[str, Any]  # condition: every entry must hold
    show_me: Mapping[str, Any]  # the state changes that do the task
    start: Mapping[str, Any]  # state changes applied after loading the preset
    minutes: int = 2


def _typed(value: Any, kind: type | tuple[type, ...], where: str) -> Any:
    """``value``, if it is of ``kind``. TOML's true/false are not numbers here, and numbers (token
    counts, settings) are 0 or more."""
    kinds = kind if isinstance(kind, tuple) else (kind,)
    is_bool = isinstance(value, bool)
    fits = isinstance(value, kinds) and (bool in kinds or not is_bool)
    negative = isinstance(value, int) and not is_bool and value < 0
    if not fits or negative:
        names = " or ".join(k.__name__ for k in kinds)
        raise InputError(f"expected {names}" + (", 0 or more" if int in kinds else ""), where=where, value=value)
    return value


def _changes(data: Any, where: str) -> dict[str, Any]:
    """A table of state changes, each known and of the right type; rule tables are checked too."""
    if not isinstance(data, dict):
        raise InputError("expected a table of settings", where=where, value=data)
    for name, value in data.items():
        if name not in CHANGES:
            raise InputError(f"unknown setting; known: {', '.join(CHANGES)}", where=f"{where}.{name}", value=name)
        _typed(value, CHANGES[name], f"{where}.{name}")
        if name == "rules" and isinstance(value, str) and value not in RULE_SETS:
            raise InputError(f"unknown rule set; known: {', '.join(RULE_SETS)}", where=f"{where}.rules", value=value)
        if name == "rules" and isinstance(value, dict):
            try:
                load_rules(value)
            except InputError as exc:
                raise exc.within(f"{where}.rules") from None
    return dict(data)


def _condition(data: Any, where: str) -> dict[str, Any]:
    if not isinstance(data, dict) or not data:
        raise InputError("expected a table with at least one condition", where=where, value=data)
    for name, value in data.items():
        if name not in CONDITIONS:
            raise InputError(f"unknown condition; known: {', '.join(CONDITIONS)}", where=f"{where}.{name}",
                             value=name)
        _typed(value, CONDITIONS[name], f"{where}.{name}")
        if name == "stage" and value not in STAGES:
            raise InputError(f"unknown stage; known: {', '.join(STAGES)}", where=f"{where}.stage", value=value)
    return dict(data)


def _text(data: Mapping[str, Any], name: str, where: str) -> str:
    value = data.get(name)
    if not isinstance(value, str) or not value.strip():
        raise InputError("expected a non-empty string", where=f"{where}.{name}", value=value)
    return value.strip()


def parse_lesson(text: str, key: str) -> Lesson:
    """A lesson file's text: ``+++``, TOML front matter, ``+++``, then the Markdown body."""
    lines = text.split("\n")
    if lines[0].strip() != FENCE or FENCE not in (line.strip() for line in lines[1:]):
        raise InputError(f"a lesson starts with a line '{FENCE}', TOML front matter, and a closing '{FENCE}'",
                         where=f"{key}, line 1")
    close = next(i for i, line in enumerate(lines[1:], 1) if line.strip() == FENCE)
    try:
        data = tomllib.loads("\n".join(lines[1:close]))
    except tomllib.TOMLDecodeError as exc:  # its message names the line within the front matter
        raise InputError(f"front matter is not valid TOML: {exc} (line 1 is the file's line 2)", where=key) from None
    known = {"title", "preset", "task", "minutes", "start", "done", "show_me"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise InputError(f"unknown key; known: {', '.join(sorted(known))}", where=f"{key}.{unknown[0]}",
                         value=unknown[0])
    body = "\n".join(lines[close + 1:]).strip()
    if not body:
        raise InputError("the lesson has no text after its front matter", where=key)
    return Lesson(key=key, title=_text(data, "title", key), preset=_text(data, "preset", key),
                  task=_text(data, "task", key), body=body, done=_condition(data.get("done"), f"{key}.done"),
                  show_me=_changes(data.get("show_me"), f"{key}.show_me"),
                  start=_changes(data.get("start", {}), f"{key}.start"),
                  minutes=_typed(data.get("minutes", 2), int, f"{key}.minutes"))


def load_lessons(folder: Path = LESSONS_DIR, presets: set[str] | None = None) -> list[Lesson]:
    """Every lesson in ``folder`` (files named ``NN-….md``), in order; with ``presets``, each
    lesson's preset must be one of them."""
    lessons = []
    for path in sorted(folder.glob("[0-9]*.md")):
        lesson = parse_lesson(path.read_text(encoding="utf-8"), path.stem)
        if presets is not None and lesson.preset not in presets:
            raise InputError(f"no such preset; known: {', '.join(sorted(presets))}", where=f"{path.name}: preset",
                             value=lesson.preset)
        lessons.append(lesson)
    return lessons


def observe(conversation: Conversation, rules: Rules, settings: Settings, optimized: Optimized) -> dict[str, Any]:
    """The page's state as lessons read it: the settings in force and what the engine made of them."""
    report = optimized.compaction.report
    items = conversation.items
    done = optimized.summarization
    call_rows, result_rows = len(rules.tool_calls), len(rules.tool_results)
    return {
        "threshold": settings.threshold,
        "keep_recent": settings.keep_recent,
        "compact_errors": settings.compact_errors,
        "tokens_before": report.tokens_before,
        "threshold_below_tokens": settings.threshold <= report.tokens_before,
        "stage": report.stage,
        "edits": len(report.edits),
        "edited_calls": any(edit.kind == "call" for edit in report.edits),
        "edited_errors": any(isinstance(items[edit.position], ToolResult) and items[edit.position].is_error
                             for edit in report.edits),
        "skipped_for": frozenset(skip.reason for skip in report.skipped),
        "rule_count": call_rows + result_rows,
        "call_rule_count": call_rows,
        "result_rule_count": result_rows,
        "summarized": done is not None and done.report.status == "summarized",
        "cached_prefix_percent": report.cached_prefix_tokens * 100 // max(report.tokens_before, 1),
    }


def needs_run(lesson: Lesson) -> bool:
    """Whether the lesson's condition reads the whole run (``observe_run``), not only the request."""
    return any(name.endswith("_at_most") for name in lesson.done)


def observe_run(conversation: Conversation, rules: Rules, settings: Settings, summary: SummarySettings | None,
                meter: Meter) -> dict[str, Any]:
    """What a lesson reads from the whole run replayed under the page's rules, as the Run view's
    ``rules`` policy replays it (stored mode): the calls whose reply used something their
    request had hidden (``hidden``). No prompt cache: it changes prices, not what was hidden."""
    policy = RulesPolicy(rules, settings.threshold, settings.keep_recent, summarize=summary is not None,
                         keep_steps=summary.keep_steps if summary else DEFAULT_KEEP_STEPS,
                         limit=summary.limit if summary else None)
    run = replay(conversation, policy, meter, read_prices().get(conversation.model), cache="none")
    return {"hidden_used_calls": calls_with(run.hidden_used)}


def check(lesson: Lesson, state: Mapping[str, Any]) -> bool:
    """Whether every entry of the lesson's condition holds in ``state`` (see ``observe``, and
    ``observe_run`` for a lesson that ``needs_run``)."""
    for name, wanted in lesson.done.items():
        if name == "skipped_for":
            ok = wanted in state["skipped_for"]
        elif name.endswith("_at_most"):
            ok = state[name.removesuffix("_at_most")] <= wanted
        elif name.endswith("_at_least"):
            ok = state[name.removesuffix("_at_least")] >= wanted
        else:
            ok = state[name] == wanted
        if not ok:
            return False
    return True


def show_me(lesson: Lesson) -> dict[str, Any]:
    """The state changes that do the lesson's task for the learner."""
    return dict(lesson.show_me)


def resolve_rules(value: str | Mapping[str, Any], conversation: Conversation, preset_rules: Rules,
                  meter: Meter) -> Rules:
    """The rules a lesson's ``rules`` change names: a rules table, or one of ``RULE_SETS``."""
    if isinstance(value, Mapping):
        return load_rules(value)
    if value == "book":
        return book_rules()
    if value == "preset":
        return preset_rules
    if value == "suggested":
        return checked_rules(conversation, meter).rules()
    if value == "aggressive":
        return aggressive(conversation)
    return Rules()


@dataclass(frozen=True)
class LessonSetup:
    """The part of the page a lesson may change: its rules, its settings, summarization on or off."""

    rules: Rules
    settings: Settings
    summarize: bool


def applied(changes: Mapping[str, Any], setup: LessonSetup, conversation: Conversation, preset_rules: Rules,
            meter: Meter) -> LessonSetup:
    """``setup`` with a lesson's start or *Show me* changes made."""
    settings = replace(setup.settings, **{name: changes[name] for name in ("threshold", "keep_recent", "compact_errors")
                                          if name in changes})
    rules = (resolve_rules(changes["rules"], conversation, preset_rules, meter) if "rules" in changes
             else setup.rules)
    return LessonSetup(rules, settings, changes.get("summarize", setup.summarize))
