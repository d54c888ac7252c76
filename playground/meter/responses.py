"""What only an OpenAI Responses request holds, and how the API bills it: custom tools, hosted
tools, reasoning items sent back, and overheads the bill carried only for a while.

OpenAI publishes none of it. The rules here were fitted on recorded requests with what the API billed
(``shared/fixtures/token-counts/responses_recorded_cases.json`` and ``tests/recorded-bills/responses.json``):

- a ``custom`` tool costs its name, description and grammar text plus a fitted constant (another when
  its format is a grammar);
- hosted tools (web search, file search, computer use, MCP, code interpreter…) bring instructions and
  results the body does not hold: each is named in the estimate, never counted silently;
- reasoning items after the last user message (the current turn of a tool loop) are billed as the
  reasoning they carry — OpenAI drops earlier turns' reasoning, and the recordings agree (an earlier
  item adds nothing). Encrypted content is estimated from its length; an item sent by id alone holds
  nothing to count and the estimate says so;
- some families' bills changed over time (``accounting.RESPONSES_DATED``): a dated request gets what
  its date was billed, an undated one today's rule and a note.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from ..conversation import Conversation, Item, Message, Tool
from .accounting import RESPONSES, RESPONSES_DATED, DatedOverhead

Counter = Callable[[str], int]

def custom_features(tools: tuple[Tool, ...], raw: Counter) -> tuple[int, dict[str, float]]:
    """Custom tools: the tokens of their text (name, description, grammar definition) and how many
    of each fitted constant they add."""
    text, features = 0, {"custom_tool": 0.0, "custom_grammar": 0.0}
    for tool in tools:
        if tool.kind != "custom":
            continue
        form = tool.extra.get("format")
        definition = form.get("definition") if isinstance(form, Mapping) else None
        text += raw(tool.name) + raw(tool.description) + (raw(definition) if isinstance(definition, str) else 0)
        features["custom_tool"] += 1
        if isinstance(form, Mapping) and form.get("type") == "grammar":
            features["custom_grammar"] += 1
    return text, {name: value for name, value in features.items() if value}


# Request fields that make the provider bill what it stored, which the body does not hold.
_STORED = {"previous_response_id": "the earlier response's input and output",
           "conversation": "the stored conversation's items", "prompt": "the stored prompt template"}


def stored_notes(conversation: Conversation) -> list[str]:
    """Say what the provider adds from its own storage: never a silent zero."""
    notes = [f"estimate: {field} given: the provider bills {what}, which the body does not hold; not counted"
             for field, what in _STORED.items() if conversation.extra.get(field)]
    references = sum(1 for item in conversation.items if isinstance(item, Message)
                     and item.extra.get("type") == "item_reference")
    if references:
        notes.append(f"estimate: {references} item{'s' if references != 1 else ''} sent by reference "
                     "(item_reference): the provider bills the stored item, which the body does not hold; not counted")
    return notes


def hosted_notes(tools: tuple[Tool, ...]) -> list[str]:
    """One note naming every tool whose prompt the API adds itself (none of it is in the body)."""
    hosted = sorted({tool.kind for tool in tools if tool.kind not in ("function", "custom")})
    if not hosted:
        return []
    return [f"hosted tools not countable from the body (the API adds their instructions and results): "
            f"{', '.join(hosted)}"]


def current_reasoning(items: tuple[Item, ...]) -> frozenset[int]:
    """Positions of reasoning items after the last user message: the ones the API bills."""
    last_user = max((i for i, item in enumerate(items) if ends_turn(item)), default=-1)
    return frozenset(i for i, item in enumerate(items) if i > last_user and is_reasoning(item))


def ends_turn(item: Item) -> bool:
    """A user message (not another item that has a role): reasoning before it is no longer billed."""
    return isinstance(item, Message) and item.role == "user" and item.extra.get("type", "message") == "message"


def is_reasoning(item: Item) -> bool:
    return _reasoning(item) is not None


def _reasoning(item: Item) -> Mapping | None:
    """The fields of a reasoning item (None for any other item)."""
    if not isinstance(item, Message) or item.extra.get("type") != "reasoning" or not isinstance(item.content, tuple):
        return None
    return item.content[0].extra


def encrypted_length(item: Item) -> int:
    """Characters of a reasoning item's encrypted content (0 when it has none)."""
    fields = _reasoning(item)
    content = fields.get("encrypted_content") if fields is not None else None
    return len(content) if isinstance(content, str) else 0


