"""Rules suggested for the tools a conversation actually uses, explained row by row.

Real agents call tools the book's rules never name (``Bash``, ``Read``, ``exec_command``, MCP
tools…), so a person needs a sound starting point built from their own run. A tool is classified
by its arguments and its sizes, never by its name, so the same reasoning works for tools nobody
has seen: a large result of a call with a path or URL is something read (the reference names
where from), with a query or pattern something searched, with a command something run; a large
text argument (``content``, ``new_string``, ``patch``…, or a long script in ``command``) is work
done that the call rule replaces once its result is in, and that work's own result keeps its
status ("Edit on a.py succeeded"). A tool whose output calling again does not bring back
(``refetch``: a running session, a sub-agent, an action) gets a reference that promises no
re-fetch — or, with ``recall`` (the agent runs with a recall store, ``playground.recall``), one
that names the key its output is stored under, which the ``recall`` tool gives back.
``min_tokens`` is one figure for all result rows (and one for all call rows), from the
size distribution of every tool together, so small items — a 60-character command, a two-line
output — are never touched, and no tool's item is kept while a smaller one of another tool is
replaced. A row that could not fire on this conversation is not offered.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..compaction import Report, Settings, Skip, apply_rules
from ..conversation import Conversation, ToolCall, ToolResult, content_text
from ..meter.tokens import Meter, TokenCount
from ..rules.editor import tables_from_rules
from ..rules.refetch import READ_ARGUMENTS, SHELL_ARGUMENTS, fetched_by, present, why_not
from ..rules.ruleset import Rules, Template, field_values, load_rules
from ..words import plural

# Arguments that carry work done (the text a call rule may replace).
WRITE_ARGUMENTS = ("content", "new_string", "new_str", "old_string", "old_str", "text", "patch", "file_text",
                   "new_source", "code", "input", "diff", "body")
TEXT_ARGUMENTS = (*WRITE_ARGUMENTS, *SHELL_ARGUMENTS)  # what a call rule may replace, in row order
_URL_ARGUMENTS = ("url", "uri")
TABLES = ("tool_calls", "tool_results")

LARGE_RESULT = 100  # tokens: a tool whose largest result is smaller gets no result rule
LARGE_ARGUMENT = 100  # tokens: an argument whose largest value is smaller is never replaced
COVER = 0.95  # min_tokens leaves out the smallest items, which hold the last 5% of all tools' tokens
REFERENCE_FACTOR = 3  # …and never goes below three times the longest reference of those rows

KINDS = {
    "read": "read-like",
    "search": "search-like",
    "shell": "shell-like",
    "write": "write-like",
    "one-off": "not re-fetchable",
}


@dataclass(frozen=True)
class Row:
    """One suggested rule row (its rules-file JSON) and why it is there."""

    table: str  # "tool_calls" or "tool_results"
    rule: Mapping[str, Any]
    kind: str  # a KINDS key
    explanation: str

    @property
    def tool(self) -> str:
        return str(self.rule["tool"])


@dataclass(frozen=True)
class Suggestion:
    """The suggested rows, and a note for each tool left without a rule."""

    rows: tuple[Row, ...]
    notes: tuple[str, ...]

    def rules_json(self) -> dict[str, Any]:
        """The rows in ``rules.load_rules``'s shape."""
        return {table: [dict(row.rule) for row in self.rows if row.table == table]
                for table in ("tool_calls", "tool_results")}

    def rules(self) -> Rules:
        return load_rules(self.rules_json())

    def explain(self) -> str:
        lines = [f"{row.table} · {row.tool}: {row.explanation}" for row in self.rows]
        return "\n".join(lines + [f"no rule · {note}" for note in self.notes])


@dataclass(frozen=True)
class _Tool:
    """What a conversation shows about one tool: its calls' arguments and its sizes in tokens."""

    name: str
    calls: tuple[Mapping[str, int], ...]  # per call: its string arguments' tokens (what min_tokens is compared with)
    results: tuple[int, ...]  # item tokens of its results (what min_tokens is compared with)
    arguments: tuple[Mapping[str, Any], ...] = ()  # per call: its arguments

    def largest(self, argument: str) -> Mapping[str, Any]:
        """The arguments of the call carrying ``argument``'s largest value."""
        carriers = [(sizes[argument], n) for n, sizes in enumerate(self.calls) if argument in sizes]
        return self.arguments[max(carriers)[1]]

    def values(self, argument: str) -> tuple[int, ...]:
        """Token sizes of ``argument``'s values, in the calls that carry it."""
        return tuple(sizes[argument] for sizes in self.calls if argument in sizes)

    def present(self, names: Iterable[str]) -> str | None:
        """The first of ``names`` that most of this tool's calls carry (so a reference names it)."""
        return present(self.arguments, names)


