"""The pass itself: ``walk`` yields every step (lookup, template, each guard, verdict) over the
items, ``DecisionCache`` keeps what a rerun can reuse, and ``apply_rules`` and ``compact`` run the
same walk to the end (``compact`` only at or over the threshold)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

from ..conversation import (
    Conversation,
    Item,
    JsonObject,
    Origin,
    Same,
    ToolCall,
    ToolResult,
    content_text,
    pairs,
    role_of,
)
from ..meter.tokens import Layout, Meter
from ..recall import recall_key
from ..rules.errorpatterns import ErrorPatterns, error_detail
from ..rules.refetch import one_off_tools
from ..rules.ruleset import FALLBACKS, CallRule, ResultRule, Rules, Template, book_rules, field_values
from .report import Compaction, Edit, Report, Skip, Step
from .settings import Settings


@dataclass(frozen=True)
class _Context:
    """What the pass knows about the whole request before it edits anything."""

    items: tuple[Item, ...]
    layout: Layout
    answers: dict[int, int]  # call position -> result position
    answered_by: dict[int, int]  # result position -> call position
    last_assistant: int
    protected: frozenset[int]
    settings: Settings
    meter: Meter
    patterns: ErrorPatterns
    errors: dict[Same, str | None]  # result -> why it is an error; filled as results are asked about

    @classmethod
    def build(cls, items: tuple[Item, ...], settings: Settings, meter: Meter, patterns: ErrorPatterns,
              errors: dict[Same, str | None] | None = None) -> _Context:
        """``errors``: what an earlier pass with the same patterns found (items are immutable, so a
        result's verdict holds for as long as the result; a replay asks again at every call)."""
        answers = pairs(items)
        last_assistant = max((p for p, item in enumerate(items) if role_of(item) == "assistant"), default=-1)
        # keep_recent counts tool uses the model has read: one it has not read (a call still waiting,
        # a result with no assistant turn after it) is kept by the not-processed guard and takes no slot.
        read = sorted(call for call, result in answers.items() if result < last_assistant)
        newest = read[-settings.keep_recent:] if settings.keep_recent else []
        protected = frozenset(newest) | {answers[p] for p in newest}
        return cls(items, Layout.of(items), answers, {r: c for c, r in answers.items()}, last_assistant, protected,
                   settings, meter, patterns, {} if errors is None else errors)

    def error_of(self, result: int | None) -> str | None:
        """Why the result at ``result`` is an error (``is_error flag`` / ``matched: <name>``), or None."""
        if result is None:
            return None
        key = Same(self.items[result])
        if key not in self.errors:
            self.errors[key] = error_detail(self.items[result], self.patterns,  # type: ignore[arg-type]
                                            self.settings.detect_errors)
        return self.errors[key]


@dataclass(frozen=True)
class _Candidate:
    """One (item, rule) pair, reduced to what the decision needs: the text a rule would
    replace, the arguments its template reads, and what could hold it back."""

    position: int
    item: ToolCall | ToolResult
    rule: CallRule | ResultRule
    template: Template
    text: str | None  # None: there is nothing to replace (no such argument)
    arguments: JsonObject | None
    waiting: str | None  # "not_processed" / "result_pending" when the work is not finished
    failed: str | None  # why the result (the call's, for a call) is an error
    parallel: bool  # a call sharing its message with other calls (it costs more)
    value_limit: int
    argument: str | None = None

    def rebuild(self, replacement: str) -> Item:
        if isinstance(self.item, ToolResult):
            return replace(self.item, content=replacement)
        arguments = {**(self.arguments or {}), str(self.argument): replacement}
        return replace(self.item, arguments=json.dumps(arguments, ensure_ascii=False))

    def measured(self, item_tokens: int, meter: Meter) -> tuple[int, str]:
        """What ``min_tokens`` is compared with, and its name in a detail: a result's item tokens
        (what its row shows); for a call rule, the replaced argument's value as the call carries
        it (JSON-encoded), since "never replace a small argument" is about that value and the
        rest of the call (other arguments, the name, per-key overheads) must not lift it."""
        if self.argument is None:
            return item_tokens, f"item {item_tokens} tokens"
        value = (self.arguments or {})[self.argument]
        tokens = meter.text(json.dumps(value, ensure_ascii=False))
        return tokens, f"argument {self.argument!r} is {tokens} tokens"

    def loose(self) -> frozenset[str]:
        """Template fields read from the very argument this call rule replaces: after the edit
        that value is gone, so "already compacted" accepts anything there."""
        if self.argument is None:
            return frozenset()
        return frozenset(f for f in self.template.fields if self.argument in FALLBACKS.get(f, (f,)))

    def describe(self) -> str:
        if self.argument is None:
            return f"tool_results: {self.rule.tool} → {self.template.text}"
        return f"tool_calls: {self.rule.tool}.{self.argument} → {self.template.text}"

    def step(self, phase: str, **fields: Any) -> Step:
        return Step(phase, self.position, self.item.name, "result" if self.argument is None else "call",
                    self.item.call_id, self.describe(), self.rule.tool, self.argument, **fields)


def _candidates(ctx: _Context, rules: Rules, position: int, item: Item, items: list[Item]) -> list[_Candidate]:
    """The rules that may replace ``item`` at ``position``; a result's template reads its call as the
    pass left it (``items``), as a second pass reads it."""
    if isinstance(item, ToolResult):
        rule = rules.for_result(item.name)
        if rule is None:
            return []
        arguments = _call_arguments(ctx, position, items)
        waiting = "not_processed" if position >= ctx.last_assistant else None
        return [_Candidate(position, item, rule, rule.template, content_text(item.content), arguments, waiting,
                           ctx.error_of(position), False, rules.value_limit)]
    if not isinstance(item, ToolCall):
        return []
    found = []
    call_rules = rules.for_call(item.name)
    if call_rules:
        arguments = item.parsed_arguments()
        result = ctx.answers.get(position)
        failed = ctx.error_of(result)
        parallel = position in ctx.layout.parallel
    for rule in call_rules:
        value = arguments.get(rule.argument) if arguments and rule.argument in arguments else None
        text = None if value is None else value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        waiting = "result_pending" if result is None else "not_processed" if result >= ctx.last_assistant else None
        found.append(_Candidate(position, item, rule, rule.replacement, text, arguments, waiting, failed, parallel,
                                rules.value_limit, rule.argument))
    return found


def _builtins(ctx: _Context, c: _Candidate) -> dict[str, Any]:
    """The built-in fields this template uses (lines and tokens cost a pass over the text)."""
    text = str(c.text)
    measures = {"tool": lambda: c.item.name, "call_id": lambda: c.item.call_id, "chars": lambda: len(text),
                "lines": lambda: len(text.splitlines()), "tokens": lambda: ctx.meter.text(text),
                "recall_key": lambda: recall_key(text)}
    return {field: measures[field]() for field in c.template.fields if field in measures}


@dataclass(frozen=True)
class _Decision:
    """What the pass decided for one candidate, and the trail that led there: ``trail`` holds
    ``("guard", name, passed, detail)`` and ``("template",)`` entries in the order they happened,
    so a step-by-step view replays exactly the checks the decision made."""

    trail: tuple[tuple[Any, ...], ...]
    reason: str | None  # None: an edit
    detail: str
    tokens_before: int  # the item's tokens, as its row shows them
    tokens_after: int
    values: Mapping[str, str] | None = None
    missing: tuple[str, ...] = ()
    text: str | None = None
    item: Item | None = None
    measured: int | None = None  # below_min_tokens: the tokens compared with min_tokens


def _decide(ctx: _Context, c: _Candidate) -> _Decision:
    """The compacted item — or the reason (a ``REASONS`` key) it was left alone for — with every
    guard checked on the way. Figures in a detail are item tokens, the numbers the row shows —
    except ``min_tokens``'s for a call rule: the replaced argument's tokens (the skip's ``measured``)."""
    trail: list[tuple[Any, ...]] = []
    before = ctx.meter.item(c.item, parallel=c.parallel)

    def check(guard: str, stops: bool, detail: str = "", passed: str = "") -> bool:
        trail.append(("guard", guard, not stops, detail if stops else passed))
        return stops

    def skip(reason: str, detail: str = "", **found: Any) -> _Decision:
        return _Decision(tuple(trail), reason, detail, before, before, **found)

    if check("rule_disabled", not c.rule.enabled):
        return skip("rule_disabled")
    detail = "arguments are not a JSON object" if c.arguments is None else f"no {c.argument!r}"
    if check("no_argument", c.text is None, detail):
        return skip("no_argument", detail)
    values, missing = field_values(c.template, c.arguments, _builtins(ctx, c), c.value_limit)
    text = c.template.render(values)
    trail.append(("template",))
    filled = {"values": values, "missing": missing, "text": text}
    if check("already_compacted", c.template.matches(str(c.text), values, c.loose())):
        return skip("already_compacted", **filled)
    if check(c.waiting or ("not_processed" if c.argument is None else "result_pending"), c.waiting is not None):
        return skip(str(c.waiting), **filled)
    failed = c.failed is not None and not ctx.settings.compact_errors
    if check("error_result", failed, str(c.failed), f"{c.failed}, but compact_errors is on" if c.failed else ""):
        return skip("error_result", str(c.failed), **filled)
    detail = f"keep_recent = {ctx.settings.keep_recent}"
    if check("keep_recent", c.position in ctx.protected, detail):
        return skip("keep_recent", detail, **filled)
    if c.rule.min_tokens <= 0:  # nothing is smaller: a call's argument is not counted only to print its size
        check("below_min_tokens", False, passed=f"min_tokens {c.rule.min_tokens}: every size passes")
    else:
        measured, what = c.measured(before, ctx.meter)
        detail = f"{what} < min_tokens {c.rule.min_tokens}"
        if check("below_min_tokens", measured < c.rule.min_tokens, detail, f"{what} ≥ min_tokens {c.rule.min_tokens}"):
            return skip("below_min_tokens", detail, measured=measured, **filled)
    compacted = c.rebuild(text)
    after = ctx.meter.item(compacted, parallel=c.parallel)
    detail = f"{after} ≥ {before} tokens"
    if check("not_smaller", after >= before, detail, f"{after} < {before} tokens"):
        return skip("not_smaller", detail, **filled)
    return _Decision(tuple(trail), None, "", before, after, values, missing, text, compacted)


def _verdict(c: _Candidate, decision: _Decision, origin: Origin | None) -> Step:
    common = {"position": c.position, "origin": origin, "tool": c.item.name,
              "kind": "result" if c.argument is None else "call", "call_id": c.item.call_id}
    if decision.reason is not None:
        return c.step("verdict", skip=Skip(**common, reason=decision.reason, detail=decision.detail,
                                           measured=decision.measured),
                      detail=decision.detail, tokens_before=decision.tokens_before,
                      tokens_after=decision.tokens_after)
    edit = Edit(**common, tokens_before=decision.tokens_before, tokens_after=decision.tokens_after,
                rule=c.describe(), argument=c.argument, missing_fields=decision.missing)
    return c.step("verdict", edit=edit, item=decision.item, tokens_before=decision.tokens_before,
                  tokens_after=decision.tokens_after)


def _explain(c: _Candidate, decision: _Decision) -> Iterator[Step]:
    """The steps that lead to a verdict: the lookup, then the decision's trail."""
    yield c.step("lookup", arguments=c.arguments)
    for entry in decision.trail:
        if entry[0] == "template":
            yield c.step("template", values=decision.values, missing_fields=decision.missing, text=decision.text)
        else:
            yield c.step("guard", guard=entry[1], passed=entry[2], detail=entry[3])


class DecisionCache:
    """What a rerun can reuse, owned by whoever reruns (an ``Engine``, one per browser session).

    Decisions are pure functions of the item, its call's arguments, the rule, the meter and a few
    flags, so a rerun with one rule changed re-decides only the items that rule touches. Keys hold
    the very item, arguments and meter a decision was made for (items are immutable; a meter's
    counts never change), so a key cannot match another object that happens to reuse a freed
    one's address. Each entry keeps the verdict step made from it, reused as is when the item
    stands at the same place.

    Two generations instead of a size cap: a pass keeps what it uses, and what neither it nor the
    pass before used is dropped. So the cache holds about two requests' candidates however long
    the request is — a replay of thousands of calls reuses every earlier item's decision at every
    call, where a fixed cap it outgrew would throw them all away again and again.
    """

    def __init__(self) -> None:
        self._current: dict[tuple[Any, ...], tuple[_Decision, Step]] = {}
        self._previous: dict[tuple[Any, ...], tuple[_Decision, Step]] = {}
        self._context: _Context | None = None

    def size(self) -> int:
        """Decisions held (a method, not ``len``: an empty cache must still be truthy where it is lent)."""
        return len(self._current) + len(self._previous)

    def context(self, items: tuple[Item, ...], settings: Settings, meter: Meter, patterns: ErrorPatterns) -> _Context:
        """The context of a new pass over ``items``; what the pass before last used is dropped."""
        if self._current:  # (a pass that decided nothing, below the threshold, keeps both generations)
            self._previous, self._current = self._current, {}
        last = self._context
        if (last is not None and last.items is items and last.settings == settings and last.meter is meter
                and last.patterns == patterns):
            return last  # a rerun over the same request: its pairing, guards and error checks are unchanged
        same_checks = (last is not None and last.patterns == patterns
                       and last.settings.detect_errors == settings.detect_errors and len(last.errors) <= 4 * len(items))
        self._context = _Context.build(items, settings, meter, patterns, last.errors if same_checks else None)
        return self._context

    def decide(self, ctx: _Context, c: _Candidate, origin: Origin | None) -> tuple[_Decision, Step]:
        """The decision for ``c`` and its verdict step."""
        protected = c.position in ctx.protected
        key = (Same(c.item), Same(c.arguments), c.argument, c.template.text, c.rule.enabled, c.rule.min_tokens,
               c.rule.tool, c.waiting, c.failed, c.parallel, c.value_limit, protected and ctx.settings.keep_recent,
               ctx.settings.compact_errors, Same(ctx.meter))
        hit = self._current.get(key) or self._previous.pop(key, None)
        if hit is not None:
            self._current[key] = hit
            decision, verdict = hit
            if verdict.position == c.position and (verdict.edit or verdict.skip).origin == origin:  # type: ignore
                return decision, verdict
            return decision, _verdict(c, decision, origin)
        decision = _decide(ctx, c)
        verdict = _verdict(c, decision, origin)
        self._current[key] = (decision, verdict)
        return decision, verdict


def walk(conversation: Conversation, rules: Rules, settings: Settings, meter: Meter,
         cache: DecisionCache | None = None, *, detail: bool = True) -> Iterator[Step]:
    """The one pass of the rules over every item, regardless of the threshold, as steps.

    For each tool call and result in order: ``lookup``, ``template``, one ``guard`` step per
    check, then its ``verdict``; a tool item no rule matches gets only its ``lookup`` (rule None).
    The last step is ``done`` with the resulting items. ``detail=False`` yields only verdicts and
    ``done``: the same decisions, for callers that want the result fast (``apply_rules``).
    """
    cache = cache or DecisionCache()
    ctx = cache.context(conversation.items, settings, meter, rules.error_patterns)
    items = list(conversation.items)
    for position, original in enumerate(conversation.items):
        found = _candidates(ctx, rules, position, original, items)
        if detail and not found and isinstance(original, ToolCall | ToolResult):
            arguments = original.parsed_arguments() if isinstance(original, ToolCall) else (
                _call_arguments(ctx, position, items))
            yield Step("lookup", position, original.name, "call" if isinstance(original, ToolCall) else "result",
                       original.call_id, arguments=arguments)
        for first in found:
            current = items[position]
            # Several argument rules may apply to one call: each sees the previous one's edit.
            candidate = first if current is original else replace(
                first, item=current, arguments=current.parsed_arguments())  # type: ignore[union-attr]
            decision, verdict = cache.decide(ctx, candidate, original.origin)
            if detail:
                yield from _explain(candidate, decision)
            if verdict.item is not None:
                items[position] = verdict.item
            yield verdict
    yield Step("done", len(items), items=tuple(items))


def _call_arguments(ctx: _Context, position: int, items: list[Item]) -> JsonObject | None:
    """The arguments of the call the result at ``position`` answers, as ``items`` holds it: read from
    the call as it came in, a result whose template names an argument a call rule replaced compacted
    otherwise on a second pass (a pass over its own output changed it again)."""
    call = ctx.answered_by.get(position)
    return items[call].parsed_arguments() if call is not None else None  # type: ignore[union-attr]


def final_items(steps: Iterable[Step]) -> tuple[Item, ...]:
    """The items a (completed) walk leaves: those of its ``done`` step."""
    for step in steps:
        if step.phase == "done":
            return step.items  # type: ignore[return-value]
    raise ValueError("the walk did not finish: no 'done' step")


def apply_rules(conversation: Conversation, rules: Rules, settings: Settings, meter: Meter,
                cache: DecisionCache | None = None) -> tuple[Conversation, tuple[Edit, ...], tuple[Skip, ...]]:
    """One pass of the rules over every item, regardless of the threshold: ``walk`` run to the end."""
    edits: list[Edit] = []
    skipped: list[Skip] = []
    items = conversation.items
    for step in walk(conversation, rules, settings, meter, cache, detail=False):
        if step.edit is not None:
            edits.append(step.edit)
        elif step.skip is not None:
            skipped.append(step.skip)
        elif step.items is not None:
            items = step.items
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
        one_off=one_off_tools(conversation) if edits else {},
    )
    return Compaction(compacted, report)
