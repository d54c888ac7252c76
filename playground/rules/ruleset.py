"""Compaction rules: two tables keyed by tool name (or a tool pattern), as in the book.

Tool-call rules replace one argument of a call (``create_file``'s ``content``) once the work is
done; tool-result rules replace a result's body with a reference built from a template
(``File content from {file_path}. Re-read if needed.``). Templates are safe: only plain field
names, filled from the call's arguments and a few built-ins, never evaluated. A rule's ``tool``
may be an exact name, a glob or ``|``-separated alternatives (``tool_matches``), so rules can be
written for agents whose tools the book never named; within a table the first matching row wins.
"""

from __future__ import annotations

import fnmatch
import functools
import json
import re
import string
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import InputError, located_objects
from ..limits import MAX_TOKENS, whole
from .errorpatterns import DEFAULT_ERROR_PATTERNS, ErrorPatterns, load_error_patterns
from .regex import literal_slots

UNKNOWN = "unknown"
BUILTINS = {
    "tool": "the tool's name",
    "call_id": "the call's id",
    "chars": "characters in the text replaced",
    "lines": "lines in the text replaced (as str.splitlines counts them)",
    "tokens": "tokens in the text replaced",
    "recall_key": "the key the text replaced is stored under: the recall tool gives it back (playground.recall)",
}
_NUMERIC = ("chars", "lines", "tokens")
_KEYED = ("recall_key",)  # a hash of the text replaced: once replaced, the text is the reference, of another hash
# The book falls back from file_path to path; a template may name either.
FALLBACKS = {"file_path": ("file_path", "path")}
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_GLOB = frozenset("*?[")
VALUE_LIMIT = 80  # characters of a {field} value from the arguments: a reference must not repeat a long command
ELLIPSIS = "…"


def tool_matches(pattern: str, name: str) -> bool:
    """Whether a rule's ``tool`` pattern covers the tool ``name``: ``|`` separates alternatives,
    each an exact name or a case-sensitive glob (``*``, ``?``, ``[..]``), as tool names are."""
    return any(alternative == name or (_GLOB & set(alternative) and fnmatch.fnmatchcase(name, alternative))
               for alternative in (part.strip() for part in pattern.split("|")))


def cap(value: str, limit: int) -> str:
    """``value`` cut to ``limit`` characters, the last one an ellipsis (``limit`` 0: no cap)."""
    return value if not limit or len(value) <= limit else value[: limit - 1] + ELLIPSIS


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

    def matches(self, text: str, values: Mapping[str, str], loose: frozenset[str] = frozenset()) -> bool:
        """Whether ``text`` is already this template rendered for the same call — with any
        numbers in the numeric built-ins, and anything in the ``loose`` fields (a call rule's
        template naming the very argument it replaces: that value is gone after the edit) and in
        ``{recall_key}`` (the key of the text it replaced) — so compacting twice changes nothing."""
        if not self.pieces:
            return text == ""
        head, tail = self.pieces[0][0], self.pieces[-1][0] if self.pieces[-1][1] is None else ""
        if not (text.startswith(head) and text.endswith(tail)):  # the usual case, decided without a regex
            return False
        pieces: list[tuple[str, str | None]] = []
        for literal, name in self.pieces:  # a value is a literal too; numbers and loose fields are slots
            if name is None or name in _NUMERIC or name in loose or name in _KEYED:
                pieces.append((literal, None if name is None else "digits" if name in _NUMERIC else "any"))
            else:
                pieces.append((literal + values[name], None))
        # RE2, not re: "{chars}{chars}{chars}" is \d+\d+\d+, which backtracks for minutes on a long number
        return literal_slots(pieces).fullmatch(text)


@dataclass(frozen=True)
class CallRule:
    """Replace ``argument`` of every call to ``tool`` with ``replacement``; ``min_tokens`` is
    compared with that argument's tokens (its value as the call carries it), never with the whole
    call, so a large neighbour cannot lift a small argument over the bar."""

    tool: str
    argument: str
    replacement: Template
    enabled: bool = True
    min_tokens: int = 0


@dataclass(frozen=True)
class ResultRule:
    """Replace the body of every result of ``tool`` with ``template``; ``min_tokens`` is compared
    with the result's item tokens (what its row shows)."""

    tool: str
    template: Template
    enabled: bool = True
    min_tokens: int = 0


