"""Small readers shared by the format modules: typed field access with located errors,
the unmodelled rest of a wire object, and multi-part content in both directions."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ..conversation import ABSENT, Content, JsonObject, Part, Tool, ToolCall, frozen
from ..errors import InputError

_TYPE_WORDS = {str: "a string", list: "a list", dict: "an object", bool: "true or false"}


def check(value: Any, kind: type, where: str) -> Any:
    if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
        kinds = getattr(kind, "__args__", (kind,))
        words = " or ".join(_TYPE_WORDS.get(k, k.__name__) for k in kinds)
        raise InputError(f"expected {words}", where=where, value=value)
    return value


def need(obj: dict, key: str, kind: type, where: str) -> Any:
    """``obj[key]``, which must be there and of ``kind``."""
    if key not in obj:
        raise InputError(f"missing {key!r}", where=where)
    return check(obj[key], kind, f"{where}.{key}")


def maybe(obj: dict, key: str, kind: type, where: str) -> Any:
    """``obj[key]`` if present and not null, checked against ``kind``; else None."""
    value = obj.get(key)
    return None if value is None else check(value, kind, f"{where}.{key}")


def rest(obj: dict, *modelled: str) -> JsonObject:
    """The keys of ``obj`` the model does not hold, kept so export gives back the input."""
    return frozen({key: value for key, value in obj.items() if key not in modelled})


def read_parts(value: list, where: str) -> tuple[Part, ...]:
    """Content blocks: a block with a string ``text`` is text; any other block rides along."""
    parts = []
    for position, block in enumerate(value):
        check(block, dict, f"{where}[{position}]")
        kind = block.get("type", "")
        text = block.get("text")
        if isinstance(text, str):
            parts.append(Part(kind, text, rest(block, "type", "text")))
        else:
            parts.append(Part(kind, None, rest(block, "type")))
    return tuple(parts)


def read_content(obj: dict, key: str, where: str) -> Content:
    """A content field: a string, null, a list of blocks, or absent."""
    if key not in obj:
        return ABSENT
    value = obj[key]
    if value is None or isinstance(value, str):
        return value
    return read_parts(check(value, list, f"{where}.{key}"), f"{where}.{key}")


def write_part(part: Part) -> dict[str, Any]:
    block: dict[str, Any] = {"type": part.type} if part.type else {}
    if part.text is not None:
        block["text"] = part.text
    block.update(part.extra)
    return block


def write_content(content: Content) -> Any:
    """The wire value of content (never called for ABSENT, which writes no key)."""
    if isinstance(content, tuple):
        return [write_part(part) for part in content]
    return content


def put_content(target: dict[str, Any], key: str, content: Content) -> None:
    if content is not ABSENT:
        target[key] = write_content(content)


def read_tool(wire: dict, fields: dict, schema_key: str, where: str) -> Tool:
    """A tool definition: a function's name, description and schema are read from ``fields``
    (the wire object itself, or its ``function`` member); the whole wire object is kept."""
    kind = wire.get("type", "function")
    if kind not in ("function", "custom") and "name" not in fields:
        return Tool(name=str(kind), kind=str(kind), extra=frozen(wire))
    name = need(fields, "name", str, where)
    description = maybe(fields, "description", str, where) or ""
    parameters = maybe(fields, schema_key, dict, where)
    return Tool(name=name, description=description, parameters=parameters, kind=str(kind), extra=frozen(wire))


def fresh_arguments(call: ToolCall) -> dict[str, Any] | None:
    """A call's arguments as a new object the caller may keep (the model's parse is shared)."""
    try:
        value = json.loads(call.arguments)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def function_fields(tool: Tool, schema_key: str = "parameters") -> dict[str, Any]:
    """A function tool's name, description and schema, for a format's own tool shape."""
    fields: dict[str, Any] = {"name": tool.name, "description": tool.description}
    if tool.parameters is not None:
        fields[schema_key] = dict(tool.parameters)
    return fields


def has_block(message: dict, *kinds: str) -> bool:
    """Whether a wire message's content list holds a block of one of ``kinds``."""
    content = message.get("content")
    return isinstance(content, list) and any(isinstance(b, dict) and b.get("type") in kinds for b in content)


def each_object(values: list, where: str, read: Callable[[dict, int, str], Any], start: int = 0) -> list[Any]:
    """Apply ``read`` to every element of a list of objects, naming each element's place;
    ``values`` is the list from its index ``start`` on."""
    out = []
    for position, value in enumerate(values, start):
        place = f"{where}[{position}]"
        out.append(read(check(value, dict, place), position, place))
    return out
