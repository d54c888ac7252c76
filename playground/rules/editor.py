"""The rule tables as a person edits them: rows in, rules out, and a live check of every row
against the current conversation (which tools it matches, which fields its calls lack, what is
unsafe, what cannot produce text).

Rows come from an editable table, so any cell may be empty or of the wrong type; a row that
cannot become a rule is reported and left out, the others still apply.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from ..conversation import Conversation, ToolCall, ToolResult
from ..errors import InputError
from ..words import plural
from .errorpatterns import ErrorPattern, ErrorPatterns, error_detail
from .ruleset import BUILTINS, FALLBACKS, Rules, Template, load_rules, rules_to_json, tool_matches

CALL_COLUMNS = ("enabled", "tool", "argument", "replacement", "min_tokens")
RESULT_COLUMNS = ("enabled", "tool", "template", "min_tokens")
TABLES = {"tool_calls": ("replacement", CALL_COLUMNS), "tool_results": ("template", RESULT_COLUMNS)}
# What a new call row holds before anything is typed (the table fills them in): the book's argument
# and replacement, for what a call wrote. A row holding only these is not yet a rule, not a wrong one.
NEW_CALL_ARGUMENT = "content"
NEW_CALL_REPLACEMENT = "[Content saved to file]"


@dataclass(frozen=True)
class RowCheck:
    table: str  # "tool_calls" or "tool_results"
    row: int
    level: str  # "ok", "warning", "error" or "empty"
    message: str
    matches: int = 0  # items this row decides (the first matching row wins)
    tools: tuple[str, ...] = ()  # the tools it decides them for


def _text(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return str(value).strip() if not isinstance(value, str) else value


def _clean(row: Mapping[str, Any], table: str) -> dict[str, Any]:
    """A table row as a rules-file row: blanks become defaults, numbers become ints."""
    text_key = TABLES[table][0]
    clean: dict[str, Any] = {"tool": _text(row.get("tool")).strip(), text_key: _text(row.get(text_key))}
    if table == "tool_calls":
        clean["argument"] = _text(row.get("argument")).strip() or NEW_CALL_ARGUMENT
    enabled = row.get("enabled")
    clean["enabled"] = True if enabled is None or (isinstance(enabled, float) and math.isnan(enabled)) else bool(
        enabled)
    minimum = row.get("min_tokens")
    if minimum is None or (isinstance(minimum, float) and math.isnan(minimum)):
        minimum = 0
    clean["min_tokens"] = int(minimum) if isinstance(minimum, int | float) and float(minimum).is_integer() else minimum
    return clean


def _untyped(row: Mapping[str, Any], table: str) -> bool:
    """A row with no tool whose text is empty or still what a new row is given: nothing typed yet
    (a new call row arrives with the book's replacement filled in, and was shown as an error)."""
    text = row[TABLES[table][0]].strip()
    return not text or (table == "tool_calls" and text == NEW_CALL_REPLACEMENT
                        and row["argument"] == NEW_CALL_ARGUMENT)


def _counts(conversation: Conversation, table: str) -> dict[str, int]:
    """How many calls (or results) each tool has in the conversation, in order of appearance."""
    kind = ToolCall if table == "tool_calls" else ToolResult
    counts: dict[str, int] = {}
    for item in conversation.items:
        if isinstance(item, kind):
            counts[item.name] = counts.get(item.name, 0) + 1
    return counts


def _names(tools: list[str], limit: int = 4) -> str:
    shown = ", ".join(tools[:limit])
    return shown if len(tools) <= limit else f"{shown} and {len(tools) - limit} more"


@dataclass
class _Claims:
    """Which row each tool goes to, as the engine picks (the first matching row wins; for call
    rules, the first per argument), filled row by row as the table is read."""

    counts: dict[str, dict[str, int]]
    taken: dict[tuple[str, str, str], int]  # (table, tool, argument) -> row that has it

    def claim(self, table: str, row: dict[str, Any], number: int) -> tuple[list[str], list[str]]:
        """The tools this row gets, and those it matches that an earlier row already has."""
        won, earlier = [], []
        for tool in self.counts[table]:
            if not tool_matches(row["tool"], tool):
                continue
            key = (table, tool, row.get("argument", ""))
            if key in self.taken:
                earlier.append(tool)
            else:
                self.taken[key] = number
                won.append(tool)
        return won, earlier


def _check(row: dict[str, Any], table: str, template: Template, conversation: Conversation, won: list[str],
           earlier: list[str], counts: dict[str, int]) -> RowCheck:
    """A valid row's fit with the conversation: the tools it matches, and fields or arguments
    their calls lack."""
    noun = "call" if table == "tool_calls" else "result"
    if not won:
        if earlier:
            message = f"every tool it matches ({_names(earlier)}) goes to an earlier row"
        else:
            message = f"matches no tool's {noun}s in this conversation"
        return RowCheck(table, 0, "warning", message, 0)
    matches = sum(counts[tool] for tool in won)
    wanted = set(won)
    calls = [item.parsed_arguments() or {} for item in conversation.items
             if isinstance(item, ToolCall) and item.name in wanted]
    problems = []
    if table == "tool_calls":
        lacking = sum(row["argument"] not in args for args in calls)
        if lacking:
            problems.append(f"no {row['argument']!r} argument in {lacking} of {plural(len(calls), 'call')}")
    if not any(literal.strip() for literal, _ in template.pieces):
        problems.append("the text is only {fields}: it is empty when their values are")
    for field in template.fields:
        if field in BUILTINS:
            continue
        lacking = sum(not any(k in args for k in FALLBACKS.get(field, (field,))) for args in calls)
        if lacking:
            problems.append(f"{{{field}}} is missing in {lacking} of {plural(len(calls), 'call')} (shown as 'unknown')")
    summary = f"{_names(won)} ({plural(matches, noun)})"
    if not row["enabled"]:
        return RowCheck(table, 0, "ok", f"disabled; would match {summary}", matches, tuple(won))
    if problems:
        return RowCheck(table, 0, "warning", f"matches {summary}; " + "; ".join(problems), matches, tuple(won))
    return RowCheck(table, 0, "ok", f"matches {summary}", matches, tuple(won))


def _refusal(exc: InputError, outcome: str = "row ignored") -> str:
    """An InputError as a row message: the cell it names, never a Python ``None``, and what
    became of the row (``outcome``)."""
    field = exc.where.rsplit(".", 1)[-1] if exc.where and "." in exc.where else None
    where = f"{field}: " if field else ""
    shown = exc.value not in (None, "") and not (isinstance(exc.value, str) and not exc.value.strip())
    return f"{where}{exc.message}{f' ({exc.value!r})' if shown else ''}: {outcome}"


def rules_from_tables(call_rows: Iterable[Mapping[str, Any]], result_rows: Iterable[Mapping[str, Any]],
                      conversation: Conversation, base: Rules | None = None) -> tuple[Rules, list[RowCheck]]:
    """Rules from the valid rows, and one check per row (errors name the cell). What the tables
    do not hold (error patterns, the value cap) comes from ``base`` (default: the defaults)."""
    valid: dict[str, list[dict[str, Any]]] = {"tool_calls": [], "tool_results": []}
    checks: list[RowCheck] = []
    seen: set[tuple[str, ...]] = set()
    claims = _Claims({table: _counts(conversation, table) for table in TABLES}, {})
    for table, rows in (("tool_calls", call_rows), ("tool_results", result_rows)):
        text_key = TABLES[table][0]
        for number, raw in enumerate(rows):
            row = _clean(raw, table)
            if not row["tool"] and _untyped(row, table):
                checks.append(RowCheck(table, number, "empty", "empty row: ignored"))
                continue
            identity = (table, row["tool"], row.get("argument", ""))
            if identity in seen:
                what = "tool pattern and argument" if table == "tool_calls" else "tool pattern"
                checks.append(RowCheck(table, number, "error", f"a second rule for the same {what}: row ignored"))
                continue
            try:
                load_rules({table: [row]})  # validates the row as a rules file would
            except InputError as exc:
                checks.append(RowCheck(table, number, "error", _refusal(exc)))
                continue
            seen.add(identity)
            valid[table].append(row)
            won, earlier = claims.claim(table, row, number)
            check = _check(row, table, Template.parse(row[text_key]), conversation, won, earlier,
                           claims.counts[table])
            checks.append(replace(check, row=number))
    rules = load_rules(valid)
    if base is not None:
        rules = replace(rules, error_patterns=base.error_patterns, value_limit=base.value_limit)
    return rules, checks


def edited_rows(base: list[dict[str, Any]], edits: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The rows an editable table shows: its unchanging ``base`` with the editor's recorded
    edits applied (``edited_rows`` by position, then ``deleted_rows``, then ``added_rows``)."""
    if not edits:
        return [dict(row) for row in base]
    rows = [dict(row) for row in base]
    for position, changes in (edits.get("edited_rows") or {}).items():
        if 0 <= int(position) < len(rows):
            rows[int(position)].update(changes)
    deleted = {int(position) for position in edits.get("deleted_rows") or []}
    rows = [row for position, row in enumerate(rows) if position not in deleted]
    rows += [dict(row) for row in edits.get("added_rows") or []]
    return rows


def tables_from_rules(rules: Rules) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Rows for the two tables, in the column order the editor shows."""
    data = rules_to_json(rules)
    return ([{key: row[key] for key in CALL_COLUMNS} for row in data["tool_calls"]],
            [{key: row[key] for key in RESULT_COLUMNS} for row in data["tool_results"]])


PATTERN_COLUMNS = ("name", "pattern")
KEPT = "the last good patterns still apply"


def error_patterns_from_rows(rows: Iterable[Mapping[str, Any]], conversation: Conversation,
                             last_good: ErrorPatterns) -> tuple[ErrorPatterns, list[RowCheck]]:
    """The error patterns the table holds, and one check per row: how many of this conversation's
    results each recognises (the first matching pattern names a result), or what is wrong with it.
    While any row is wrong, ``last_good`` stays in effect: a half-typed regex must not quietly
    stop an error from being recognised, which would let a rule replace it."""
    patterns: list[tuple[int, ErrorPattern]] = []
    checks: list[RowCheck] = []
    for number, row in enumerate(rows):
        name, pattern = _text(row.get("name")).strip(), _text(row.get("pattern"))
        if not name and not pattern.strip():
            checks.append(RowCheck("error_patterns", number, "empty", "empty row: ignored"))
            continue
        try:
            patterns.append((number, ErrorPattern.of(name, pattern, "error_patterns.row")))
        except InputError as exc:
            checks.append(RowCheck("error_patterns", number, "error", _refusal(exc, KEPT)))
    if any(check.level == "error" for check in checks):
        return last_good, checks
    found = ErrorPatterns(tuple(pattern for _, pattern in patterns))
    recognised: dict[str, int] = {}
    for item in conversation.items:
        if isinstance(item, ToolResult) and not item.is_error:
            detail = error_detail(item, found)
            if detail is not None:
                key = detail.removeprefix("matched: ")
                recognised[key] = recognised.get(key, 0) + 1
    for number, pattern in patterns:
        count = recognised.pop(pattern.name, 0)  # a repeated name: its first row took the results
        said = f"recognises {count} result{'' if count == 1 else 's'} here" if count else "matches no result here"
        checks.append(RowCheck("error_patterns", number, "ok", said, count))
    return found, sorted(checks, key=lambda check: check.row)
