"""Anthropic Messages: ``{system, messages, tools}`` with content blocks.

A message with string content is one Message item. A message with a block list becomes one
item per block (origin ``block`` = its position): ``text`` and other blocks are Messages,
``tool_use`` a ToolCall, ``tool_result`` a ToolResult (``is_error`` → ``is_error``).
"""

from __future__ import annotations

import json
from typing import Any

from ..conversation import Conversation, Item, Message, Origin, Tool, ToolCall, ToolResult, link, role_of
from ..errors import InputError
from ._wire import (
    check,
    each_object,
    fresh_arguments,
    function_fields,
    has_block,
    maybe,
    need,
    put_content,
    read_content,
    read_parts,
    read_tool,
    rest,
    write_part,
)
from .convert import RAW_ARGUMENTS

NAME = "anthropic"
TITLE = "Anthropic Messages"


def where(origin: Origin) -> str:
    return f"messages[{origin.index}]" + ("" if origin.block is None else f".content[{origin.block}]")


def looks_like(data: Any) -> int:
    if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
        return 0
    score = 3 if "system" in data or str(data.get("model", "")).startswith("claude") else 1
    for message in data["messages"]:
        if not isinstance(message, dict):
            return 0
        if message.get("role") in ("tool", "system", "developer") or "tool_calls" in message:
            return 0
        if has_block(message, "tool_use", "tool_result"):
            score = 4
    if any(isinstance(t, dict) and "input_schema" in t for t in data.get("tools") or []):
        score = max(score, 4)
    return score


def _read_block(block: dict, role: str, index: int, position: int, place: str) -> Item:
    kind = block.get("type")
    origin = Origin(index, position)
    if kind == "tool_use":
        return ToolCall(
            call_id=need(block, "id", str, place),
            name=need(block, "name", str, place),
            arguments=json.dumps(need(block, "input", dict, place), ensure_ascii=False),
            origin=origin,
            extra=rest(block, "type", "id", "name", "input"),
        )
    if kind == "tool_result":
        is_error = maybe(block, "is_error", bool, place)
        modelled = ("type", "tool_use_id", "content") + (("is_error",) if is_error else ())
        return ToolResult(
            call_id=need(block, "tool_use_id", str, place),
            content=read_content(block, "content", place),
            is_error=bool(is_error),
            origin=origin,
            extra=rest(block, *modelled),
        )
    return Message(role=role, content=read_parts([block], place), origin=origin)


def _read_message(message: dict, index: int, place: str) -> list[Item]:
    role = need(message, "role", str, place)
    content = message.get("content")
    if isinstance(content, str):
        return [Message(role=role, content=content, origin=Origin(index))]
    blocks = need(message, "content", list, place)
    if not blocks:
        return [Message(role=role, content=(), origin=Origin(index))]
    items = []
    for position, block in enumerate(blocks):
        at = f"{place}.content[{position}]"
        item = _read_block(check(block, dict, at), role, index, position, at)
        if (isinstance(item, ToolCall) and role != "assistant") or (isinstance(item, ToolResult) and role != "user"):
            kind = "tool_use" if isinstance(item, ToolCall) else "tool_result"
            raise InputError(f"a {kind} block cannot appear in a {role} message", where=at)
        items.append(item)
    return items


def read_items(messages: list, start: int = 0, latest: dict[str, str] | None = None) -> tuple[Item, ...]:
    """The items of ``messages`` from its index ``start`` on, linked after the calls so far
    (``latest``): a list that only grows is read as it grows (``chat.read_items``)."""
    items: list[Item] = []
    for group in each_object(messages, "messages", _read_message, start):
        items.extend(group)
    return link(items, where, latest)


def read(data: Any) -> Conversation:
    body = check(data, dict, "request")
    messages = need(body, "messages", list, "request")
    items = read_items(messages)
    system = body.get("system")
    if isinstance(system, list):
        instructions: Any = read_parts(system, "system")
    else:
        instructions = maybe(body, "system", str, "request")
    tools = each_object(maybe(body, "tools", list, "request") or [], "tools",
                        lambda t, _, at: read_tool(t, t, "input_schema", at))
    return Conversation(
        items=items,
        format=NAME,
        model=maybe(body, "model", str, "request"),
        instructions=instructions,
        tools=tuple(tools),
        extra=rest(body, "messages", "model", "system", "tools"),
    )


def _write_blocks(item: Item) -> list[dict[str, Any]]:
    if isinstance(item, ToolCall):
        parsed = fresh_arguments(item)  # `input` must be an object: other text is kept, not emptied
        return [{"type": "tool_use", "id": item.call_id, "name": item.name,
                 "input": parsed if parsed is not None else {RAW_ARGUMENTS: item.arguments}, **item.extra}]
    if isinstance(item, ToolResult):
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": item.call_id}
        put_content(block, "content", item.content)
        if item.is_error:
            block["is_error"] = True
        block.update(item.extra)
        return [block]
    if isinstance(item.content, tuple):
        return [write_part(part) for part in item.content]
    return [{"type": "text", "text": item.content}] if isinstance(item.content, str) else []


def _wire_role(item: Item) -> str:
    role = role_of(item)
    return "user" if role == "tool" else role


def _same_message(last: Item, item: Item) -> bool:
    """Imported items share a wire message when they share an origin index; items made here
    (no origin) join the message before them when they speak with the same role."""
    if item.origin is None and last.origin is None:
        return _wire_role(item) == _wire_role(last)
    return item.origin is not None and last.origin is not None and item.origin.index == last.origin.index


def _groups(items: tuple[Item, ...]) -> list[list[Item]]:
    groups: list[list[Item]] = []
    for item in items:
        if groups and _same_message(groups[-1][-1], item):
            groups[-1].append(item)
        else:
            groups.append([item])
    return groups


def _write_message(group: list[Item]) -> dict[str, Any]:
    head = group[0]
    whole = len(group) == 1 and isinstance(head, Message) and (head.origin is None or head.origin.block is None)
    if whole and not isinstance(head.content, tuple):
        return {"role": head.role, "content": head.content if isinstance(head.content, str) else ""}
    return {"role": _wire_role(head), "content": [block for item in group for block in _write_blocks(item)]}


def _write_tool(tool: Tool) -> dict[str, Any]:
    return dict(tool.extra) if tool.extra else function_fields(tool, "input_schema")


def write_messages(items: tuple[Item, ...]) -> list[dict[str, Any]]:
    """The items as wire messages: the blocks of one message (one origin index) regrouped."""
    return [_write_message(group) for group in _groups(items)]


def begins_message(items: tuple[Item, ...], position: int) -> bool:
    """The item at ``position`` (after the first) begins a wire message: ``write_messages`` of the
    items from there is the tail of theirs."""
    return not _same_message(items[position - 1], items[position])


def write(conversation: Conversation) -> Any:
    body: dict[str, Any] = {}
    if conversation.model is not None:
        body["model"] = conversation.model
    instructions = conversation.instructions
    if isinstance(instructions, tuple):
        body["system"] = [write_part(part) for part in instructions]
    elif isinstance(instructions, str):
        body["system"] = instructions
    body["messages"] = write_messages(conversation.items)
    if conversation.tools:
        body["tools"] = [_write_tool(tool) for tool in conversation.tools]
    body.update(conversation.extra)
    return body
