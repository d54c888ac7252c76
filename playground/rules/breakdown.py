"""Where the tokens go: per tool, calls and results apart, and a first rule for a tool that
has none — so a person sees which tools deserve a rule."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from ..conversation import Conversation, Item, ToolCall, ToolResult
from ..meter.tokens import TokenCount
from .ruleset import Rules

# Arguments that say best what a call was about, in the order we prefer them for a reference.
_TELLING = ("file_path", "path", "query", "url", "command", "filename", "name", "id")


@dataclass(frozen=True)
class Share:
    """One row of the breakdown: a tool's calls or its results (or the messages)."""

    tool: str  # "" for plain messages
    kind: str  # "call", "result" or "message"
    items: int
    tokens: int
    share: float  # of the whole request, 0..1
    largest: int  # tokens of the largest item
    largest_position: int
    has_rule: bool


def _key(item: Item) -> tuple[str, str]:
    if isinstance(item, ToolCall):
        return item.name, "call"
    if isinstance(item, ToolResult):
        return item.name, "result"
    return "", "message"


def tool_shares(conversation: Conversation, count: TokenCount, rules: Rules) -> list[Share]:
    """Rows for messages and for each tool's calls and results, largest first."""
    totals: Counter[tuple[str, str]] = Counter()
    items: Counter[tuple[str, str]] = Counter()
    largest: dict[tuple[str, str], tuple[int, int]] = {}
    for position, (item, tokens) in enumerate(zip(conversation.items, count.items, strict=True)):
        key = _key(item)
        totals[key] += tokens
        items[key] += 1
        if tokens > largest.get(key, (-1, 0))[0]:
            largest[key] = (tokens, position)
    covered = {("call", r.tool) for r in rules.tool_calls if r.enabled} | {
        ("result", r.tool) for r in rules.tool_results if r.enabled}
    rows = [Share(tool, kind, items[(tool, kind)], tokens, tokens / count.total if count.total else 0.0,
                  largest[(tool, kind)][0], largest[(tool, kind)][1], (kind, tool) in covered)
            for (tool, kind), tokens in totals.items()]
    return sorted(rows, key=lambda row: -row.tokens)


def worth_a_rule(row: Share, threshold: float = 0.05, largest: int = 100) -> bool:
    """A tool's calls or results with no rule that hold at least ``threshold`` of the request,
    with items big enough (``largest`` tokens) that a reference would be smaller."""
    return row.kind != "message" and not row.has_rule and row.share >= threshold and row.largest >= largest


def argument_names(conversation: Conversation, tool: str) -> list[str]:
    """The argument names ``tool``'s calls use, most common first."""
    names: Counter[str] = Counter()
    for item in conversation.items:
        if isinstance(item, ToolCall) and item.name == tool:
            names.update((item.parsed_arguments() or {}).keys())
    return [name for name, _ in names.most_common()]


def most_telling(names: Counter[str]) -> str | None:
    """``telling_argument`` from the argument names a tool's calls used, counted in the order
    they came (a count kept up to date as calls arrive)."""
    return _telling([name for name, _ in names.most_common()])


def telling_argument(conversation: Conversation, tool: str) -> str | None:
    """The argument that best names what a call fetched (path, query, url…), if any."""
    return _telling(argument_names(conversation, tool))


def _telling(names: list[str]) -> str | None:
    return next((name for name in _TELLING if name in names), names[0] if names else None)


def largest_argument(conversation: Conversation, tool: str, min_average: int = 1) -> str | None:
    """The string argument of ``tool``'s calls holding the most text (what a call rule should
    replace), if its calls average at least ``min_average`` characters of it."""
    sizes: Counter[str] = Counter()
    calls = 0
    for item in conversation.items:
        if isinstance(item, ToolCall) and item.name == tool:
            calls += 1
            for name, value in (item.parsed_arguments() or {}).items():
                sizes[name] += len(value) if isinstance(value, str) else 0
    if not sizes:
        return None
    name, total = sizes.most_common(1)[0]
    return name if total >= min_average * calls and total > 0 else None


def suggest_rule(conversation: Conversation, tool: str, kind: str) -> dict[str, object]:
    """A first rule row for ``tool``, with a template that names the tool's own arguments."""
    if kind == "call":
        argument = largest_argument(conversation, tool) or "content"
        telling = telling_argument(conversation, tool)
        about = f" for {{{telling}}}" if telling and telling != argument else ""
        return {"enabled": True, "tool": tool, "argument": argument,
                "replacement": f"[{argument} of {tool}{about} omitted: {{chars}} characters. It was done.]",
                "min_tokens": 0}
    telling = telling_argument(conversation, tool)
    subject = f"{tool}({telling}={{{telling}}})" if telling else tool
    return {"enabled": True, "tool": tool,
            "template": f"Output of {subject} omitted ({{lines}} lines). Call it again if needed.",
            "min_tokens": 0}


def tools_in(conversation: Conversation) -> list[str]:
    """Every tool name the conversation calls, in order of first use."""
    return list(dict.fromkeys(item.name for item in conversation.items if isinstance(item, ToolCall)))

