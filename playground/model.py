"""The conversation model: one immutable shape for every wire format we read and write.

A conversation is a flat sequence of items, as in the book's ``request.contents``: messages,
tool calls and tool results. Each item remembers where it came from in the input (``Origin``)
and keeps the wire keys we do not model (``extra``), so exporting gives back the input.
"""

from __future__ import annotations

import enum
import functools
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from .errors import InputError

JsonObject = Mapping[str, Any]
EMPTY: JsonObject = MappingProxyType({})


def _empty() -> JsonObject:
    return EMPTY


def frozen(mapping: Mapping[str, Any] | None) -> JsonObject:
    """A read-only view of a shallow copy, for the ``extra`` fields of frozen items."""
    return MappingProxyType(dict(mapping)) if mapping else EMPTY


class Absent(enum.Enum):
    """A content key the wire message did not have at all (Chat assistants with tool calls
    often omit it), kept apart from an explicit ``null`` so exports give back the input."""

    ABSENT = "absent"


ABSENT = Absent.ABSENT


@dataclass(frozen=True)
class Part:
    """One block of multi-part content. Only text is modelled; other blocks ride along."""

    type: str
    text: str | None = None
    extra: JsonObject = field(default_factory=_empty)


Content = str | tuple[Part, ...] | None | Absent


def content_text(content: Content) -> str:
    """The text a model reads from ``content``: text parts joined, other parts skipped."""
    if isinstance(content, str):
        return content
    if isinstance(content, tuple):
        return "".join(part.text for part in content if part.text is not None)
    return ""


def has_non_text(content: Content) -> bool:
    """Whether content holds blocks (images, files…) whose tokens we cannot count offline."""
    return isinstance(content, tuple) and any(part.text is None for part in content)


@dataclass(frozen=True, order=True)
class Origin:
    """Where an item sits in the input: ``index`` in the input's own list (``messages`` or
    ``input``) and, when one message holds several blocks or calls, ``block`` within it."""

    index: int
    block: int | None = None

    def __str__(self) -> str:
        return f"item {self.index}" if self.block is None else f"item {self.index}, block {self.block}"


@dataclass(frozen=True, kw_only=True)
class Message:
    """Text (or other content) from one role: system, developer, user or assistant."""

    role: str
    content: Content
    name: str | None = None
    origin: Origin | None = None
    extra: JsonObject = field(default_factory=_empty)


@dataclass(frozen=True, kw_only=True)
class ToolCall:
    """The assistant asking for a tool. ``arguments`` is JSON text, as the APIs send it."""

    call_id: str
    name: str
    arguments: str
    origin: Origin | None = None
    extra: JsonObject = field(default_factory=_empty)

    def parsed_arguments(self) -> JsonObject | None:
        """The arguments as a read-only object, or None when they are not a JSON object
        (models do sometimes emit malformed arguments; we keep those untouched)."""
        return self._parsed

    @functools.cached_property
    def _parsed(self) -> JsonObject | None:
        # Parsed once per call item (compaction and the page ask many times per rerun); the cache
        # lives and dies with the item, so no session's arguments outlive it in a module global.
        # (A frozen dataclass still allows this: cached_property writes the instance __dict__.)
        try:
            value = json.loads(self.arguments)
        except (ValueError, RecursionError):
            return None
        return MappingProxyType(value) if isinstance(value, dict) else None


@dataclass(frozen=True, kw_only=True)
class ToolResult:
    """What a tool returned. ``name`` is the tool's name, resolved from the matching call."""

    call_id: str
    content: Content
    name: str = ""
    is_error: bool = False
    origin: Origin | None = None
    extra: JsonObject = field(default_factory=_empty)


Item = Message | ToolCall | ToolResult


@dataclass(frozen=True)
class Tool:
    """A tool definition offered to the model. ``kind`` is "function" for the functions we can
    count; hosted tools (web search, …) keep their whole wire form in ``extra``."""

    name: str
    description: str = ""
    parameters: JsonObject | None = None
    kind: str = "function"
    extra: JsonObject = field(default_factory=_empty)


@dataclass(frozen=True)
class Conversation:
    """A request: the items, plus what surrounds them in the wire format.

    ``instructions`` holds text that lives outside the item list (Anthropic ``system``,
    Responses ``instructions``); Chat system messages stay items. ``extra`` keeps every other
    request key (``tool_choice``, ``temperature``…) for export; ``bare`` marks input that was a
    bare list of messages rather than a request body. ``source`` names the agent log a conversation
    was read from (``format`` is then the API format it is written back in).
    """

    items: tuple[Item, ...]
    format: str = "native"
    model: str | None = None
    instructions: Content = None
    tools: tuple[Tool, ...] = ()
    extra: JsonObject = field(default_factory=_empty)
    bare: bool = False
    notes: tuple[str, ...] = field(default=(), compare=False)
    source: str = ""  # the agent log it was read from (claude-code, codex, …); empty for an API request

    def with_items(self, items: Iterable[Item]) -> Conversation:
        return replace(self, items=tuple(items))


def role_of(item: Item) -> str:
    """The role an item speaks with: tool calls are the assistant's, results the tool's."""
    if isinstance(item, Message):
        return item.role
    return "assistant" if isinstance(item, ToolCall) else "tool"


def turn_starts(items: Sequence[Item]) -> list[int]:
    """Positions where an assistant turn begins (an assistant item after a non-assistant one): in
    a run, each is one LLM call's reply."""
    return [p for p, item in enumerate(items)
            if role_of(item) == "assistant" and (p == 0 or role_of(items[p - 1]) != "assistant")]


def turn_end(items: Sequence[Item], start: int) -> int:
    """Where the assistant turn beginning at ``start`` ends (the position after its last item)."""
    end = start
    while end < len(items) and role_of(items[end]) == "assistant":
        end += 1
    return end


def item_kind(item: Item) -> str:
    """``message``, ``call`` or ``result``: the words reports and the UI use."""
    if isinstance(item, Message):
        return "message"
    return "call" if isinstance(item, ToolCall) else "result"


def tool_name(item: Item) -> str | None:
    return item.name if isinstance(item, ToolCall | ToolResult) else None


def link(items: Iterable[Item], where: Any = str) -> tuple[Item, ...]:
    """Give each tool result the name of the most recent earlier call with its id.

    Real traces reuse call ids, so we pair with the latest call rather than reject the file.
    A result whose id matches no earlier call is an error; ``where`` turns an item's origin
    into the location named in that error.
    """
    latest: dict[str, str] = {}
    linked: list[Item] = []
    for position, item in enumerate(items):
        if isinstance(item, ToolCall):
            latest[item.call_id] = item.name
        elif isinstance(item, ToolResult):
            name = latest.get(item.call_id)
            if name is None:
                location = where(item.origin) if item.origin else f"item {position}"
                raise InputError("tool result's call id matches no earlier tool call", where=location,
                                 value=item.call_id)
            linked.append(replace(item, name=name) if item.name != name else item)
            continue
        linked.append(item)
    return tuple(linked)


def pairs(items: tuple[Item, ...]) -> dict[int, int]:
    """Map each tool call's position to the position of the result that answers it.

    A result answers the most recent earlier call with its id, so a reused id pairs correctly.
    Calls with no result yet are absent from the map.
    """
    open_calls: dict[str, int] = {}
    answered: dict[int, int] = {}
    for position, item in enumerate(items):
        if isinstance(item, ToolCall):
            open_calls[item.call_id] = position
        elif isinstance(item, ToolResult) and item.call_id in open_calls:
            answered.setdefault(open_calls[item.call_id], position)
    return answered
