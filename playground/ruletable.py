"""The rule tables as a person edits them: rows in, rules out, and a live check of every row
against the current conversation (what it matches, which fields its calls lack, what is unsafe).

Rows come from an editable table, so any cell may be empty or of the wrong type; a row that
cannot become a rule is reported and left out, the others still apply.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .errors import InputError
from .model import Conversation, ToolCall, ToolResult
from .rules import BUILTINS, FALLBACKS, Rules, Template, load_rules, rules_to_json

CALL_COLUMNS = ("enabled", "tool", "argument", "replacement", "min_tokens")
RESULT_COLUMNS = ("enabled", "tool", "template", "min_tokens")
TABLES = {"tool_calls": ("replacement", CALL_COLUMNS), "tool_results": ("template", RESULT_COLUMNS)}


@dataclass(frozen=True)
class RowCheck:
    table: str  # "tool_calls" or "tool_results"
    row: int
    level: str  # "ok", "warning", "error" or "empty"
    message: str
    matches: int = 0


def _text(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return str(value).strip() if not isinstance(value, str) else value


def _clean(row: Mapping[str, Any], table: str) -> dict[str, Any]:
    """A table row as a rules-file row: blanks become defaults, numbers become ints."""
    text_key = TABLES[table][0]
    clean: dict[str, Any] = {"tool": _text(row.get("tool")).strip(), text_key: _text(row.get(text_key))}
    if table == "tool_calls":
        clean["argument"] = _text(row.get("argument")).strip() or "content"
    enabled = row.get("enabled")
    clean["enabled"] = True if enabled is None or (isinstance(enabled, float) and math.isnan(enabled)) else bool(
        enabled)
    minimum = row.get("min_tokens")
    if minimum is None or (isinstance(minimum, float) and math.isnan(minimum)):
        minimum = 0
    clean["min_tokens"] = int(minimum) if isinstance(minimum, int | float) and float(minimum).is_integer() else minimum
    return clean


def _arguments_of(conversation: Conversation, tool: str) -> list[Mapping[str, Any]]:
    """The arguments of every call the row's rule would read: the tool's calls."""
    return [item.parsed_arguments() or {} for item in conversation.items
            if isinstance(item, ToolCall) and item.name == tool]


def _matches(conversation: Conversation, tool: str, table: str) -> int:
    kind = ToolCall if table == "tool_calls" else ToolResult
    return sum(isinstance(item, kind) and item.name == tool for item in conversation.items)


def _check(row: dict[str, Any], table: str, template: Template, conversation: Conversation) -> RowCheck:
    """A valid row's fit with the conversation: matches, and fields or arguments its calls lack."""
    tool = row["tool"]
    matches = _matches(conversation, tool, table)
    noun = "call" if table == "tool_calls" else "result"
    if matches == 0:
        return RowCheck(table, 0, "warning", f"no {noun}s of {tool} in this conversation", 0)
    calls = _arguments_of(conversation, tool)
    problems = []
    if table == "tool_calls":
        lacking = sum(row["argument"] not in args for args in calls)
        if lacking:
            problems.append(f"{lacking} of {len(calls)} calls have no {row['argument']!r} argument")
    for field in template.fields:
        if field in BUILTINS:
            continue
        lacking = sum(not any(k in args for k in FALLBACKS.get(field, (field,))) for args in calls)
        if lacking:
            problems.append(f"{{{field}}} is missing in {lacking} of {len(calls)} calls (shown as 'unknown')")
    plural = "" if matches == 1 else "s"
    summary = f"matches {matches} {noun}{plural}"
    if not row["enabled"]:
        return RowCheck(table, 0, "ok", f"disabled; would match {matches} {noun}{plural}", matches)
    if problems:
        return RowCheck(table, 0, "warning", f"{summary}; " + "; ".join(problems), matches)
    return RowCheck(table, 0, "ok", summary, matches)


def rules_from_tables(call_rows: Iterable[Mapping[str, Any]], result_rows: Iterable[Mapping[str, Any]],
                      conversation: Conversation) -> tuple[Rules, list[RowCheck]]:
    """Rules from the valid rows, and one check per row (errors name the cell)."""
    valid: dict[str, list[dict[str, Any]]] = {"tool_calls": [], "tool_results": []}
    checks: list[RowCheck] = []
    seen: set[tuple[str, ...]] = set()
    for table, rows in (("tool_calls", call_rows), ("tool_results", result_rows)):
        text_key = TABLES[table][0]
        for number, raw in enumerate(rows):
            row = _clean(raw, table)
            if not row["tool"] and not row[text_key]:
                checks.append(RowCheck(table, number, "empty", "empty row: ignored"))
                continue
            identity = (table, row["tool"], row.get("argument", ""))
            if identity in seen:
                what = "tool and argument" if table == "tool_calls" else "tool"
                checks.append(RowCheck(table, number, "error", f"a second rule for the same {what}: row ignored"))
                continue
            try:
                load_rules({table: [row]})  # validates the row as a rules file would
            except InputError as exc:
                field = exc.where.rsplit(".", 1)[-1] if exc.where and "." in exc.where else None
                where = f"{field}: " if field else ""
                value = f" ({exc.value!r})" if exc.value is not None else ""
                checks.append(RowCheck(table, number, "error", f"{where}{exc.message}{value}"))
                continue
            seen.add(identity)
            valid[table].append(row)
            check = _check(row, table, Template.parse(row[text_key]), conversation)
            checks.append(RowCheck(table, number, check.level, check.message, check.matches))
    return load_rules(valid), checks


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
