"""Our own format: the model written out as it is, one JSON object per item.

    {"format": "compaction-playground", "version": 1, "model": "gpt-4o",
     "instructions": "…", "tools": [{"name": …, "description": …, "parameters": {…}}],
     "items": [{"type": "message", "role": "user", "content": "…"},
               {"type": "tool_call", "call_id": "c1", "name": "read_file", "arguments": {…}},
               {"type": "tool_result", "call_id": "c1", "status": "success", "content": "…"}]}

``arguments`` is an object (a string is accepted for arguments that are not valid JSON);
``status`` is ``success`` or ``error``; ``content`` is a string or a list of
``{"type": "text", "text": …}`` parts. Unknown keys are kept.
"""

from __future__ import annotations

import json
from typing import Any

from ..conversation import Conversation, Item, Message, Origin, Tool, ToolCall, ToolResult, link
from ..errors import InputError
from ._wire import (
    check,
    each_object,
    fresh_arguments,
    function_fields,
    maybe,
    need,
    put_content,
    read_content,
    read_tool,
    rest,
)

NAME = "native"
TITLE = "Compaction Playground (native)"
MARKER = "compaction-playground"
VERSION = 1
_STATUSES = ("success", "error")


def where(origin: Origin) -> str:
    return f"items[{origin.index}]"


def looks_like(data: Any) -> int:
    return 5 if isinstance(data, dict) and data.get("format") == MARKER else 0


def _read_arguments(item: dict, place: str) -> str:
    value = need(item, "arguments", dict | str, place)
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _read_item(item: dict, index: int, place: str) -> Item:
    kind = need(item, "type", str, place)
    origin = Origin(index)
    if kind == "message":
        return Message(role=need(item, "role", str, place), content=read_content(item, "content", place),
                       name=maybe(item, "name", str, place), origin=origin,
                       extra=rest(item, "type", "role", "content", "name"))
    if kind == "tool_call":
        return ToolCall(call_id=need(item, "call_id", str, place), name=need(item, "name", str, place),
                        arguments=_read_arguments(item, place), origin=origin,
                        extra=rest(item, "type", "call_id", "name", "arguments"))
    if kind == "tool_result":
        status = item.get("status", "success")
        if status not in _STATUSES:
            raise InputError("status must be 'success' or 'error'", where=f"{place}.status", value=status)
        return ToolResult(call_id=need(item, "call_id", str, place), content=read_content(item, "content", place),
                          is_error=status == "error", origin=origin,
                          extra=rest(item, "type", "call_id", "content", "status", "name"))
    raise InputError("type must be 'message', 'tool_call' or 'tool_result'", where=f"{place}.type", value=kind)


def read(data: Any) -> Conversation:
    body = check(data, dict, "document")
    version = body.get("version", VERSION)
    if version != VERSION:
        raise InputError(f"unsupported version (this build reads version {VERSION})", where="version", value=version)
    raw_items = need(body, "items", list, "document")
    tools = each_object(maybe(body, "tools", list, "document") or [], "tools",
                        lambda t, _, at: read_tool(t, t, "parameters", at))
    return Conversation(
        items=link(each_object(raw_items, "items", _read_item), where),
        format=NAME,
        model=maybe(body, "model", str, "document"),
        instructions=read_content(body, "instructions", "document") if "instructions" in body else None,
        tools=tuple(tools),
        extra=rest(body, "format", "version", "model", "instructions", "tools", "items"),
    )


def _write_item(item: Item) -> dict[str, Any]:
    if isinstance(item, Message):
        wire: dict[str, Any] = {"type": "message", "role": item.role}
        put_content(wire, "content", item.content)
        if item.name is not None:
            wire["name"] = item.name
    elif isinstance(item, ToolCall):
        parsed = fresh_arguments(item)
        wire = {"type": "tool_call", "call_id": item.call_id, "name": item.name,
                "arguments": parsed if parsed is not None else item.arguments}
    else:
        wire = {"type": "tool_result", "call_id": item.call_id, "name": item.name,
                "status": "error" if item.is_error else "success"}
        put_content(wire, "content", item.content)
    wire.update(item.extra)
    return wire


def _write_tool(tool: Tool) -> dict[str, Any]:
    return dict(tool.extra) if tool.extra else function_fields(tool)


def write(conversation: Conversation) -> Any:
    body: dict[str, Any] = {"format": MARKER, "version": VERSION}
    if conversation.model is not None:
        body["model"] = conversation.model
    if conversation.instructions is not None:
        put_content(body, "instructions", conversation.instructions)
    if conversation.tools:
        body["tools"] = [_write_tool(tool) for tool in conversation.tools]
    body["items"] = [_write_item(item) for item in conversation.items]
    body.update(conversation.extra)
    return body