def _profiles(conversation: Conversation, meter: Meter, count: TokenCount) -> list[_Tool]:
    """Each tool the conversation calls, in order of first use, with the sizes compaction
    compares with ``min_tokens``: a result's item tokens, an argument value's own tokens."""
    calls: dict[str, list[dict[str, int]]] = {}
    arguments: dict[str, list[Mapping[str, Any]]] = {}
    results: dict[str, list[int]] = {}
    for item, item_tokens in zip(conversation.items, count.items, strict=True):
        if isinstance(item, ToolCall):
            parsed = item.parsed_arguments() or {}
            # As the call carries them: JSON-escaped (quotes and newlines in code cost tokens there).
            values = {name: meter.text(json.dumps(value, ensure_ascii=False))
                      for name, value in parsed.items() if isinstance(value, str)}
            calls.setdefault(item.name, []).append(values)
            arguments.setdefault(item.name, []).append(parsed)
        elif isinstance(item, ToolResult):
            results.setdefault(item.name, []).append(item_tokens)
    return [_Tool(name, tuple(found), tuple(results.get(name, ())), tuple(arguments[name]))
            for name, found in calls.items()]


def min_tokens(sizes: Iterable[int], reference: int) -> int:
    """The smallest size worth compacting: items at or above it hold ``COVER`` of the tokens,
    and it is at least ``REFERENCE_FACTOR`` times the (longest) reference: smaller items save little."""
    ordered = sorted(sizes, reverse=True)
    total, running, cut = sum(ordered), 0, 0
    for size in ordered:
        running += size
        cut = size
        if running >= COVER * total:
            break
    return max(cut, REFERENCE_FACTOR * reference)


def _result_kind(tool: _Tool) -> tuple[str, str | None]:
    """How a tool's results are referred to, and the argument the reference names: work done
    (a write argument) keeps its status; a read, search or command names what fetches it again;
    anything else promises no re-fetch (``refetch``)."""
    if tool.present(WRITE_ARGUMENTS):
        return "write", tool.present(READ_ARGUMENTS)
    found = fetched_by(tool.arguments)
    return found if found is not None else ("one-off", None)


RECALL_TEMPLATE = "Output of {tool} stored as {recall_key} ({lines} lines); call recall(key) to read it."


def _result_template(kind: str, argument: str | None, recall: bool = False) -> str:
    if kind == "write":  # failed results stay as they are (the error guard): one replaced succeeded
        where = f" on {{{argument}}}" if argument else ""
        see = f" Read {{{argument}}} to see the file." if argument else ""
        return f"{{tool}}{where} succeeded; its output ({{lines}} lines) is omitted.{see}"
    if kind == "search":
        return f"Search results for {{{argument}}} processed. Search again if needed."
    if kind == "read" and argument in _URL_ARGUMENTS:
        return f"Page content from {{{argument}}}. Fetch it again if needed."
    if kind == "read":
        return f"File content from {{{argument}}}. Re-read if needed."
    if kind == "shell":
        return f"Output of `{{{argument}}}` omitted ({{lines}} lines). Run it again if needed."
    if recall:
        return RECALL_TEMPLATE
    return "Output of {tool} omitted ({lines} lines); calling it again may not bring it back."


_RESULT_WHY = {
    "write": "write-like (work done): a failed result stays as it is (the error guard), so the reference keeps "
             "its status (succeeded){where}",
    "search": "search-like (a {argument!r} argument): the reference names the query",
    "read": "read-like (a {argument!r} argument): the reference names where it came from",
    "shell": "shell-like (a {argument!r} argument): the reference names the command (long ones cut with …)",
    "one-off": "not re-fetchable — {why}: the reference promises no re-fetch, and what it replaces counts as lost",
    "recall": "not re-fetchable — {why}: the reference names the key its output is stored under, and the recall "
              "tool gives it back",
}


def _sizes(sizes: tuple[int, ...]) -> str:
    return f"{len(sizes)} of {sum(sizes):,} tokens, largest {max(sizes):,}"


@dataclass(frozen=True)
class _Candidate:
    """A row before its ``min_tokens``, which is shared by every row of its table: the sizes it
    would be compared with, and its reference's tokens."""

    table: str
    rule: Mapping[str, Any]
    kind: str
    why: str
    sizes: tuple[int, ...]
    reference: int


