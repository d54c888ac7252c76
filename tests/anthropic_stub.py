"""A real HTTP server on 127.0.0.1 that speaks enough of Anthropic's Messages API (``POST /v1/messages``)
for the real ``anthropic`` client: an agent's model ``tool-loop-N`` (a text block and a ``tool_use``
asking for a file per reply, until the request holds N tool results; streamed as the API streams
events when asked; it follows a reference's key back with ``recall`` when offered, as the Chat
Completions one does) and ``busy`` (a 429 in the API's error shape). Every request is recorded, so
tests can check what was sent."""

from __future__ import annotations

import json
from typing import Any

from . import openai_stub
from .openai_stub import RECALL_ID, TOOL_LOOP, StubServer, recall_wanted


def _results(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [block for message in request.get("messages", []) if isinstance(message.get("content"), list)
            for block in message["content"] if block.get("type") == "tool_result"]


def _tool_loop(request: dict[str, Any], model: str) -> dict[str, Any]:
    """Asks for file ``N`` (N: the calls answered so far, read from the id of the newest result, as
    a compacted or summarized request still holds it), then, at the count its name gives, answers."""
    results = _results(request)
    reads = [result for result in results if result["tool_use_id"].startswith("toolu_")]
    done = int(reads[-1]["tool_use_id"].removeprefix("toolu_")) + 1 if reads else 0
    key = recall_wanted(request, [result["tool_use_id"] for result in results])
    if done >= int(model.removeprefix(TOOL_LOOP)) and key is not None:
        content: list[dict[str, Any]] = [{"type": "text", "text": "Reading the original back."},
                                         {"type": "tool_use", "id": RECALL_ID, "name": "recall", "input": {"key": key}}]
    elif done >= int(model.removeprefix(TOOL_LOOP)):
        content = [{"type": "text", "text": f"Read {done} files."}]
    else:
        content = [{"type": "text", "text": f"Reading module {done}."},
                   {"type": "tool_use", "id": f"toolu_{done}", "name": "read_file",
                    "input": {"file_path": f"src/module_{done}.py"}}]
    return {"id": f"msg_{done}", "type": "message", "role": "assistant", "model": model, "content": content,
            "stop_reason": "tool_use" if len(content) > 1 else "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": 100 + done, "output_tokens": 5, "cache_read_input_tokens": 0,
                      "cache_creation_input_tokens": 0}}


def _event(kind: str, data: dict[str, Any]) -> bytes:
    return f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n".encode()


def _events(body: dict[str, Any]) -> bytes:
    """``body`` as the Messages API streams it: the message's start, each block's start, one delta
    and stop, the stop reason with the output's usage, the end."""
    start = {**body, "content": [], "stop_reason": None, "usage": {**body["usage"], "output_tokens": 1}}
    out = [_event("message_start", {"message": start})]
    for index, block in enumerate(body["content"]):
        if block["type"] == "text":
            opened, delta = {"type": "text", "text": ""}, {"type": "text_delta", "text": block["text"]}
        else:
            opened = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        out += [_event("content_block_start", {"index": index, "content_block": opened}),
                _event("content_block_delta", {"index": index, "delta": delta}),
                _event("content_block_stop", {"index": index})]
    out += [_event("message_delta", {"delta": {"stop_reason": body["stop_reason"], "stop_sequence": None},
                                     "usage": {"output_tokens": body["usage"]["output_tokens"]}}),
            _event("message_stop", {})]
    return b"".join(out)


class _Handler(openai_stub._Handler):
    """The Chat Completions stub's handler (its quiet log, its replies), answering the Messages API."""

    def do_POST(self) -> None:  # noqa: N802 - http.server calls it by this name
        request = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        self.server.requests.append({"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()},
                                     "body": request})
        model = request.get("model", "")
        if self.path != "/v1/messages" or not model.startswith(TOOL_LOOP):
            status = 404 if self.path != "/v1/messages" else 429
            kind = "not_found_error" if status == 404 else "rate_limit_error"
            error = {"type": "error", "error": {"type": kind, "message": f"{kind} ({model})"}}
            self._send(status, json.dumps(error).encode())
            return
        body = _tool_loop(request, model)
        if request.get("stream"):
            self._send(200, _events(body), "text/event-stream")
        else:
            self._send(200, json.dumps(body).encode())


class AnthropicStub(StubServer):
    """The Messages API on a free local port; ``base_url`` is what ``anthropic.Anthropic`` takes."""

    def __init__(self) -> None:
        super().__init__(handler=_Handler)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"