@dataclass(frozen=True)
class Rules:
    """Both tables, plus what every rule shares: how errors are recognised (``error_patterns``)
    and how long a ``{field}`` value from the arguments may be (``value_limit``, 0: no cap)."""

    tool_calls: tuple[CallRule, ...] = ()
    tool_results: tuple[ResultRule, ...] = ()
    error_patterns: ErrorPatterns = DEFAULT_ERROR_PATTERNS
    value_limit: int = VALUE_LIMIT

    @functools.cached_property
    def _lookups(self) -> tuple[dict[str, tuple[CallRule, ...]], dict[str, ResultRule | None]]:
        """Each tool's rules, found once per tool name (derived from this immutable value)."""
        return {}, {}

    def for_call(self, tool: str) -> tuple[CallRule, ...]:
        """The rules for ``tool``'s calls: per argument, the first matching row, in table order."""
        found = self._lookups[0].get(tool)
        if found is None:
            claimed: set[str] = set()
            rows = []
            for rule in self.tool_calls:
                if rule.argument not in claimed and tool_matches(rule.tool, tool):
                    claimed.add(rule.argument)
                    rows.append(rule)
            found = self._lookups[0][tool] = tuple(rows)
        return found

    def for_result(self, tool: str) -> ResultRule | None:
        """The first row whose pattern matches ``tool``."""
        lookup = self._lookups[1]
        if tool not in lookup:
            lookup[tool] = next((rule for rule in self.tool_results if tool_matches(rule.tool, tool)), None)
        return lookup[tool]


def field_values(template: Template, arguments: Mapping[str, Any] | None, builtins: Mapping[str, Any],
                 limit: int = 0) -> tuple[dict[str, str], tuple[str, ...]]:
    """Values for the template's fields, and the fields the call lacks (rendered ``unknown``).

    Built-ins win over an argument of the same name, so their meaning never changes; they are
    never cut. A value from the arguments longer than ``limit`` characters is cut (``cap``).
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
            values[field] = cap(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False), limit)
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
    min_tokens = whole(0 if min_tokens is None else min_tokens, f"{where}.min_tokens", what="a whole number of tokens")
    return tool.strip(), enabled, min_tokens


def _rows(data: Mapping[str, Any], table: str, value_key: str) -> list[tuple[dict, str]]:
    """A table as (row, where) pairs; the book's ``{tool: text}`` dict shape is accepted too."""
    raw = data.get(table, [])
    if isinstance(raw, Mapping):
        raw = [{"tool": tool, value_key: text} for tool, text in raw.items()]
    return located_objects(raw, table, "a list of rules", "an object")


def _text(row: dict, key: str, where: str) -> Template:
    """A row's replacement text: a rule must produce some, or it would blank what it replaces."""
    text = row.get(key)
    if text is None or (isinstance(text, str) and not text.strip()):
        raise InputError(f"missing {key}: a rule must produce non-empty text", where=f"{where}.{key}", value=text)
    return Template.parse(text, f"{where}.{key}")


def _value_limit(data: Mapping[str, Any]) -> int:
    limit = data.get("value_limit", VALUE_LIMIT)
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0 or limit == 1 or limit > MAX_TOKENS:
        raise InputError(f"expected a whole number of characters: 0 (no cap) or 2 to {MAX_TOKENS:,}",
                         where="value_limit", value=limit)
    return limit


TOP_KEYS = ("tool_calls", "tool_results", "error_patterns", "value_limit")


def load_rules(data: Any) -> Rules:
    """Rules from their JSON shape. The result replaces the defaults as a whole (without
    ``error_patterns`` the shipped patterns apply; ``[]`` recognises none)."""
    if not isinstance(data, Mapping) or not (set(TOP_KEYS) & set(data)):
        raise InputError("a rules file is an object with 'tool_calls' and/or 'tool_results'")
    calls: list[CallRule] = []
    for row, where in _rows(data, "tool_calls", "replacement"):
        tool, enabled, min_tokens = _row_common(row, where)
        argument = row.get("argument", "content")
        if not isinstance(argument, str) or not argument:
            raise InputError("missing argument name", where=f"{where}.argument", value=argument)
        template = _text(row, "replacement", where)
        if any(rule.tool == tool and rule.argument == argument for rule in calls):
            raise InputError(f"a second rule for {tool}'s {argument!r}", where=where)
        calls.append(CallRule(tool, argument, template, enabled, min_tokens))
    results: list[ResultRule] = []
    for row, where in _rows(data, "tool_results", "template"):
        tool, enabled, min_tokens = _row_common(row, where)
        template = _text(row, "template", where)
        if any(rule.tool == tool for rule in results):
            raise InputError(f"a second rule for {tool}'s results", where=where)
        results.append(ResultRule(tool, template, enabled, min_tokens))
    patterns = data.get("error_patterns")
    return Rules(tuple(calls), tuple(results),
                 DEFAULT_ERROR_PATTERNS if patterns is None else load_error_patterns(patterns), _value_limit(data))


def rules_to_json(rules: Rules) -> dict[str, Any]:
    return {
        "tool_calls": [{"tool": r.tool, "argument": r.argument, "replacement": r.replacement.text,
                        "enabled": r.enabled, "min_tokens": r.min_tokens} for r in rules.tool_calls],
        "tool_results": [{"tool": r.tool, "template": r.template.text, "enabled": r.enabled,
                          "min_tokens": r.min_tokens} for r in rules.tool_results],
        "error_patterns": rules.error_patterns.to_json(),
        "value_limit": rules.value_limit,
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
    if any(_GLOB & set(rule.tool) or "|" in rule.tool for rule in (*rules.tool_calls, *rules.tool_results)):
        lines.append("# Keys with * ? [ ] or | are tool patterns; the book's code looks keys up by exact name.")
    return "\n".join(lines) + "\n"