def _result_row(tool: _Tool, meter: Meter, recall: bool = False) -> _Candidate | None:
    if not tool.results or max(tool.results) < LARGE_RESULT:
        return None
    kind, argument = _result_kind(tool)
    template = _result_template(kind, argument, recall)
    where = f" and names the file (its {argument!r})" if argument else ""
    why = _RESULT_WHY["recall" if recall and kind == "one-off" else kind].format(
        argument=argument, where=where, why=why_not(tool.arguments))
    rule = {"tool": tool.name, "template": template, "enabled": True}
    return _Candidate("tool_results", rule, kind, f"{why}. Results: {_sizes(tool.results)}", tool.results,
                      meter.text(template))


def _left_alone(sizes: tuple[int, ...], floor: int, noun: str) -> str:
    """What ``min_tokens`` = ``floor`` leaves as it is, in words, and why it is that figure."""
    shared = (f"min_tokens {floor:,} for every {noun} row: the smallest {noun}s of all tools, holding the last "
              f"{1 - COVER:.0%} of their tokens, stay, so no {noun} is kept while a smaller one is replaced")
    small = [size for size in sizes if size < floor]
    if not small:
        return f"{shared}; every {noun} of this tool is at least that large"
    share = sum(small) / (sum(sizes) or 1)
    plural = "" if len(small) == 1 else "s"
    return f"{shared}; here that leaves {len(small)} smaller {noun}{plural} ({share:.0%} of these tokens) as they are"


def _call_rows(tool: _Tool, meter: Meter) -> list[_Candidate]:
    """A row for each large text argument: work done (file content, an edit, a long script).

    Compaction compares a call rule's ``min_tokens`` with the argument's own tokens, so each
    row is sized on its argument's values alone: what the call holds besides (a path, another
    argument Edit's ``old_string`` next to its ``new_string``) never lifts a short value over
    the bar, and one row never changes what another row measures."""
    rows: list[_Candidate] = []
    where = tool.present(READ_ARGUMENTS)
    for argument in TEXT_ARGUMENTS:
        sizes = tool.values(argument)
        if not sizes or max(sizes) < LARGE_ARGUMENT or argument == where:
            continue
        target = f" Read {{{where}}} to see the file." if where else ""
        # A script keeps its head: {command} is cut at the value limit, so the reference to its
        # output, which names the command too, reads the same on a second pass (nothing changes).
        replacement = (f"{{{argument}}} [cut after it ran: {{chars}} characters]" if argument in SHELL_ARGUMENTS
                       else f"[{argument} ({{lines}} lines, {{chars}} characters) omitted: the call succeeded."
                            f"{target}]")
        kind = "shell" if argument in SHELL_ARGUMENTS else "write"
        what = ("a long script in its command (its first characters stay, cut with …)" if kind == "shell"
                else f"large {argument!r} text written or applied")
        why = (f"{KINDS[kind]}, {what}: replaced once the model has read its result and it succeeded. "
               f"Values: {_sizes(sizes)}")
        rows.append(_Candidate("tool_calls", {"tool": tool.name, "argument": argument, "replacement": replacement,
                                              "enabled": True}, kind, why, sizes,
                               _reference(replacement, tool.largest(argument), argument, meter)))
    return rows


def _reference(replacement: str, arguments: Mapping[str, Any], argument: str, meter: Meter) -> int:
    """Tokens of a call rule's replacement as it reads on ``arguments`` (the call with the largest
    value): a shell row keeps the command's head, cut at the value limit, and that head costs
    tokens too, so a command only a little longer than it is not worth cutting."""
    template = Template.parse(replacement)
    value = str(arguments[argument])
    values, _ = field_values(template, arguments, {"chars": len(value), "lines": len(value.splitlines())},
                             Rules().value_limit)
    return meter.text(template.render(values))


def _floors(candidates: list[_Candidate]) -> dict[str, int]:
    """One ``min_tokens`` per table, from every candidate's sizes together (so the choice is the
    same whatever the tool), never below three times the table's longest reference."""
    floors = {}
    for table in ("tool_calls", "tool_results"):
        found = [c for c in candidates if c.table == table]
        if found:
            floor = min_tokens([size for c in found for size in c.sizes], max(c.reference for c in found))
            floors[table] = max(floor, LARGE_ARGUMENT) if table == "tool_calls" else floor
    return floors


