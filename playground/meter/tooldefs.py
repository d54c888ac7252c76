"""Function definitions as the model reads them: a TypeScript-like namespace.

OpenAI does not bill tool definitions as JSON. It renders them into the system (or developer)
message as ``namespace functions { … }`` with one ``type name = (_: {…}) => any;`` per function,
descriptions as ``//`` comments. Counting tokens of that text, plus a per-family constant
(``tokens.py``), reproduces the billed counts far better than a per-field formula; the exact
rendering choices below are the ones that fit ``shared/fixtures/token-counts`` best.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from ..conversation import Tool

INDENT = "  "


def _comment(text: str) -> str:
    # Multi-line descriptions fit best collapsed onto one comment line.
    return "// " + " ".join(text.split())


def _type(schema: Any, indent: int) -> str:
    """A JSON Schema as a TypeScript type."""
    if not isinstance(schema, Mapping):
        return "any"
    union = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(union, list) and union:
        return " | ".join(_type(option, indent) for option in union)
    kind = schema.get("type")
    if isinstance(kind, list):
        return " | ".join("number" if k == "integer" else str(k) for k in kind)
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return " | ".join(json.dumps(value, ensure_ascii=False) for value in schema["enum"])
    if kind == "array":
        return _type(schema["items"], indent) + "[]" if "items" in schema else "any[]"
    if kind == "object" or "properties" in schema:
        return "{\n" + _properties(schema, indent + 1) + "\n" + INDENT * indent + "}"
    return {"string": "string", "number": "number", "integer": "number", "boolean": "boolean",
            "null": "null"}.get(str(kind), "any")


def _properties(schema: Mapping[str, Any], indent: int) -> str:
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return ""
    required = schema.get("required") if isinstance(schema.get("required"), list) else []
    lines = []
    pad = INDENT * indent
    for name, prop in properties.items():
        if isinstance(prop, Mapping) and isinstance(prop.get("description"), str) and prop["description"]:
            lines.append(pad + _comment(prop["description"]))
        optional = "" if name in required else "?"
        lines.append(f"{pad}{name}{optional}: {_type(prop, indent)},")
    return "\n".join(lines)


def _inlined(schema: Any, definitions: Mapping[str, Any], expanding: frozenset[str] = frozenset()) -> Any:
    """``schema`` with each local ``$ref`` (``#/$defs/X``, ``#/definitions/X``) replaced by the definition it
    names: the model reads a nested type written out where it is used (a strict tool's pydantic model
    billed ~75 tokens over our count with its ``$ref`` rendered as ``any``). A definition that refers to
    itself is written out once; inside it, ``any``."""
    if isinstance(schema, list):
        return [_inlined(value, definitions, expanding) for value in schema]
    if not isinstance(schema, Mapping):
        return schema
    reference = schema.get("$ref")
    if isinstance(reference, str):
        name = reference.rsplit("/", 1)[-1]
        target = definitions.get(name) if reference.startswith(("#/$defs/", "#/definitions/")) else None
        if not isinstance(target, Mapping) or name in expanding:
            return {key: value for key, value in schema.items() if key != "$ref"}
        merged = {**target, **{key: value for key, value in schema.items() if key != "$ref"}}
        return _inlined(merged, definitions, expanding | {name})
    return {key: _inlined(value, definitions, expanding) for key, value in schema.items()
            if key not in ("$defs", "definitions")}


def render_function(tool: Tool) -> str:
    lines = [_comment(tool.description)] if tool.description else []
    parameters = tool.parameters or {}
    definitions = {**(parameters.get("definitions") or {}), **(parameters.get("$defs") or {})}
    if definitions:
        parameters = _inlined(parameters, definitions)
    if isinstance(parameters.get("properties"), Mapping) and parameters["properties"]:
        lines += [f"type {tool.name} = (_: {{", _properties(parameters, 0), "}) => any;"]
    else:
        lines.append(f"type {tool.name} = () => any;")
    return "\n".join(lines)


def render_functions(tools: Iterable[Tool]) -> str:
    """The namespace text for the function tools in ``tools`` (empty when there are none)."""
    bodies = [render_function(tool) for tool in tools if tool.kind == "function"]
    if not bodies:
        return ""
    return "namespace functions {\n\n" + "\n\n".join(bodies) + "\n\n} // namespace functions"
