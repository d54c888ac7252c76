"""The live probe: does compaction change what the agent does next?

At calls where the policy changed the request (sampled evenly over the run, always with the last),
the request as it was and as compacted go to the same model (temperature 0, the same tools and tool
choice, a small reply limit), and the two next actions are compared: the same tool calls with the
same arguments (JSON compared as values, so key order and spacing do not matter), or for a text
reply a similarity ratio (difflib's) of at least ``TEXT_THRESHOLD``.

Planning is offline and free (``plan``): which calls, the requests in the provider's wire format
(converted with ``playground.formats`` when the conversation is in another one), their tokens and an
estimated price, so a person can stop before anything is sent. ``run`` sends through any function
that takes a body and returns the provider's reply (the HTTP clients live in ``llm``:
``openai_compatible`` and ``anthropic``); a failed request is reported for its call and the others go on.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from . import formats
from .conversation import Conversation, Tool, ToolCall
from .errors import InputError
from .export import exports
from .llm.failure import LLMError
from .meter.tokens import Meter
from .policies import Policy
from .run.prices import Price, rounded
from .run.replay import applied, call_starts
from .words import plural

PROVIDERS = {"openai": "chat", "anthropic": "anthropic"}  # provider → the wire format its API takes
TEXT_THRESHOLD = 0.8  # difflib ratio at or above which two text replies count as the same next step
DEFAULT_CALLS = 5
DEFAULT_MAX_TOKENS = 256  # the next action only: a tool call or the start of a reply
OPEN_TOOL = "A tool the agent used (its definition is not in the log)."
_DROPPED = ("stream", "stream_options", "n", "max_completion_tokens", "thinking", "top_p", "top_k")


@dataclass(frozen=True)
class Pair:
    """One sampled call: its request as it was and as compacted, as bodies ready to send."""

    number: int  # position among the run's calls
    index: int  # the assistant turn's position in the input's own list
    before: dict[str, Any] = field(repr=False)
    after: dict[str, Any] = field(repr=False)
    tokens_before: int
    tokens_after: int

    @property
    def tokens(self) -> int:
        return self.tokens_before + self.tokens_after


@dataclass(frozen=True)
class Plan:
    """What a probe would send, known before anything is: the calls the policy changed, the sampled
    pairs that fit the budget, the ones the budget left out, and the estimate."""

    calls: int  # calls in the run
    changed: tuple[int, ...]  # numbers of the calls whose request the policy changed
    pairs: tuple[Pair, ...]
    over_budget: tuple[int, ...]  # sampled calls left out by the token budget
    price: Price
    max_tokens: int
    notes: tuple[str, ...]  # what converting the requests changed

    @property
    def requests(self) -> int:
        return 2 * len(self.pairs)

    @property
    def tokens(self) -> int:
        return sum(pair.tokens for pair in self.pairs)

    @property
    def cost(self) -> float:
        """At most: every prompt token at the list input price (no cache read), and every reply
        using its whole ``max_tokens`` at the output price."""
        return (self.tokens * self.price.input + self.requests * self.max_tokens * self.price.output) / 1e6


@dataclass(frozen=True)
class Action:
    """A reply's next step: its tool calls (name and arguments, parsed from JSON when they are
    JSON) or, when it calls no tool, its text."""

    tool_calls: tuple[tuple[str, Any], ...] = ()
    text: str = ""

    def to_json(self) -> dict[str, Any]:
        if self.tool_calls:
            return {"tool_calls": [{"tool": name, "arguments": arguments} for name, arguments in self.tool_calls]}
        return {"text": self.text}

    def __str__(self) -> str:
        if self.tool_calls:
            return "; ".join(f"{name} {json.dumps(value, ensure_ascii=False)}" for name, value in self.tool_calls)
        return json.dumps(self.text, ensure_ascii=False)


@dataclass(frozen=True)
class Outcome:
    """One probed call: both next actions and whether they agree, or what failed."""

    number: int
    index: int
    before: Action | None = None
    after: Action | None = None
    similarity: float | None = None  # text replies only
    error: str | None = None  # the failed request, named (as it was / as compacted), and why

    @property
    def same(self) -> bool | None:
        """None when the call could not be compared (a request failed)."""
        if self.before is None or self.after is None:
            return None
        if self.before.tool_calls or self.after.tool_calls:
            return self.before.tool_calls == self.after.tool_calls
        return self.similarity is not None and self.similarity >= TEXT_THRESHOLD


@dataclass(frozen=True)
class Probe:
    """What a probe found: each pair's outcome, and what was actually sent (failed requests included)."""

    plan: Plan
    outcomes: tuple[Outcome, ...]
    sent_requests: int
    tokens_sent: int

    @property
    def compared(self) -> tuple[Outcome, ...]:
        return tuple(outcome for outcome in self.outcomes if outcome.same is not None)

    @property
    def agreement(self) -> float | None:
        """The share of compared calls whose next action stayed the same; None when none compared."""
        compared = self.compared
        return sum(outcome.same is True for outcome in compared) / len(compared) if compared else None