def _refused(conversation: Conversation, rows: tuple[Row, ...], meter: Meter, before: int) -> tuple[int, str | None]:
    """What ``rows`` save on this conversation at the most permissive settings (threshold 0, no
    keep_recent), counted as the whole request with ``meter``, and why a single row is not offered:
    it would make no edit, or its references are not smaller than what they replace (the run would
    not shrink: a suggested row never makes a run larger); None when it is offered."""
    rules = load_rules({table: [dict(r.rule) for r in rows if r.table == table] for table in (TABLES)})
    compacted, edits, skipped = apply_rules(conversation, rules, Settings(threshold=0), meter)
    saved = before - meter.count(compacted).total if edits else 0
    if len(rows) != 1 or (edits and saved > 0):
        return saved, None
    row = rows[0]
    noun = "result" if row.table == "tool_results" else f"{row.rule.get('argument')!r}"
    if edits:
        return saved, (f"{row.tool}: a {noun} rule's references are not smaller than what they replace here "
                       f"({before:,} → {before - saved:,} tokens with its {plural(len(edits), 'edit')}), so none is "
                       "offered: a suggested row never makes the run larger")
    return saved, (f"{row.tool}: a {noun} rule with the shared min_tokens {row.rule['min_tokens']:,} would make no "
                   f"edit here ({_stopped(skipped) or 'nothing to replace'}), so none is offered")


def suggest_rules(conversation: Conversation, meter: Meter, recall: bool = False) -> Suggestion:
    """Rules for the tools ``conversation`` uses: a result rule for each tool with large results,
    a call rule for each large text argument, each row with its explanation — only rows that can
    fire here, all rows of a table sharing one ``min_tokens``. ``recall``: the tools that cannot be
    re-run get a reference naming the key of their stored output (``RECALL_TEMPLATE``) instead of
    one that promises nothing."""
    count = meter.count(conversation)
    candidates: list[_Candidate] = []
    notes: list[str] = []
    for tool in _profiles(conversation, meter, count):
        if not tool.name.strip():  # a rule names its tool: a call with an empty name cannot get one
            notes.append("a tool with an empty name: no rule can name it")
            continue
        found = _call_rows(tool, meter)
        result = _result_row(tool, meter, recall)
        if result is not None:
            found.append(result)
        if not found:
            largest = max((*tool.results, *(size for values in tool.calls for size in values.values())),
                          default=0)
            notes.append(f"{tool.name}: its results and arguments are at most {largest:,} tokens; a reference "
                         f"would save little")
        candidates += found
    floors = _floors(candidates)
    rows: list[tuple[int, Row]] = []  # each offered row with what it saves alone
    for c in candidates:
        noun = "result" if c.table == "tool_results" else "value"
        floor = floors[c.table]
        row = Row(c.table, {**c.rule, "min_tokens": floor}, c.kind,
                  f"{c.why}; {_left_alone(c.sizes, floor, noun)}.")
        saved, why = _refused(conversation, (row,), meter, count.total)
        if why is None:
            rows.append((saved, row))
        else:
            notes.append(why)
    return Suggestion(_together(conversation, rows, meter, count.total, notes), tuple(notes))


def _together(conversation: Conversation, rows: list[tuple[int, Row]], meter: Meter, before: int,
              notes: list[str]) -> tuple[Row, ...]:
    """The rows, less those that leave the run no smaller together (rows on one call can meet on one
    item): the one saving least alone goes first, until the rest shrink the run, or none is left."""
    kept = [row for _, row in rows]
    alone = {id(row): saved for saved, row in rows}
    while kept and _refused(conversation, tuple(kept), meter, before)[0] <= 0:
        weakest = min(kept, key=lambda row: alone[id(row)])
        kept.remove(weakest)
        notes.append(f"{weakest.tool}: with the other rows the run is no smaller, so this row is not offered")
    return tuple(kept)


# ---------------------------------------------------------------------------------------------
# Before a suggestion is added: what each row would do


@dataclass(frozen=True)
class Preview:
    """What one suggested row does to this conversation on its own, with the page's guards."""

    row: Row
    edits: int
    saved: int  # tokens
    before: str  # the largest item's text before the edit ("" when the row makes no edit)
    after: str
    largest_tokens: int  # that item's tokens before


