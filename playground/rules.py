"""Compaction rules: two tables keyed by tool name, as in the book.

Tool-call rules replace one argument of a call (``create_file``'s ``content``) once the work is
done; tool-result rules replace a result's body with a reference built from a template
(``File content from {file_path}. Re-read if needed.``). Templates are safe: only plain field
names, filled from the call's arguments and a few built-ins, never evaluated.
"""

from __future__ import annotations

import functools
import json
import re
import string
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .errors import InputError

UNKNOWN = "unknown"
BUILTINS = {
    "tool": "the tool's name",
    "call_id": "the call's id",
    "chars": "characters in the text replaced",
    "lines": "lines in the text replaced (as str.splitlines counts them)",
    "tokens": "tokens in the text replaced",
}
_NUMERIC = ("chars", "lines", "tokens")
# The book falls back from file_path to path; a template may name either.
FALLBACKS = {"file_path": ("file_path", "path")}
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


@dataclass(frozen=True)
class Template:
    """A replacement text with ``{field}`` slots, checked once when it is made."""

    text: str
    pieces: tuple[tuple[str, str | None], ...]  # (literal, field or None)
    fields: tuple[str, ...]  # each field once, in order

    @classmethod
    def parse(cls, text: str, where: str = "template") -> Template:
        """Accept only plain names: ``{x.__class__}``, ``{x[0]}``, ``{x!r}``, ``{x:>10}`` and
        positional ``{}`` are rejected, so a template can never reach into an object."""
        if not isinstance(text, str):
            raise InputError("expected a string", where=where, value=text)
        try:
            parsed = list(string.Formatter().parse(text))
        except ValueError as exc:
            raise InputError(f"unsafe or malformed template ({exc}; write {{{{ and }}}} for braces)",
                             where=where, value=text) from None
        pieces = []
        for literal, field, spec, conversion in parsed:
            if field is not None:
                if not _IDENTIFIER.match(field):
                    raise InputError("unsafe template field: only plain names like {file_path} are allowed",
                                     where=where, value="{" + field + "}")
                if conversion or spec:
                    shown = "{" + field + ("!" + conversion if conversion else "") + (":" + spec if spec else "") + "}"
                    raise InputError("unsafe template field: conversions and format specs are not allowed",
                                     where=where, value=shown)
            pieces.append((literal, field))
        return cls(text, tuple(pieces), tuple(dict.fromkeys(field for _, field in pieces if field is not None)))

    def render(self, values: Mapping[str, str]) -> str:
        return "".join(literal + (values[field] if field is not None else "") for literal, field in self.pieces)

    def matches(self, text: str, values: Mapping[str, str]) -> bool:
        """Whether ``text`` is already this template rendered for the same call — with any
        numbers in the numeric built-ins — so compacting twice changes nothing."""
        if not self.pieces:
            return text == ""
        head, tail = self.pieces[0][0], self.pieces[-1][0] if self.pieces[-1][1] is None else ""
        if not (text.startswith(head) and text.endswith(tail)):  # the usual case, decided without a regex
            return False
        pattern = "".join(
            re.escape(literal) + ("" if field is None else r"\d+" if field in _NUMERIC else re.escape(values[field]))
            for literal, field in self.pieces
        )
        return re.fullmatch(pattern, text) is not None


@dataclass(frozen=True)
class CallRule:
    """Replace ``argument`` of every call to ``tool`` with ``replacement``."""

    tool: str
    argument: str
    replacement: Template
    enabled: bool = True
    min_tokens: int = 0


@dataclass(frozen=True)
class ResultRule:
    """Replace the body of every result of ``tool`` with ``template``."""

    tool: str
    template: Template
    enabled: bool = True
    min_tokens: int = 0


@dataclass(frozen=True)
class Rules:
    tool_calls: tuple[CallRule, ...] = ()
    tool_results: tuple[ResultRule, ...] = ()

    @functools.cached_property
    def _by_tool(self) -> tuple[dict[str, tuple[CallRule, ...]], dict[str, ResultRule]]:
        calls: dict[str, tuple[CallRule, ...]] = {}
        for rule in self.tool_calls:
            calls[rule.tool] = (*calls.get(rule.tool, ()), rule)
        return calls, {rule.tool: rule for rule in reversed(self.tool_results)}

    def for_call(self, tool: str) -> tuple[CallRule, ...]:
        return self._by_tool[0].get(tool, ())

    def for_result(self, tool: str) -> ResultRule | None:
        """The first rule for ``tool``'s results (load_rules refuses a second one)."""
        return self._by_tool[1].get(tool)

    @property
    def tools(self) -> set[str]:
        return {rule.tool for rule in self.tool_calls} | {rule.tool for rule in self.tool_results}


def field_values(template: Template, arguments: Mapping[str, Any] | None, builtins: Mapping[str, Any]) -> tuple[
        dict[str, str], tuple[str, ...]]:
    """Values for the template's fields, and the fields the call lacks (rendered ``unknown``).

    Built-ins win over an argument of the same name, so their meaning never changes.
    """
    arguments = arguments or {}
    values: dict[str, str] = {}
    missing = []
    for field in template.fields:
        if field in builtins:
            values[field] = str(builtins[field])
            continue
        key = next((k for k in FALLBACKS.get(field, (field,)) if k in arguments), None)
        if key is None:
            values[field] = UNKNOWN
            missing.append(field)
        else:
            value = arguments[key]
            values[field] = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return values, tuple(missing)


