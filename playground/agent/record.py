"""What one wrapped call did, as one line of the run log: the tokens before and after, each edit (the
item and the rule that made it), the cached prefix replay predicts, and the provider's ``usage``.

The record holds figures only; its log line adds what rebuilds the run (what the caller's request
added since the last call, and the reply: ``formats.agent_run``), never a header, so no API key can
reach the log (the wrapper never reads the client's key, and ``usage`` is the provider's counts).
Edits are found by comparing the request as the caller gave it (after the stored edits of earlier
calls) with the one sent, so every policy's edits are listed the same way, whatever its report.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..conversation import Conversation, Item, ToolCall, ToolResult, item_kind, shared, tool_name
from ..formats import agent_run
from ..policies import Policy
from ..rules.ruleset import Rules


@dataclass(frozen=True)
class ItemEdit:
    """One edit of this call. ``position``: in the request as given (history and new items);
    ``message``: the caller's ``messages`` index it came from (None: an item a policy wrote);
    ``replaced``/``by``: how many items a span edit (a summary) replaced, and with how many."""

    position: int
    message: int | None
    kind: str  # call, result, message, span
    tool: str | None
    call_id: str | None
    rule: str
    replaced: int = 1
    by: int = 1


@dataclass(frozen=True)
class CallRecord:
    """One call of a wrapped run. ``tokens_*``: the prompt as the caller's history had it and as
    sent; ``cached_*``: what the provider's cache reads of each, as replay predicts it;
    ``prefix_items``/``prefix_tokens``: the leading items (and their tokens, head included) this
    request shares with the last one sent, the prefix the cache can hit; ``restarted``: the caller's
    history did not begin with the last call's, so its stored edits were dropped and the run
    started again; ``usage``: the provider's, None for a stream (its usage is in the stream)."""

    call: int
    api: str
    model: str | None
    policy: str
    fired: str | None
    items_before: int
    items_after: int
    tokens_before: int
    tokens_after: int
    cached_before: int
    cached_after: int
    prefix_items: int
    prefix_tokens: int
    edits: tuple[ItemEdit, ...]
    restarted: bool = False
    stream: bool = False
    usage: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        """The record as its log line holds it (the edits a list, as JSON reads them back)."""
        return {**asdict(self), "edits": [asdict(edit) for edit in self.edits]}


def append(log: Path, record: CallRecord, added: tuple[int, list[Any]], head: dict[str, Any] | None,
           reply: list[Any] | None) -> None:
    """Add ``record`` to the run log as one JSON line (``formats.agent_run.line``: with what the
    caller's list ``added`` since the last call, where, the request's ``head`` when it changed, and
    the ``reply``). The file is opened per call: nothing is held open between an agent's calls, and
    a crash loses no earlier line."""
    with open(log, "a", encoding="utf-8") as stream:
        stream.write(json.dumps(agent_run.line(record.to_json(), *added, head, reply), ensure_ascii=False) + "\n")


def edits(request: Conversation, sent: Conversation, policy: Policy, fired: str | None) -> tuple[ItemEdit, ...]:
    """The items ``sent`` changed of ``request``: one edit per item replaced by one of its kind, or
    one span edit where items were replaced by a different number of them (a summary)."""
    before, after = request.items, sent.items
    if before is after:
        return ()
    head = shared(before, after)
    tail = 0
    room = min(len(before), len(after)) - head
    while tail < room and before[-1 - tail] == after[-1 - tail]:
        tail += 1
    old, new = before[head:len(before) - tail], after[head:len(after) - tail]
    rule = fired or policy.name
    if len(old) != len(new):
        first = old[0] if old else None
        return (ItemEdit(head, _message(first), "span", None, None, rule, len(old), len(new)),)
    rules = getattr(policy, "rules", None)
    return tuple(ItemEdit(head + n, _message(was), item_kind(was), tool_name(was), _call_id(was),
                          _rule(rules, was, now, rule) if isinstance(rules, Rules) else rule)
                 for n, (was, now) in enumerate(zip(old, new, strict=True)) if was != now)


def _message(item: Item | None) -> int | None:
    return item.origin.index if item is not None and item.origin is not None else None


def _call_id(item: Item) -> str | None:
    return item.call_id if isinstance(item, ToolCall | ToolResult) else None


def _rule(rules: Rules, was: Item, now: Item, fired: str) -> str:
    """The row of the rule tables that made an edit (``tool_results[read_file]``,
    ``tool_calls[create_file].content``), or what fired when no row did (a summary's message)."""
    if isinstance(was, ToolResult):
        row = rules.for_result(was.name)
        return f"tool_results[{row.tool}]" if row else fired
    if isinstance(was, ToolCall) and isinstance(now, ToolCall):
        old, new = was.parsed_arguments() or {}, now.parsed_arguments() or {}
        changed = [f"tool_calls[{row.tool}].{row.argument}" for row in rules.for_call(was.name)
                   if old.get(row.argument) != new.get(row.argument)]
        return ", ".join(changed) or fired
    return fired
