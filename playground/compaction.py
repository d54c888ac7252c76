"""Rule-based compaction behind a token threshold.

Count first: below the threshold nothing changes (every edit costs a possible re-fetch and
breaks the provider's prompt-cache prefix). At or above it, one pass over the items applies the
rules, remembering each call's arguments by position so its result's reference can name the
path or query. Guards the book's listing lacks: results the model has not read yet, calls whose
result is not in yet, the newest ``keep_recent`` tool uses and error results are left alone; a
replacement that is not smaller is skipped; a second pass changes nothing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

from .errors import InputError
from .model import Conversation, Item, JsonObject, Origin, ToolCall, ToolResult, content_text, pairs, role_of
from .rules import Rules, Template, book_rules, field_values
from .tokens import Layout, Meter, TokenCount

DEFAULT_THRESHOLD = 50_000  # the book's

REASONS = {
    "rule_disabled": "the rule for this tool is disabled",
    "no_argument": "the call has no such argument",
    "already_compacted": "already compacted by this rule",
    "not_processed": "not processed by the model yet (no assistant turn after it)",
    "result_pending": "its result is not in the request yet",
    "error_result": "error result: a reference would disguise the failure",
    "keep_recent": "one of the newest tool uses (keep_recent)",
    "below_min_tokens": "smaller than the rule's min_tokens",
    "not_smaller": "the replacement is not smaller, in tokens, than the original",
}
STAGES = {
    "below_threshold": "below the threshold: nothing changes",
    "compacted": "compacted: now below the threshold",
    "still_over": "still at or over the threshold after every edit",
}


@dataclass(frozen=True)
class Settings:
    threshold: int = DEFAULT_THRESHOLD
    keep_recent: int = 0
    compact_errors: bool = False

    def __post_init__(self) -> None:
        if self.threshold < 0:
            raise InputError("threshold must be 0 or more", where="threshold", value=self.threshold)
        if self.keep_recent < 0:
            raise InputError("keep_recent must be 0 or more", where="keep_recent", value=self.keep_recent)


@dataclass(frozen=True)
class Edit:
    """One replacement: the item at ``position`` in the conversation (``origin`` in the input)."""

    position: int
    origin: Origin | None
    tool: str
    kind: str  # "call" or "result"
    call_id: str
    tokens_before: int
    tokens_after: int
    rule: str
    argument: str | None = None
    missing_fields: tuple[str, ...] = ()


@dataclass(frozen=True)
class Skip:
    """A candidate the rules matched but compaction left alone, and why (a ``REASONS`` key)."""

    position: int
    origin: Origin | None
    tool: str
    kind: str
    call_id: str
    reason: str
    detail: str = ""


@dataclass(frozen=True)
class Report:
    stage: str
    threshold: int
    tokens_before: int
    tokens_after: int
    edits: tuple[Edit, ...]
    skipped: tuple[Skip, ...]
    first_changed: Origin | None
    first_changed_position: int | None
    cached_prefix_tokens: int
    before: TokenCount
    after: TokenCount

    @property
    def saved(self) -> int:
        return self.tokens_before - self.tokens_after


@dataclass(frozen=True)
class Compaction:
    conversation: Conversation
    report: Report


@dataclass(frozen=True)
class _Context:
    """What the pass knows about the whole request before it edits anything."""

    items: tuple[Item, ...]
    answers: dict[int, int]  # call position -> result position
    answered_by: dict[int, int]  # result position -> call position
    last_assistant: int
    protected: frozenset[int]
    settings: Settings
    meter: Meter

    @classmethod
    def build(cls, items: tuple[Item, ...], settings: Settings, meter: Meter) -> _Context:
        answers = pairs(items)
        calls = [p for p, item in enumerate(items) if isinstance(item, ToolCall)]
        newest = calls[len(calls) - settings.keep_recent:] if settings.keep_recent else []
        protected = frozenset(newest) | {answers[p] for p in newest if p in answers}
        last_assistant = max((p for p, item in enumerate(items) if role_of(item) == "assistant"), default=-1)
        return cls(items, answers, {r: c for c, r in answers.items()}, last_assistant, protected, settings, meter)




@dataclass(frozen=True)
class _Candidate:
    """One (item, rule) pair, reduced to what the decision needs: the text a rule would
    replace, the arguments its template reads, and what could hold it back."""

    position: int
    item: ToolCall | ToolResult
    template: Template
    enabled: bool
    min_tokens: int
    text: str | None  # None: there is nothing to replace (no such argument)
    arguments: JsonObject | None
    waiting: str | None  # "not_processed" / "result_pending" when the work is not finished
    failed: bool  # the result (the call's, for a call) is an error
    argument: str | None = None

    def rebuild(self, replacement: str) -> Item:
        if isinstance(self.item, ToolResult):
            return replace(self.item, content=replacement)
        arguments = {**(self.arguments or {}), str(self.argument): replacement}
        return replace(self.item, arguments=json.dumps(arguments, ensure_ascii=False))

    @staticmethod
    def measured(item: Item) -> str:
        """The text of an item that an edit changes, as the meter counts it (already cached
        from the first count): a result's content, a call's whole arguments."""
        return item.arguments if isinstance(item, ToolCall) else content_text(item.content)  # type: ignore[union-attr]

    def describe(self) -> str:
        if self.argument is None:
            return f"tool_results: {self.item.name} → {self.template.text}"
        return f"tool_calls: {self.item.name}.{self.argument} → {self.template.text}"


def _candidates(ctx: _Context, rules: Rules, position: int, item: Item) -> list[_Candidate]:
    if isinstance(item, ToolResult):
        rule = rules.for_result(item.name)
        if rule is None:
            return []
        call = ctx.answered_by.get(position)
        arguments = ctx.items[call].parsed_arguments() if call is not None else None  # type: ignore[union-attr]
        waiting = "not_processed" if position >= ctx.last_assistant else None
        return [_Candidate(position, item, rule.template, rule.enabled, rule.min_tokens, content_text(item.content),
                           arguments, waiting, item.is_error)]
    if not isinstance(item, ToolCall):
        return []
    arguments = item.parsed_arguments()
    result = ctx.answers.get(position)
    failed = result is not None and ctx.items[result].is_error  # type: ignore[union-attr]
    found = []
    for rule in rules.for_call(item.name):
        value = arguments.get(rule.argument) if arguments and rule.argument in arguments else None
        text = None if value is None else value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        found.append(_Candidate(position, item, rule.replacement, rule.enabled, rule.min_tokens, text, arguments,
                                None if result is not None else "result_pending", failed, rule.argument))
    return found


def _builtins(ctx: _Context, c: _Candidate) -> dict[str, Any]:
    """The built-in fields this template uses (lines and tokens cost a pass over the text)."""
    text = str(c.text)
    measures = {"tool": lambda: c.item.name, "call_id": lambda: c.item.call_id, "chars": lambda: len(text),
                "lines": lambda: len(text.splitlines()), "tokens": lambda: ctx.meter.text(text)}
    return {field: measures[field]() for field in c.template.fields if field in measures}


def _decide(ctx: _Context, c: _Candidate) -> tuple[Item, tuple[str, ...], int] | tuple[str, str]:
    """The compacted item, the template fields its call lacked and the tokens saved — or the
    (reason, detail) it was left alone for."""
    if not c.enabled:
        return "rule_disabled", ""
    if c.text is None:
        return "no_argument", "arguments are not a JSON object" if c.arguments is None else f"no {c.argument!r}"
    values, missing = field_values(c.template, c.arguments, _builtins(ctx, c))
    if c.template.matches(c.text, values):
        return "already_compacted", ""
    if c.waiting:
        return c.waiting, ""
    if c.failed and not ctx.settings.compact_errors:
        return "error_result", "" if isinstance(c.item, ToolResult) else "its result is an error"
    if c.position in ctx.protected:
        return "keep_recent", f"keep_recent = {ctx.settings.keep_recent}"
    original = ctx.meter.text(c.measured(c.item))
    if original < c.min_tokens:
        return "below_min_tokens", f"{original} < {c.min_tokens} tokens"
    compacted = c.rebuild(c.template.render(values))
    smaller = ctx.meter.text(c.measured(compacted))
    if smaller >= original:
        return "not_smaller", f"{smaller} ≥ {original} tokens"
    return compacted, missing, original - smaller


class DecisionCache:
    """What a rerun can reuse, owned by whoever reruns (an ``Engine``, one per browser session).

    Decisions are pure functions of the item, its call's arguments, the rule and a few flags, so
    a rerun with one rule changed re-decides only the items that rule touches. Entries hold the
    item and arguments they were made for and are trusted only for those very objects.
    """

    ENTRIES = 10_000

    def __init__(self) -> None:
        self._decisions: dict[tuple[Any, ...], tuple[Any, Any, Any]] = {}
        self._context: _Context | None = None

    def context(self, items: tuple[Item, ...], settings: Settings, meter: Meter) -> _Context:
        last = self._context
        if last is not None and last.items is items and last.settings == settings and last.meter is meter:
            return last  # a rerun over the same request: its pairing and guards are unchanged
        self._context = _Context.build(items, settings, meter)
        return self._context

    def decide(self, ctx: _Context, c: _Candidate) -> tuple[Item, tuple[str, ...], int] | tuple[str, str]:
        protected = c.position in ctx.protected
        key = (id(c.item), id(c.arguments), c.argument, c.template.text, c.enabled, c.min_tokens, c.waiting,
               c.failed, protected and ctx.settings.keep_recent, ctx.settings.compact_errors, id(ctx.meter))
        hit = self._decisions.get(key)
        if hit is not None and hit[0] is c.item and hit[1] is c.arguments:
            return hit[2]
        outcome = _decide(ctx, c)
        if len(self._decisions) >= self.ENTRIES:
            self._decisions.clear()
        self._decisions[key] = (c.item, c.arguments, outcome)
        return outcome


def apply_rules(conversation: Conversation, rules: Rules, settings: Settings, meter: Meter,
                cache: DecisionCache | None = None) -> tuple[Conversation, tuple[Edit, ...], tuple[Skip, ...]]:
    """One pass of the rules over every item, regardless of the threshold."""
    cache = cache or DecisionCache()
    ctx = cache.context(conversation.items, settings, meter)
    layout = Layout.of(conversation.items)  # compaction never changes it
    items = list(conversation.items)
    edits: list[Edit] = []
    skipped: list[Skip] = []
    for position, original in enumerate(conversation.items):
        for found in _candidates(ctx, rules, position, original):
            current = items[position]
            # Several argument rules may apply to one call: each sees the previous one's edit.
            candidate = found if current is original else replace(
                found, item=current, arguments=current.parsed_arguments())  # type: ignore[union-attr]
            common = {"position": position, "origin": original.origin, "tool": candidate.item.name,
                      "kind": "result" if isinstance(original, ToolResult) else "call",
                      "call_id": candidate.item.call_id}
            outcome = cache.decide(ctx, candidate)
            if isinstance(outcome[0], str):
                skipped.append(Skip(**common, reason=outcome[0], detail=str(outcome[1])))
                continue
            compacted, missing, saved = outcome
            items[position] = compacted
            before = meter.item_at(layout, position, current)
            edits.append(Edit(**common, tokens_before=before, tokens_after=before - saved, rule=candidate.describe(),
                              argument=candidate.argument, missing_fields=tuple(missing)))
    return conversation.with_items(items), tuple(edits), tuple(skipped)


def compact(conversation: Conversation, rules: Rules | None = None, settings: Settings | None = None,
            model: str | None = None, *, meter: Meter | None = None, cache: DecisionCache | None = None) -> Compaction:
    """Count, and compact only when the request is at or over the threshold. ``meter`` and
    ``cache`` are what an ``Engine`` lends so reruns reuse counts and decisions; without them
    this call makes its own and forgets them."""
    rules = book_rules() if rules is None else rules
    settings = settings or Settings()
    counter = meter or Meter(model or conversation.model)
    before = counter.count(conversation)
    if before.total < settings.threshold:
        report = Report("below_threshold", settings.threshold, before.total, before.total, (), (), None, None,
                        before.total, before, before)
        return Compaction(conversation, report)
    compacted, edits, skipped = apply_rules(conversation, rules, settings, counter, cache)
    after = counter.count(compacted) if edits else before
    first = min((edit.position for edit in edits), default=None)
    stage = "compacted" if edits and after.total < settings.threshold else "still_over"
    report = Report(
        stage=stage,
        threshold=settings.threshold,
        tokens_before=before.total,
        tokens_after=after.total,
        edits=edits,
        skipped=skipped,
        first_changed=conversation.items[first].origin if first is not None else None,
        first_changed_position=first,
        cached_prefix_tokens=before.prefix(first) if first is not None else before.total,
        before=before,
        after=after,
    )
    return Compaction(compacted, report)