# ---------------------------------------------------------------------------------------------
# The book's rules (Listing 6.5), and rules as JSON and Python


def book_rules() -> Rules:
    return load_rules({
        "tool_calls": [{"tool": "create_file", "argument": "content", "replacement": "[Content saved to file]"}],
        "tool_results": [
            {"tool": "read_file", "template": "File content from {file_path}. Re-read if needed."},
            {"tool": "search_web", "template": "Search results processed. Query: {query}. Re-search if needed."},
            {"tool": "tavily_search", "template": "Search results processed. Query: {query}. Re-search if needed."},
        ],
    })


def _row_common(row: dict, where: str) -> tuple[str, bool, int]:
    tool = row.get("tool")
    if not isinstance(tool, str) or not tool.strip():
        raise InputError("missing tool name", where=f"{where}.tool", value=tool)
    enabled = row.get("enabled", True)
    if not isinstance(enabled, bool):
        raise InputError("expected true or false", where=f"{where}.enabled", value=enabled)
    min_tokens = row.get("min_tokens", 0)
    if min_tokens is None:
        min_tokens = 0
    if isinstance(min_tokens, bool) or not isinstance(min_tokens, int) or min_tokens < 0:
        raise InputError("expected a whole number of tokens, 0 or more", where=f"{where}.min_tokens", value=min_tokens)
    return tool.strip(), enabled, min_tokens


def _rows(data: Mapping[str, Any], table: str, value_key: str) -> list[tuple[dict, str]]:
    """A table as (row, where) pairs; the book's ``{tool: text}`` dict shape is accepted too."""
    raw = data.get(table, [])
    if isinstance(raw, Mapping):
        raw = [{"tool": tool, value_key: text} for tool, text in raw.items()]
    if not isinstance(raw, list):
        raise InputError("expected a list of rules", where=table, value=raw)
    rows = []
    for position, row in enumerate(raw):
        where = f"{table}[{position}]"
        if not isinstance(row, dict):
            raise InputError("expected an object", where=where, value=row)
        rows.append((row, where))
    return rows


def load_rules(data: Any) -> Rules:
    """Rules from their JSON shape. The result replaces the defaults as a whole."""
    if not isinstance(data, Mapping) or not ({"tool_calls", "tool_results"} & set(data)):
        raise InputError("a rules file is an object with 'tool_calls' and/or 'tool_results'")
    calls: list[CallRule] = []
    for row, where in _rows(data, "tool_calls", "replacement"):
        tool, enabled, min_tokens = _row_common(row, where)
        argument = row.get("argument", "content")
        if not isinstance(argument, str) or not argument:
            raise InputError("missing argument name", where=f"{where}.argument", value=argument)
        template = Template.parse(row.get("replacement"), f"{where}.replacement")
        if any(rule.tool == tool and rule.argument == argument for rule in calls):
            raise InputError(f"a second rule for {tool}'s {argument!r}", where=where)
        calls.append(CallRule(tool, argument, template, enabled, min_tokens))
    results: list[ResultRule] = []
    for row, where in _rows(data, "tool_results", "template"):
        tool, enabled, min_tokens = _row_common(row, where)
        template = Template.parse(row.get("template"), f"{where}.template")
        if any(rule.tool == tool for rule in results):
            raise InputError(f"a second rule for {tool}'s results", where=where)
        results.append(ResultRule(tool, template, enabled, min_tokens))
    return Rules(tuple(calls), tuple(results))


def rules_to_json(rules: Rules) -> dict[str, Any]:
    return {
        "tool_calls": [{"tool": r.tool, "argument": r.argument, "replacement": r.replacement.text,
                        "enabled": r.enabled, "min_tokens": r.min_tokens} for r in rules.tool_calls],
        "tool_results": [{"tool": r.tool, "template": r.template.text, "enabled": r.enabled,
                          "min_tokens": r.min_tokens} for r in rules.tool_results],
    }


def _literal(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)  # a JSON string or object is a Python literal too


def rules_to_python(rules: Rules) -> str:
    """The enabled rules as the book's two Python dicts, ready to paste into an agent."""
    lines = [
        "# Compaction rules exported from Compaction Playground (disabled rules left out).",
        "# Tools to compress ToolCall arguments: tool -> replacement for its \"content\" argument",
        "# (or, for other arguments, tool -> {argument: replacement}).",
        "TOOLCALL_COMPACTION_RULES = {",
    ]
    by_tool: dict[str, dict[str, str]] = {}
    for rule in rules.tool_calls:
        if rule.enabled:
            by_tool.setdefault(rule.tool, {})[rule.argument] = rule.replacement.text
    for tool, arguments in by_tool.items():
        value = arguments["content"] if list(arguments) == ["content"] else arguments
        lines.append(f"    {_literal(tool)}: {_literal(value)},")
    lines += ["}", "", "# Tools to compress ToolResult content: tool -> reference template",
              "TOOLRESULT_COMPACTION_RULES = {"]
    for rule in rules.tool_results:
        if rule.enabled:
            note = f"  # only results of {rule.min_tokens}+ tokens" if rule.min_tokens else ""
            lines.append(f"    {_literal(rule.tool)}: {_literal(rule.template.text)},{note}")
    lines.append("}")
    return "\n".join(lines) + "\n"