def sample(changed: tuple[int, ...], calls: int | None) -> tuple[int, ...]:
    """``calls`` of ``changed`` spread evenly over it, the last always among them (None: all)."""
    if calls is None or calls >= len(changed):
        return changed
    if calls <= 0:
        return ()
    if calls == 1:
        return changed[-1:]
    last = len(changed) - 1
    return tuple(changed[round(k * last / (calls - 1))] for k in range(calls))


def body_of(conversation: Conversation, wire: str, max_tokens: int) -> dict[str, Any]:
    """The request as the provider takes it, at temperature 0 with a small reply limit; options
    that would change the reply's shape (streaming, several choices, extended thinking) dropped.
    Its model is the endpoint's, set as it is sent."""
    body, _ = exports.request_body(conversation, wire)  # its notes on model and max_tokens do not apply here
    body = {key: value for key, value in body.items() if key not in _DROPPED}
    return body | {"temperature": 0, "max_tokens": max_tokens}


def _changed(conversation: Conversation, policy: Policy, meter: Meter,
             mode: str) -> Iterator[tuple[int, int, int, Conversation]]:
    """Each call whose request the policy changed: its number, its index, where its request ends
    in the items (the request as it was is everything before) and the request as compacted."""
    items = conversation.items
    for number, (start, result) in enumerate(applied(conversation, policy, meter, mode)):
        if result.conversation.items != items[:start]:
            origin = items[start].origin
            yield number, origin.index if origin else start, start, result.conversation


def plan(conversation: Conversation, policy: Policy, meter: Meter, price: Price, provider: str, *,
         mode: str = "stored", calls: int | None = DEFAULT_CALLS, budget: int | None = None,
         max_tokens: int = DEFAULT_MAX_TOKENS) -> Plan:
    """The probe's requests, tokens and estimate, nothing sent. ``budget`` caps the tokens sent:
    sampled calls are taken in order, each only if both its requests still fit."""
    if provider not in PROVIDERS:
        raise InputError(f"unknown provider (choose {', '.join(PROVIDERS)})", where="--provider", value=provider)
    wire = PROVIDERS[provider]
    conversation, defined = with_tools(conversation)
    changed = list(_changed(conversation, policy, meter, mode))
    numbers = tuple(number for number, *_ in changed)
    chosen = set(sample(numbers, calls))
    pairs: list[Pair] = []
    over: list[int] = []
    spent = 0
    for number, index, start, after in changed:
        if number not in chosen:
            continue
        before = conversation.with_items(conversation.items[:start])
        tokens = meter.count(before).total, meter.count(after).total
        if budget is not None and spent + sum(tokens) > budget:
            over.append(number)
            continue
        spent += sum(tokens)
        pairs.append(Pair(number, index, body_of(before, wire, max_tokens), body_of(after, wire, max_tokens), *tokens))
    notes = formats.convert(conversation, wire).notes[len(conversation.notes):] if pairs else ()
    if defined:
        notes += (f"the log defines no tools: {', '.join(defined)} defined from its calls' names, with any "
                  "arguments allowed (a provider refuses tool calls in a request that defines none)",)
    return Plan(len(call_starts(conversation.items)), numbers, tuple(pairs), tuple(over), price, max_tokens, notes)


def with_tools(conversation: Conversation) -> tuple[Conversation, tuple[str, ...]]:
    """The conversation with a definition for each tool its calls name, when it has none at all
    (agent traces often keep only the messages), and those names."""
    if conversation.tools:
        return conversation, ()
    names = tuple(dict.fromkeys(item.name for item in conversation.items if isinstance(item, ToolCall)))
    tools = tuple(Tool(name, OPEN_TOOL, {"type": "object"}) for name in names)
    return (replace(conversation, tools=tools), names) if tools else (conversation, ())


