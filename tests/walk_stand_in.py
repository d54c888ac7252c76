"""TEMPORARY TEST STAND-IN for core's ``compaction.walk`` — tests only, never shipped.

Until the engine's step generator (SPEC.md, "Step generator") is merged, the step-through's
tests need steps of that shape. This makes them from the engine's own ``apply_rules`` result —
its edits and skips, in pass order — so it decides nothing itself and is not a second pass.
Delete it once ``compaction.walk`` exists; the engine-equality test already uses the real one.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from playground.compaction import Edit, Settings, Skip, apply_rules
from playground.model import Conversation, ToolResult, content_text, pairs
from playground.rules import Rules
from playground.tokens import Meter

GUARDS = ("not processed yet", "error result", "keep_recent", "min_tokens", "not smaller")
STOPPED_BY = {"not_processed": "not processed yet", "result_pending": "not processed yet",
              "error_result": "error result", "keep_recent": "keep_recent", "below_min_tokens": "min_tokens",
              "not_smaller": "not smaller"}


@dataclass(frozen=True)
class StandInStep:
    kind: str
    position: int
    tool: str = ""
    rule: str | None = None
    arguments: Any = None
    text: str = ""
    name: str = ""
    verdict: str = ""
    detail: str = ""
    edit: Edit | None = None
    skip: Skip | None = None
    items: tuple | None = None


def walk(conversation: Conversation, rules: Rules, settings: Settings, meter: Meter, cache=None) -> Iterator:
    compacted, edits, skipped = apply_rules(conversation, rules, settings, meter, cache)
    answered_by = {result: call for call, result in pairs(conversation.items).items()}
    outcomes = sorted([*edits, *skipped], key=lambda outcome: outcome.position)
    for outcome in outcomes:
        at = outcome.position
        call = answered_by.get(at) if isinstance(conversation.items[at], ToolResult) else at
        arguments = conversation.items[call].parsed_arguments() if call is not None else None
        rule = outcome.rule if isinstance(outcome, Edit) else f"a {outcome.kind} rule for {outcome.tool}"
        yield StandInStep("lookup", at, outcome.tool, rule=rule, arguments=arguments)
        after = compacted.items[at]
        text = content_text(after.content) if isinstance(after, ToolResult) else str(getattr(after, "arguments", ""))
        yield StandInStep("template", at, outcome.tool, text=text)
        stop = STOPPED_BY.get(getattr(outcome, "reason", ""))
        for guard in GUARDS:
            if isinstance(outcome, Skip) and stop is None:
                break
            yield StandInStep("guard", at, outcome.tool, name=guard, verdict="stopped" if guard == stop else "passed",
                              detail=getattr(outcome, "detail", "") if guard == stop else "")
            if guard == stop:
                break
        yield StandInStep("verdict", at, outcome.tool, edit=outcome if isinstance(outcome, Edit) else None,
                          skip=outcome if isinstance(outcome, Skip) else None,
                          items=compacted.items if outcome is outcomes[-1] else None)