def summary_text(item: Item) -> str:
    """The visible summary a reasoning item carries (billed with it in the current turn)."""
    fields = _reasoning(item)
    summary = fields.get("summary") if fields is not None else None
    if not isinstance(summary, tuple | list):
        return ""
    return "\n".join(part.get("text", "") for part in summary if isinstance(part, Mapping)
                     and isinstance(part.get("text"), str))


def reasoning_features(items: tuple[Item, ...], raw: Counter) -> dict[str, float]:
    """How much of each fitted reasoning constant the billed reasoning items hold."""
    billed = [items[i] for i in current_reasoning(items) if encrypted_length(items[i])]
    if not billed:
        return {}
    return {"reasoning_item": float(len(billed)), "reasoning_char": float(sum(map(encrypted_length, billed))),
            "reasoning_summary": float(sum(raw(summary_text(item)) for item in billed))}


def reasoning_tokens(item: Item, raw: Counter) -> int:
    """Tokens estimated for one billed reasoning item: 0 when it carries no encrypted content."""
    length = encrypted_length(item)
    if not length:
        return 0
    return max(0, round(RESPONSES["reasoning_item"] + RESPONSES["reasoning_char"] * length
                        + RESPONSES["reasoning_summary"] * raw(summary_text(item))))


def reasoning_notes(items: tuple[Item, ...]) -> list[str]:
    """Say how each kind of reasoning item sent back was counted."""
    current = current_reasoning(items)
    encrypted = sum(1 for i in current if encrypted_length(items[i]))
    by_id = len(current) - encrypted
    earlier = sum(1 for i, item in enumerate(items) if i not in current and _reasoning(item) is not None)
    notes = []
    if encrypted:
        notes.append(f"estimate: {_items(encrypted)} of the current turn with encrypted content, billed as their "
                     "reasoning: estimated from its length (fitted on billed counts)")
    if by_id:
        notes.append(f"estimate: {_items(by_id)} of the current turn sent without encrypted content (by id): the "
                     "provider bills their stored reasoning, which the body does not hold; not counted")
    if earlier:
        notes.append(f"{_items(earlier)} from earlier turns: not billed (OpenAI drops reasoning from before the "
                     "last user message)")
    return notes


def _items(count: int) -> str:
    return f"{count} reasoning item{'s' if count != 1 else ''}"


def dated(conversation: Conversation, model: str) -> tuple[int, list[str]]:
    """Tokens the request's date was billed beyond today's rule, and what the estimate should say."""
    applying = _applying(conversation, model)
    if not applying:
        return 0, []
    date = _date(conversation)
    if not date:
        until = min(rule.until for rule in applying)
        return 0, [f"{model} requests were billed {_tokens(applying)} more before {until} (recorded bills): this "
                   "request has no date, counted by today's rule"]
    past = [rule for rule in applying if date < rule.until]
    return _tokens(past), [
        f"{model} on {date}: {_tokens((rule,))} tokens the API billed then for {rule.applies.replace('_', ' ')} "
        f"(until {rule.until}; fitted on recordings: {rule.evidence})" for rule in past]


def dated_features(conversation: Conversation, model: str) -> dict[str, float]:
    """The dated constants a request of its date holds (for refitting)."""
    date = _date(conversation)
    return {rule.constant: 1.0 for rule in _applying(conversation, model) if date and date < rule.until}


def _applying(conversation: Conversation, model: str) -> list[DatedOverhead]:
    return [rule for rule in RESPONSES_DATED
            if model.lower().startswith(rule.prefixes) and _applies(rule, conversation)]


def _date(conversation: Conversation) -> str:
    return (conversation.started or "")[:10]


def _tokens(rules: Iterable[DatedOverhead]) -> int:
    return round(sum(RESPONSES[rule.constant] for rule in rules))


def _applies(rule: DatedOverhead, conversation: Conversation) -> bool:
    if rule.applies == "strict_tools":
        return any(tool.kind == "function" and tool.extra.get("strict") is True for tool in conversation.tools)
    if rule.applies == "reasoning_effort":
        reasoning = conversation.extra.get("reasoning")
        return isinstance(reasoning, Mapping) and reasoning.get("effort") is not None
    return True
