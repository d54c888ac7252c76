"""Building and editing a conversation item by item: each operation returns a new, checked
conversation (results still follow their calls, ids still pair) or raises InputError naming the
item and field — so the UI never holds an invalid request."""

from __future__ import annotations

import json
import secrets
import string
from dataclasses import dataclass, replace

from .. import formats
from ..conversation import Content, Conversation, Item, Message, ToolCall, ToolResult, content_text, link, pairs
from ..errors import InputError

KINDS = ("message", "tool_call", "tool_result")
ROLES = ("user", "assistant", "system", "developer")
ERROR_FLAG_FORMATS = ("anthropic", "native")  # Chat and Responses have no way to mark a failed tool
# Call ids as each API writes them: OpenAI's "call_" + 24 letters and digits, Anthropic's "toolu_" + 24.
# (A Responses function_call item's own "fc_" id is optional in a request, so only its call_id is made.)
ID_PREFIX = {"anthropic": "toolu_"}
ID_ALPHABET = string.ascii_letters + string.digits
ID_LENGTH = 24


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


def non_text_parts(item: Item) -> list[str]:
    """The kinds of the blocks the form cannot show (images, files…): editing keeps them."""
    content = item.content if isinstance(item, Message | ToolResult) else None
    return [part.type or "block" for part in content if part.text is None] if isinstance(content, tuple) else []


def edited_content(content: Content, text: str, where: str) -> Content:
    """``content`` with its text set to ``text``, never dropping a block that is not text.

    Unchanged text keeps the content exactly (an empty assistant message stays ``null``, an
    image stays an image). With one text block, only that block's text changes. Content with
    non-text blocks and no text block, or several text blocks, is refused with the reason: there
    is no single place the new text could go without guessing.
    """
    if text == content_text(content):
        return content
    if not isinstance(content, tuple):
        return text
    texts = [index for index, part in enumerate(content) if part.text is not None]
    if len(texts) == 1:
        parts = list(content)
        parts[texts[0]] = replace(parts[texts[0]], text=text)
        return tuple(parts)
    others = [part.type or "block" for part in content if part.text is None]
    if not others:
        return text  # text blocks only: one text holds the same
    why = "no text block to put it in" if not texts else f"{len(texts)} text blocks, so it is unclear which to change"
    raise InputError(f"this item also holds {', '.join(others)} content and has {why}; edit its text in the JSON "
                     "(Paste or upload) so nothing is lost", where=f"{where}.text")


def new_call_id(conversation: Conversation) -> str:
    """A fresh call id in the conversation's own style, unused in it."""
    taken = {item.call_id for item in conversation.items if isinstance(item, ToolCall | ToolResult)}
    prefix = ID_PREFIX.get(conversation.format, "call_")
    while True:
        candidate = prefix + "".join(secrets.choice(ID_ALPHABET) for _ in range(ID_LENGTH))
        if candidate not in taken:
            return candidate


def make_item(fields: Fields, where: str, original: Item | None = None) -> Item:
    """The item the form describes. Editing keeps what the form does not show (extra keys and
    blocks that are not text)."""
    if fields.kind == "message":
        if fields.role not in ROLES:
            raise InputError(f"role must be one of {', '.join(ROLES)}", where=f"{where}.role", value=fields.role)
        if isinstance(original, Message):
            return replace(original, role=fields.role, content=edited_content(original.content, fields.text, where))
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
            return replace(original, call_id=fields.call_id.strip(), is_error=fields.is_error,
                           content=edited_content(original.content, fields.text, where))
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
    """A new item at ``position`` (``len(items)`` appends). A new call without an id gets one."""
    if fields.kind == "tool_call" and not fields.call_id.strip():
        fields = replace(fields, call_id=new_call_id(conversation))
    items = list(conversation.items)
    items.insert(position, make_item(fields, _item_label(position)))
    return checked(conversation, items)


def call_at(conversation: Conversation, position: int) -> int | None:
    """The call a selected item stands for, if it still waits for its result: the call itself,
    or for an assistant message that carries calls (how Chat and Anthropic hold them) its first
    call without a result."""
    items, answered = conversation.items, pairs(conversation.items)
    if isinstance(items[position], ToolCall):
        return None if position in answered else position
    if not (isinstance(items[position], Message) and items[position].role == "assistant"):
        return None
    following = position + 1
    while following < len(items) and isinstance(items[following], ToolCall):
        if following not in answered:
            return following
        following += 1
    return None


def answer_position(conversation: Conversation, call: int) -> int:
    """Where the result of the call at ``call`` goes: after its run of calls (one assistant turn)
    and the results already given to them, so it can never land before its call."""
    items = conversation.items
    position = call + 1
    while position < len(items) and isinstance(items[position], ToolCall):
        position += 1
    while position < len(items) and isinstance(items[position], ToolResult):
        position += 1
    return position


def add_result(conversation: Conversation, call: int, text: str, is_error: bool = False) -> tuple[Conversation, int]:
    """One action: the result of the call at ``call``, paired by its id, in the right place.
    Returns the conversation and the new result's position."""
    item = conversation.items[call]
    if not isinstance(item, ToolCall):
        raise InputError("not a tool call", where=_item_label(call))
    position = answer_position(conversation, call)
    fields = Fields("tool_result", "tool", text, item.name, item.call_id, is_error=is_error)
    return insert_item(conversation, position, fields), position


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


def result_insert_position(conversation: Conversation, selected: int | None, call_id: str) -> int:
    """Where the form's new result goes: after the selected item, but never before the call it
    answers (the selection may be the assistant message that carries that call)."""
    after = len(conversation.items) if selected is None else selected + 1
    calls = [p for p, item in enumerate(conversation.items) if isinstance(item, ToolCall) and item.call_id == call_id]
    return max(after, answer_position(conversation, calls[-1])) if calls else after


def answerable_calls(conversation: Conversation, selected: int | None) -> list[ToolCall]:
    """The calls a result added after ``selected`` can answer: open calls up to it, and the calls
    of the turn it starts (a selected assistant message's own calls come right after it)."""
    items = conversation.items
    end = len(items) if selected is None else selected + 1
    while end < len(items) and isinstance(items[end], ToolCall):
        end += 1
    return open_calls(conversation, end)


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

