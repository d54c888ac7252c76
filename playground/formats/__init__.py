"""Reading and writing conversations: JSON text → wire data → Conversation, and back.

Each format module offers ``looks_like`` (a detection score), ``read``, ``write`` and
``where`` (an item's location in that format's own terms, for error messages).
"""

from __future__ import annotations

import json
from dataclasses import replace
from types import ModuleType
from typing import Any

from ..errors import InputError
from ..model import ABSENT, EMPTY, Content, Conversation, Item, Message, ToolCall, content_text
from . import anthropic, chat, native, responses

FORMATS: dict[str, ModuleType] = {module.NAME: module for module in (chat, responses, anthropic, native)}
TITLES = {name: module.TITLE for name, module in FORMATS.items()}
MAX_DEPTH = 64  # deeper than any real request; keeps every later walk far from the recursion limit


def parse_json(text: str | bytes) -> Any:
    """JSON text to data, with errors that give line and column."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise InputError("not UTF-8 text", where=f"byte {exc.start}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON: {exc.msg}", where=f"line {exc.lineno}, column {exc.colno}") from None
    except RecursionError:
        line, column = _depth_position(text, MAX_DEPTH)
        raise InputError(f"JSON nested more than {MAX_DEPTH} levels deep",
                         where=f"line {line}, column {column}") from None
    _check_depth(data)
    return data


def _check_depth(data: Any) -> None:
    """Reject data nested deeper than MAX_DEPTH, naming the path that goes too deep."""
    stack: list[tuple[Any, int, str]] = [(data, 1, "")]
    while stack:
        value, depth, path = stack.pop()
        if depth > MAX_DEPTH:
            raise InputError(f"JSON nested more than {MAX_DEPTH} levels deep", where=path or "document")
        if isinstance(value, dict):
            stack.extend((child, depth + 1, f"{path}.{key}" if path else str(key)) for key, child in value.items())
        elif isinstance(value, list):
            stack.extend((child, depth + 1, f"{path}[{i}]") for i, child in enumerate(value))


def _depth_position(text: str, limit: int) -> tuple[int, int]:
    """Line and column where brackets (outside strings) first nest deeper than ``limit``."""
    depth, in_string, escaped, line, column = 0, False, False, 1, 0
    for char in text:
        column += 1
        if char == "\n":
            line, column = line + 1, 0
        elif in_string:
            escaped = not escaped and char == "\\"
            in_string = escaped or char != '"'
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > limit:
                return line, column
        elif char in "]}":
            depth -= 1
    return line, column


def detect(data: Any) -> str:
    """The format ``data`` is in: the best-scoring reader, or an error listing what we accept."""
    scores = {name: module.looks_like(data) for name, module in FORMATS.items()}
    best = max(scores, key=lambda name: scores[name])
    if scores[best] == 0:
        raise InputError(
            "unrecognised format: expected a Chat Completions message list or request "
            "(messages), a Responses request (input), an Anthropic Messages request "
            "(system/messages with content blocks) or a compaction-playground document (items)"
        )
    return best


def read(data: Any, format: str | None = None) -> Conversation:
    """Wire data to a Conversation, in ``format`` or the detected one."""
    name = format or detect(data)
    if name not in FORMATS:
        raise InputError(f"unknown format (choose one of {', '.join(FORMATS)})", value=name)
    return FORMATS[name].read(data)


def loads(text: str | bytes, format: str | None = None) -> Conversation:
    return read(parse_json(text), format)


def write(conversation: Conversation, format: str | None = None) -> Any:
    """A Conversation to wire data in its own format, or converted to ``format``."""
    name = format or conversation.format
    if name not in FORMATS:
        raise InputError(f"unknown format (choose one of {', '.join(FORMATS)})", value=name)
    if name != conversation.format:
        conversation = _portable(conversation, name)
    return FORMATS[name].write(conversation)


def dumps(conversation: Conversation, format: str | None = None) -> str:
    return json.dumps(write(conversation, format), ensure_ascii=False, indent=2)


def where(conversation: Conversation, item: Item) -> str:
    """An item's location in its conversation's own format (``messages[3].content[1]``…)."""
    module = FORMATS.get(conversation.format, native)
    return module.where(item.origin) if item.origin else "new item"


def _plain(content: Content) -> Content:
    if content is ABSENT:
        return None
    return tuple(replace(part, extra=EMPTY) for part in content) if isinstance(content, tuple) else content


def _strip(item: Item) -> Item:
    if isinstance(item, ToolCall):
        return replace(item, origin=None, extra=EMPTY)
    return replace(item, origin=None, extra=EMPTY, content=_plain(item.content))


def _is_system(item: Item) -> bool:
    return isinstance(item, Message) and item.role in ("system", "developer")


def _portable_item(item: Item) -> bool:
    """Whether an item means something in every format: not an empty envelope (a Chat
    assistant message that only carried tool calls), not a Responses-only item."""
    if not isinstance(item, Message):
        return True
    return item.content not in (None, ABSENT) and item.extra.get("type", "message") == "message"


def _portable(conversation: Conversation, target: str) -> Conversation:
    """The conversation as another format can hold it: without the source format's own keys
    and items (reasoning, hosted tool calls), with system text where the target keeps it."""
    items = [_strip(item) for item in conversation.items if _portable_item(item)]
    instructions = _plain(conversation.instructions)
    if target == "anthropic":  # no system role among the messages: it all goes to `system`
        texts = [content_text(instructions)] + [content_text(item.content) for item in items if _is_system(item)]
        instructions = "\n\n".join(text for text in texts if text) or None
        items = [item for item in items if not _is_system(item)]
    elif target == "chat" and instructions is not None:  # no instructions field: a leading system message
        items.insert(0, Message(role="system", content=instructions))
        instructions = None
    tools = tuple(replace(tool, extra=EMPTY) for tool in conversation.tools if tool.kind == "function")
    return replace(conversation, format=target, items=tuple(items), tools=tools, extra=EMPTY, bare=False,
                   instructions=instructions)
