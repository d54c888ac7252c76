"""Hypothesis strategies: wire-format requests in every supported format, built the way agents
build them (calls answered later by results, ids sometimes reused, content in every shape)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

TOOLS = ("read_file", "search_web", "create_file", "bash", "tavily_search")
texts = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=30)
long_texts = st.text(alphabet="abc def\nxyz.,", min_size=0, max_size=400)
call_ids = st.sampled_from(["call_a", "call_b", "call_c", "toolu_1", "x"])  # few: ids get reused
json_scalars = st.none() | st.booleans() | st.integers(-5, 5) | texts
extras = st.dictionaries(st.sampled_from(["cache_control", "refusal", "meta"]), json_scalars, max_size=1)


@st.composite
def arguments(draw: st.DrawFn, tool: str) -> dict[str, Any]:
    args: dict[str, Any] = {}
    if tool in ("read_file", "create_file"):
        args[draw(st.sampled_from(["path", "file_path"]))] = draw(st.sampled_from(["a.py", "notes/b.md", "c.txt"]))
    if tool == "create_file":
        args["content"] = draw(long_texts)
    if tool in ("search_web", "tavily_search"):
        args["query"] = draw(texts)
    if tool == "bash":
        args["command"] = draw(texts)
    return args


def _parts(draw: st.DrawFn, kind: str = "text") -> list[dict[str, Any]]:
    return [{"type": kind, "text": draw(texts), **draw(extras)} for _ in range(draw(st.integers(0, 2)))]


@st.composite
def turns(draw: st.DrawFn, least: int = 0, most: int = 7) -> list[tuple[str, Any]]:
    """An abstract run of ``least`` to ``most`` turns: ("user", text), ("assistant", text) or
    ("calls", [(id, tool, args, result, error)])."""
    out: list[tuple[str, Any]] = []
    for _ in range(draw(st.integers(least, most))):
        kind = draw(st.sampled_from(["user", "assistant", "calls", "calls"]))
        if kind == "calls":
            calls = []
            for _ in range(draw(st.integers(1, 3))):
                tool = draw(st.sampled_from(TOOLS))
                calls.append((draw(call_ids), tool, draw(arguments(tool)), draw(long_texts), draw(st.booleans())))
            out.append(("calls", calls))
        else:
            out.append((kind, draw(long_texts)))
    return out


@st.composite
def chat_requests(draw: st.DrawFn, least: int = 0, most: int = 7) -> Any:
    messages: list[dict[str, Any]] = []
    if draw(st.booleans()):
        messages.append({"role": "system", "content": draw(texts)})
    for kind, value in draw(turns(least, most)):
        if kind == "calls":
            message: dict[str, Any] = {"role": "assistant"}
            shape = draw(st.sampled_from(["absent", "null", "text"]))
            if shape != "absent":
                message["content"] = None if shape == "null" else draw(texts)
            message["tool_calls"] = [{"id": i, "type": "function", "function": {"name": t, "arguments": json.dumps(a)}}
                                     for i, t, a, _, _ in value]
            messages.append(message)
            for call_id, _, _, result, _ in value:
                content = draw(st.sampled_from(["str", "parts"]))
                messages.append({"role": "tool", "tool_call_id": call_id,
                                 "content": result if content == "str" else _parts(draw)})
        else:
            content = draw(st.sampled_from(["str", "parts"])) if kind == "user" else "str"
            message = {"role": kind, "content": value if content == "str" else _parts(draw)}
            if draw(st.booleans()):
                message["name"] = draw(st.sampled_from(["alice", "example_user"]))
            messages.append({**message, **draw(extras)} if kind == "assistant" else message)
    if draw(st.booleans()):
        return messages
    body: dict[str, Any] = {"model": draw(st.sampled_from(["gpt-4o", "gpt-5-mini", "gpt-4.1"])), "messages": messages}
    if draw(st.booleans()):
        body["tools"] = [{"type": "function", "function": {"name": t, "description": "d",
                                                           "parameters": {"type": "object", "properties": {}}}}
                         for t in TOOLS[:2]]
        body["tool_choice"] = "auto"
    return body


@st.composite
def responses_requests(draw: st.DrawFn) -> Any:
    items: list[dict[str, Any]] = []
    for kind, value in draw(turns()):
        if kind == "calls":
            if draw(st.booleans()):  # reasoning before the calls, sent back: billed in its turn only
                items.append({"type": "reasoning", "id": f"rs_{len(items)}", "summary": [],
                              "encrypted_content": "e" * draw(st.integers(0, 3000))})
            for call_id, tool, args, _, _ in value:
                items.append({"type": "function_call", "call_id": call_id, "name": tool, "arguments": json.dumps(args)})
            for call_id, _, _, result, _ in value:
                items.append({"type": "function_call_output", "call_id": call_id, "output": result})
        elif draw(st.booleans()):
            items.append({"role": kind, "content": value})
        else:
            part = "input_text" if kind == "user" else "output_text"
            items.append({"type": "message", "role": kind, "content": _parts(draw, part)})
    if draw(st.booleans()):
        items.append({"type": "reasoning", "id": "rs_1", "summary": []})
    body: dict[str, Any] = {"model": "gpt-5", "input": items}
    if draw(st.booleans()):
        body["instructions"] = draw(texts)
    return body


def _thinking(draw: st.DrawFn) -> dict[str, Any]:
    if draw(st.booleans()):
        return {"type": "redacted_thinking", "data": "r" * draw(st.integers(0, 400))}
    return {"type": "thinking", "thinking": draw(long_texts), "signature": "sig"}


@st.composite
def anthropic_requests(draw: st.DrawFn, least: int = 0, most: int = 7) -> Any:
    messages: list[dict[str, Any]] = []
    for kind, value in draw(turns(least, most)):
        if kind == "calls":
            blocks = [_thinking(draw)] if draw(st.booleans()) else []  # billed in its turn only
            blocks += [{"type": "text", "text": draw(texts)}] if draw(st.booleans()) else []
            blocks += [{"type": "tool_use", "id": i, "name": t, "input": a} for i, t, a, _, _ in value]
            messages.append({"role": "assistant", "content": blocks})
            results = []
            for call_id, _, _, result, error in value:
                block: dict[str, Any] = {"type": "tool_result", "tool_use_id": call_id}
                block["content"] = result if draw(st.booleans()) else [{"type": "text", "text": result}]
                if error or draw(st.booleans()):
                    block["is_error"] = error
                results.append(block)
            messages.append({"role": "user", "content": results})
        elif draw(st.booleans()):
            messages.append({"role": kind, "content": value})
        else:
            messages.append({"role": kind, "content": _parts(draw)})
    body: dict[str, Any] = {"model": "claude-sonnet-4-5", "max_tokens": 1024, "messages": messages}
    if draw(st.booleans()):
        body["system"] = draw(texts) if draw(st.booleans()) else [{"type": "text", "text": draw(texts)}]
    return body


@st.composite
def native_documents(draw: st.DrawFn) -> Any:
    items: list[dict[str, Any]] = []
    latest: dict[str, str] = {}
    for kind, value in draw(turns()):
        if kind == "calls":
            for call_id, tool, args, _, _ in value:
                latest[call_id] = tool
                items.append({"type": "tool_call", "call_id": call_id, "name": tool, "arguments": args})
            for call_id, _, _, result, error in value:
                items.append({"type": "tool_result", "call_id": call_id, "name": latest[call_id],
                              "status": "error" if error else "success", "content": result})
        else:
            items.append({"type": "message", "role": kind, "content": value})
    return {"format": "compaction-playground", "version": 1, "model": "gpt-4o", "items": items}


REQUESTS = {"chat": chat_requests(), "responses": responses_requests(), "anthropic": anthropic_requests(),
            "native": native_documents()}
# Longer runs, for properties of a replay's later calls (what an incremental pass remembers
# between calls shows only after several of them)
LONG_RUNS = st.one_of(chat_requests(8, 18), anthropic_requests(8, 18))