def preview(conversation: Conversation, suggestion: Suggestion, settings: Settings, meter: Meter) -> list[Preview]:
    """Each row applied alone (as compaction would, guards included): how many edits, the
    tokens saved and its largest edit's text before and after."""
    previews = []
    for row in suggestion.rows:
        compacted, edits, _ = apply_rules(conversation, load_rules({row.table: [dict(row.rule)]}), settings, meter)
        largest = max(edits, key=lambda edit: edit.tokens_before - edit.tokens_after, default=None)
        if largest is None:
            previews.append(Preview(row, 0, 0, "", "", 0))
            continue
        previews.append(Preview(row, len(edits), sum(e.tokens_before - e.tokens_after for e in edits),
                                _edited_text(conversation.items[largest.position], largest.argument),
                                _edited_text(compacted.items[largest.position], largest.argument),
                                largest.tokens_before))
    return previews


def _edited_text(item: Any, argument: str | None) -> str:
    if isinstance(item, ToolResult):
        return content_text(item.content)
    value = (item.parsed_arguments() or {}).get(argument, "")
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def add_rows(call_rows: list[dict[str, Any]], result_rows: list[dict[str, Any]], suggestion: Suggestion) -> tuple[
        list[dict[str, Any]], list[dict[str, Any]]]:
    """The rule tables' rows with the suggested rows added: a suggested row replaces a row for the
    same tool (and argument); every other row stays as the person left it, even one not valid yet."""
    calls, results = tables_from_rules(suggestion.rules())
    taken_calls = {(row["tool"], row["argument"]) for row in calls}
    taken_results = {row["tool"] for row in results}
    return ([row for row in call_rows if (row.get("tool"), row.get("argument") or "content") not in taken_calls]
            + calls, [row for row in result_rows if row.get("tool") not in taken_results] + results)


# ---------------------------------------------------------------------------------------------
# When no rule matches


def tool_shares(conversation: Conversation, count: TokenCount) -> list[tuple[str, float]]:
    """Each tool's share of the request (its calls and results), largest first."""
    shares: dict[str, int] = {}
    for item, tokens in zip(conversation.items, count.items, strict=True):
        if isinstance(item, ToolCall | ToolResult):
            shares[item.name] = shares.get(item.name, 0) + tokens
    total = count.total or 1
    return sorted(((tool, tokens / total) for tool, tokens in shares.items()), key=lambda pair: -pair[1])


def no_match_message(conversation: Conversation, report: Report, rules: Rules, shown: int = 3) -> str | None:
    """The sentence said when compaction ran (the request is at or over the threshold) and made
    no edit, naming the tools that hold the most tokens and, when rules matched, the guards that
    stopped them (``keep_recent = 3``, ``min_tokens``…); None otherwise."""
    count = report.before
    if report.edits or count.total < report.threshold or not any(isinstance(i, ToolCall) for i in conversation.items):
        return None
    return unmatched_message(conversation, count, rules, shown) or (
        f"No rule made an edit ({_guards(report)}); the largest tools are {_largest(conversation, count, shown)}.")


def unmatched_message(conversation: Conversation, count: TokenCount, rules: Rules, shown: int = 3) -> str | None:
    """"No rule matched any tool" with the largest tools, when no rule (enabled or not) names a
    tool the conversation calls, whatever the threshold; None otherwise."""
    used = {item.name for item in conversation.items if isinstance(item, ToolCall)}
    if not used or any(rules.for_result(tool) or rules.for_call(tool) for tool in used):
        return None
    return f"No rule matched any tool; the largest are {_largest(conversation, count, shown)}."


def _largest(conversation: Conversation, count: TokenCount, shown: int) -> str:
    return ", ".join(f"{tool} ({share:.0%})" for tool, share in tool_shares(conversation, count)[:shown])


def _guards(report: Report) -> str:
    stopped = _stopped(report.skipped)
    return f"every match was guarded: {stopped}" if stopped else "the rules that match found nothing to replace"


def _stopped(skipped: Iterable[Skip]) -> str:
    """What stopped the rules that matched, most matches first: ``3 kept by keep_recent = 3``."""
    found: dict[str, list[str]] = {}
    for skip in skipped:
        found.setdefault(skip.reason, []).append(skip.detail)
    return ", ".join(_STOPPED[reason].format(n=len(details), detail=details[0])
                     for reason, details in sorted(found.items(), key=lambda pair: -len(pair[1])))


_STOPPED = {"keep_recent": "{n} kept by {detail}", "not_processed": "{n} not read by the model yet",
            "result_pending": "{n} waiting for their result", "error_result": "{n} error results",
            "below_min_tokens": "{n} below their rule's min_tokens ({detail})",
            "not_smaller": "{n} with a replacement not smaller", "rule_disabled": "{n} under a disabled rule",
            "no_argument": "{n} without the argument", "already_compacted": "{n} already compacted"}
