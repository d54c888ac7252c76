"""Building and editing a conversation item by item: each operation returns a new, checked
conversation (results still follow their calls, ids still pair) or raises InputError naming the
item and field — so the UI never holds an invalid request."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace

from . import formats
from .errors import InputError
from .model import Conversation, Item, Message, ToolCall, ToolResult, content_text, link, pairs

KINDS = ("message", "tool_call", "tool_result")
ROLES = ("user", "assistant", "system", "developer")
ERROR_FLAG_FORMATS = ("anthropic", "native")  # Chat and Responses have no way to mark a failed tool


@dataclass(frozen=True)
class Fields:
    """An item as the editing form shows it: every value is text."""

    kind: str
    role: str = "user"
    text: str = ""  # message or result content
    tool: str = ""
    call_id: str = ""
    arguments: str = "{}"
    is_error: bool = False


def fields_of(item: Item) -> Fields:
    if isinstance(item, ToolCall):
        parsed = item.parsed_arguments()
        arguments = json.dumps(dict(parsed), ensure_ascii=False, indent=2) if parsed is not None else item.arguments
        return Fields("tool_call", "assistant", tool=item.name, call_id=item.call_id, arguments=arguments)
    if isinstance(item, ToolResult):
        return Fields("tool_result", "tool", content_text(item.content), item.name, item.call_id,
                      is_error=item.is_error)
    return Fields("message", item.role, content_text(item.content))


def _arguments(text: str, where: str) -> str:
    """Arguments text that must be a JSON object; kept compact, as the APIs send it."""
    try:
        value = json.loads(text or "{}")
    except json.JSONDecodeError as exc:
        raise InputError(f"arguments are not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})",
                         where=f"{where}.arguments") from None
    if not isinstance(value, dict):
        raise InputError("arguments must be a JSON object, like {\"path\": \"a.py\"}", where=f"{where}.arguments",
                         value=value)
    return json.dumps(value, ensure_ascii=False)


def make_item(fields: Fields, where: str, original: Item | None = None) -> Item:
    """The item the form describes. Editing keeps what the form does not show (extra keys)."""
    if fields.kind == "message":
        if fields.role not in ROLES:
            raise InputError(f"role must be one of {', '.join(ROLES)}", where=f"{where}.role", value=fields.role)
        if isinstance(original, Message):
            return replace(original, role=fields.role, content=fields.text)
        return Message(role=fields.role, content=fields.text)
    if not fields.tool.strip():
        raise InputError("a tool name is required", where=f"{where}.tool")
    if not fields.call_id.strip():
        raise InputError("a call id is required", where=f"{where}.call_id")
    if fields.kind == "tool_call":
        arguments = _arguments(fields.arguments, where)
        if isinstance(original, ToolCall):
            return replace(original, name=fields.tool.strip(), call_id=fields.call_id.strip(), arguments=arguments)
        return ToolCall(call_id=fields.call_id.strip(), name=fields.tool.strip(), arguments=arguments)
    if fields.kind == "tool_result":
        if isinstance(original, ToolResult):
            return replace(original, call_id=fields.call_id.strip(), content=fields.text, is_error=fields.is_error)
        return ToolResult(call_id=fields.call_id.strip(), name=fields.tool.strip(), content=fields.text,
                          is_error=fields.is_error)
    raise InputError(f"kind must be one of {', '.join(KINDS)}", where=f"{where}.kind", value=fields.kind)


def checked(conversation: Conversation, items: list[Item]) -> Conversation:
    """The conversation with ``items``, checked (every result answers an earlier call; errors
    name the item's position) and written and read back in its format, so origins are renumbered."""
    if conversation.format not in ERROR_FLAG_FORMATS and any(
            isinstance(item, ToolResult) and item.is_error for item in items):
        raise InputError(f"the {formats.TITLES[conversation.format]} format cannot mark a tool result as an "
                         "error (Anthropic and native can)")
    link(replace(item, origin=None) for item in items)  # raises naming "item N"
    return formats.rewritten(conversation.with_items(items))


def _item_label(position: int) -> str:
    return f"item {position}"


def replace_item(conversation: Conversation, position: int, fields: Fields) -> Conversation:
    items = list(conversation.items)
    old = items[position]
    new = make_item(fields, _item_label(position), old)
    items[position] = new
    if isinstance(old, ToolCall) and isinstance(new, ToolCall) and old.call_id != new.call_id:
        # The results that answered this call follow it to its new id.
        answer = pairs(conversation.items).get(position)
        if answer is not None:
            items[answer] = replace(items[answer], call_id=new.call_id)  # type: ignore[type-var]
    return checked(conversation, items)


def insert_item(conversation: Conversation, position: int, fields: Fields) -> Conversation:
    """A new item at ``position`` (``len(items)`` appends)."""
    items = list(conversation.items)
    items.insert(position, make_item(fields, _item_label(position)))
    return checked(conversation, items)


def delete_item(conversation: Conversation, position: int) -> Conversation:
    item = conversation.items[position]
    answer = pairs(conversation.items).get(position) if isinstance(item, ToolCall) else None
    if answer is not None:
        raise InputError(f"item {answer} is this call's result: delete it first", where=_item_label(position))
    return checked(conversation, [i for p, i in enumerate(conversation.items) if p != position])


def move_item(conversation: Conversation, position: int, offset: int) -> Conversation:
    target = position + offset
    if not 0 <= target < len(conversation.items):
        raise InputError("cannot move past either end", where=_item_label(position))
    items = list(conversation.items)
    items[position], items[target] = items[target], items[position]
    return checked(conversation, items)


def open_calls(conversation: Conversation, position: int) -> list[ToolCall]:
    """Calls before ``position`` that have no result yet: what a new result can answer."""
    answered = pairs(conversation.items)
    return [item for p, item in enumerate(conversation.items[:position])
            if isinstance(item, ToolCall) and p not in answered]


def empty(format: str, model: str | None = None) -> Conversation:
    return Conversation(items=(), format=format, model=model)


def describe(item: Item, limit: int = 60) -> str:
    """A one-line label for pickers: role, tool and the start of the text."""
    if isinstance(item, ToolCall):
        text = f"{item.name}({item.arguments})"
    elif isinstance(item, ToolResult):
        text = f"{item.name} → {content_text(item.content)}"
    else:
        text = f"{item.role}: {content_text(item.content)}"
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"