def estimate_lines(plan: Plan, timeout: float | None = None) -> list[str]:
    """What will be sent and what it may cost, in the words the page uses too."""
    if not plan.changed:
        return [f"the policy changed no request in {plural(plan.calls, 'call')}: nothing to probe"]
    lines = [f"the policy changed {plural(len(plan.changed), 'request')} of {plural(plan.calls, 'call')}; probing "
             f"{plural(len(plan.pairs), 'call')}: " + ", ".join(str(pair.number) for pair in plan.pairs)]
    if plan.over_budget:
        lines.append(f"left out by the token budget: {plural(len(plan.over_budget), 'call')} ("
                     + ", ".join(map(str, plan.over_budget)) + ")")
    wait = f"; each may take up to {timeout:g} s" if timeout else ""
    at_most = (f"${plan.cost:,.4f} at {plan.price.model} prices" if plan.price.known
               else f"a cost unknown ({plan.price.source})")
    lines.append(f"estimate: {plural(plan.requests, 'request')}, {plan.tokens:,} prompt tokens, at most "
                 f"{at_most}: every prompt token at the input price, no "
                 f"cache, and every reply its whole {plan.max_tokens:,} tokens{wait}")
    lines += [f"note: {note}" for note in plan.notes]
    return lines


def _json_value(text: Any) -> Any:
    """Arguments as values: JSON text parsed (so key order and spaces do not matter), else as sent."""
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def chat_action(reply: Any) -> Action:
    """The next step in a Chat Completions reply (the ``openai`` client's object)."""
    message = reply.choices[0].message
    calls = tuple((call.function.name, _json_value(call.function.arguments)) for call in message.tool_calls or ())
    return Action(calls, message.content or "")


def messages_action(reply: dict[str, Any]) -> Action:
    """The next step in a Messages API reply (its JSON): ``tool_use`` blocks, else the text."""
    blocks = [block for block in reply["content"] if isinstance(block, dict)]
    calls = tuple((str(block.get("name")), block.get("input")) for block in blocks if block.get("type") == "tool_use")
    return Action(calls, "".join(str(block.get("text", "")) for block in blocks if block.get("type") == "text"))


Send = Callable[[dict[str, Any], int], Action]  # a body and its size in bytes → the reply's next step


def size_of(body: dict[str, Any]) -> int:
    return len(json.dumps(body, ensure_ascii=False).encode("utf-8", "surrogatepass"))


def attempt(send: Send, body: dict[str, Any]) -> tuple[Action | None, str | None]:
    """One request sent: its reply's next step, or why there is none (the provider's error, with no
    key in it, or a reply with no message in it). No retries: the caller reports it and goes on."""
    try:
        return send(body, size_of(body)), None
    except LLMError as exc:
        return None, str(exc)
    except (AttributeError, IndexError, KeyError, TypeError):
        return None, "the reply has no message to read a next step from (malformed reply)"


def run(plan: Plan, send: Send, report: Callable[[Outcome], None] = lambda outcome: None) -> Probe:
    """Send each pair (as it was first: if that fails, the compacted one is not sent, since there
    would be nothing to compare it with) and compare the next actions. ``report`` sees each
    outcome as it comes, so a long run shows progress and failures at once."""
    outcomes: list[Outcome] = []
    sent = tokens = 0
    for pair in plan.pairs:
        actions: list[Action] = []
        error = None
        for side, body, prompt in (("as it was", pair.before, pair.tokens_before),
                                  ("as compacted", pair.after, pair.tokens_after)):
            sent, tokens = sent + 1, tokens + prompt
            action, failure = attempt(send, body)
            if action is None:
                error = f"{side}: {failure}"
                break
            actions.append(action)
        outcome = Outcome(pair.number, pair.index, error=error)
        if len(actions) == 2:
            before, after = actions
            ratio = None if before.tool_calls or after.tool_calls else (
                difflib.SequenceMatcher(None, before.text, after.text).ratio())
            outcome = replace(outcome, before=before, after=after, similarity=ratio)
        outcomes.append(outcome)
        report(outcome)
    return Probe(plan, tuple(outcomes), sent, tokens)


def probe_to_json(probe: Probe) -> dict[str, Any]:
    """The CLI's ``--json``: the calls and totals the issue names, and what failed."""
    calls = [{"index": o.index, "call": o.number, "same_action": o.same,
              "before": o.before.to_json() if o.before else None, "after": o.after.to_json() if o.after else None,
              **({"similarity": round(o.similarity, 4)} if o.similarity is not None else {}),
              **({"error": o.error} if o.error else {})} for o in probe.outcomes]
    agreement, plan = probe.agreement, probe.plan
    return {"calls": calls, "agreement": None if agreement is None else round(agreement, 4),
            "sent_requests": probe.sent_requests, "tokens_sent": probe.tokens_sent,
            "changed_calls": len(plan.changed), "text_threshold": TEXT_THRESHOLD,
            "estimate": {"requests": plan.requests, "tokens": plan.tokens, "cost_at_most": rounded(plan.cost, 6),
                         "prices": plan.price.model, "priced_as": plan.price.priced_as,
                         "over_budget": list(plan.over_budget)}}
