"""A real HTTP server on 127.0.0.1 that speaks enough of the Chat Completions API for the real
``openai`` client: the model name picks the behaviour (success, 401, 404, 429, a 400 with the
provider's message, a 502 in HTML, a hang, a malformed or empty body) and the hostile ones
(a 300 MB summary, a 2 GB body that is not JSON, a reply trickled a byte at a time, one cut off
half way), and an agent's model (``tool-loop-N``: a tool call per reply, streamed when asked; on
``/responses`` too; when the request offers the ``recall`` tool and holds a reference naming a key,
it follows the first one back before it answers). Every request is recorded, so tests can check
what was sent."""

from __future__ import annotations

import itertools
import json
import re
import threading
import time
from collections.abc import Iterable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SUMMARY = "The user asked for a report; report.md was written; two searches found capacity figures."
TOO_LONG = ("This model's maximum context length is 128000 tokens. However, your messages resulted in 130512 tokens. "
            "Please reduce the length of the messages.")


def _completion(text: str | None, model: str) -> dict[str, Any]:
    return {"id": "chatcmpl-stub", "object": "chat.completion", "created": 0, "model": model,
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}


TOOL_LOOP = "tool-loop-"  # tool-loop-N: a read_file call per reply until the request holds N tool results
RECALL_ID = "recall_0"  # the id of the one recall call a tool loop makes
_KEY = re.compile(r"stored as ([0-9a-f]{12})")


def recall_wanted(request: dict[str, Any], ids: Iterable[str]) -> str | None:
    """The key a tool loop follows back before it answers: the first a reference in the request
    names, when the request offers the ``recall`` tool and has not recalled yet (``ids``: its results' ids)."""
    names = {tool.get("name") or tool.get("function", {}).get("name") for tool in request.get("tools") or ()}
    found = _KEY.search(json.dumps(request.get("messages", request.get("input"))))
    return found.group(1) if "recall" in names and found and RECALL_ID not in ids else None


def _tool_loop(request: dict[str, Any], model: str) -> dict[str, Any]:
    """An agent's model: asks for file ``N`` (N: the calls answered so far, read from the id of the
    newest result, as a compacted or summarized request still holds it), then, at the count its name
    gives, answers in text; so a real loop runs as many calls as a test asks for."""
    results = [message for message in request.get("messages", []) if message.get("role") == "tool"]
    reads = [result for result in results if result["tool_call_id"].startswith("call_")]
    done = int(reads[-1]["tool_call_id"].removeprefix("call_")) + 1 if reads else 0
    if done >= int(model.removeprefix(TOOL_LOOP)):
        key = recall_wanted(request, [result["tool_call_id"] for result in results])
        if key is None:
            return _completion(f"Read {done} files.", model)
        body = _completion(None, model)
        body["choices"][0]["finish_reason"] = "tool_calls"
        body["choices"][0]["message"]["tool_calls"] = [{"id": RECALL_ID, "type": "function", "function": {
            "name": "recall", "arguments": json.dumps({"key": key})}}]
        return body
    body = _completion(None, model)
    body["choices"][0]["finish_reason"] = "tool_calls"
    body["choices"][0]["message"]["tool_calls"] = [{"id": f"call_{done}", "type": "function", "function": {
        "name": "read_file", "arguments": json.dumps({"file_path": f"src/module_{done}.py"})}}]
    body["usage"]["prompt_tokens"] = 100 + done  # (the wrapper logs the provider's usage as it came)
    return body


def _tool_loop_response(request: dict[str, Any], model: str) -> dict[str, Any]:
    """``tool-loop-N`` on the Responses API: a ``function_call`` output item per reply, then a message."""
    results = [item for item in request.get("input", []) if item.get("type") == "function_call_output"]
    done = int(results[-1]["call_id"].removeprefix("call_")) + 1 if results else 0
    if done >= int(model.removeprefix(TOOL_LOOP)):
        output = [{"type": "message", "id": "msg_stub", "role": "assistant", "status": "completed",
                   "content": [{"type": "output_text", "text": f"Read {done} files.", "annotations": []}]}]
    else:
        output = [{"type": "function_call", "id": f"fc_{done}", "call_id": f"call_{done}", "name": "read_file",
                   "arguments": json.dumps({"file_path": f"src/module_{done}.py"}), "status": "completed"}]
    return {"id": f"resp_{done}", "object": "response", "created_at": 0, "model": model, "status": "completed",
            "output": output, "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
            "usage": {"input_tokens": 100 + done, "output_tokens": 5, "total_tokens": 105 + done,
                      "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}}}


def _events(body: dict[str, Any], request: dict[str, Any]) -> bytes:
    """``body`` as a stream of Chat Completions chunks (server-sent events): the reply whole in one
    delta, the finish reason, the usage when ``stream_options.include_usage`` asks for it."""
    choice = body["choices"][0]
    delta = dict(choice["message"])
    if "tool_calls" in delta:
        delta["tool_calls"] = [{"index": n, **call} for n, call in enumerate(delta["tool_calls"])]
    chunk = {"id": body["id"], "object": "chat.completion.chunk", "created": 0, "model": body["model"]}
    chunks = [{**chunk, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
              {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]}]
    if (request.get("stream_options") or {}).get("include_usage"):
        chunks.append({**chunk, "choices": [], "usage": body["usage"]})
    return b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"


def _error(status: int, message: str, kind: str) -> tuple[int, dict[str, Any]]:
    return status, {"error": {"message": message, "type": kind, "param": None, "code": None}}


class _Handler(BaseHTTPRequestHandler):
    server: StubServer

    def log_message(self, *args: Any) -> None:  # quiet
        return

    def _send(self, status: int, body: bytes, content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("retry-after-ms", "10")  # keep the client's retries fast
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", 0))
        request = json.loads(self.rfile.read(length) or b"{}")
        self.server.requests.append({"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()},
                                     "body": request})
        model = request.get("model", "")
        if self.path.endswith("/responses") and model.startswith(TOOL_LOOP):
            status, body = 200, _tool_loop_response(request, model)
        elif not self.path.endswith("/chat/completions"):
            status, body = _error(404, "no such path", "invalid_request_error")
        elif model == "bad-key" or self.headers.get("Authorization") == "Bearer wrong":
            status, body = _error(401, "Incorrect API key provided: sk-wr****", "invalid_request_error")
        elif model == "missing-model":
            status, body = _error(404, "The model `missing-model` does not exist", "invalid_request_error")
        elif model == "busy":
            status, body = _error(429, "Rate limit reached", "rate_limit_error")
        elif model == "too-long":
            status, body = _error(400, TOO_LONG, "invalid_request_error")
        elif model == "bad-gateway":
            self._send(502, b"<html><body>502 Bad Gateway</body></html>", "text/html")
            return
        elif model == "slow":
            time.sleep(self.server.hang_seconds)
            status, body = 200, _completion(SUMMARY, model)
        elif model == "garbage":
            self._send(200, b"<html>this is not json</html>", "application/json")
            return
        elif model == "empty":
            status, body = 200, _completion("", model)
        elif model in _HOSTILE:
            _HOSTILE[model](self, model)
            return
        elif model.startswith(TOOL_LOOP):
            status, body = 200, _tool_loop(request, model)
            if request.get("stream"):
                self._send(200, _events(body, request), "text/event-stream")
                return
        else:
            status, body = 200, _completion(SUMMARY, model)
        self._send(status, json.dumps(body).encode())


def _stream(handler: _Handler, pieces: Iterable[bytes], length: int, pause: float = 0.0) -> None:
    """A 200 announcing ``length`` bytes whose body is ``pieces``, made as they are sent, so the
    server never holds the body (a 2 GB reply costs it nothing). It stops when the client hangs
    up; ``pause`` seconds between pieces make it trickle."""
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(length))
    handler.end_headers()
    try:
        for piece in pieces:
            handler.wfile.write(piece)
            handler.wfile.flush()
            if pause:
                time.sleep(pause)
    except OSError:  # the client gave up reading: what the caps are for
        pass


def _repeated(chunk: bytes, total: int) -> Iterator[bytes]:
    for start in range(0, total, len(chunk)):
        yield chunk[: total - start]


def _huge_summary(handler: _Handler, model: str) -> None:
    """A valid completion whose summary is 300 MB."""
    head, tail = json.dumps(_completion("@", model)).encode().split(b"@")
    size = 300 * 1024 * 1024
    _stream(handler, itertools.chain([head], _repeated(b"summary " * 8192, size), [tail]), len(head) + size + len(tail))


def _endless(handler: _Handler, model: str) -> None:
    """A 2 GB body that is not JSON at all."""
    _stream(handler, _repeated(b"not json at all, " * 4096, 2 * 1024**3), 2 * 1024**3)


def _trickle(handler: _Handler, model: str) -> None:
    """A valid completion sent one byte every half second (it would take minutes)."""
    body = json.dumps(_completion(SUMMARY, model)).encode()
    _stream(handler, (body[i: i + 1] for i in range(len(body))), len(body), pause=0.5)


def _drop(handler: _Handler, model: str) -> None:
    """Half a completion, then the connection closes."""
    body = json.dumps(_completion(SUMMARY, model)).encode()
    _stream(handler, [body[: len(body) // 2]], len(body))
    handler.close_connection = True


_HOSTILE = {"huge-summary": _huge_summary, "endless": _endless, "trickle": _trickle, "drop": _drop}


class StubServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, hang_seconds: float = 3.0, handler: type[BaseHTTPRequestHandler] = _Handler,
                 port: int = 0) -> None:
        super().__init__(("127.0.0.1", port), handler)
        self.requests: list[dict[str, Any]] = []
        self.hang_seconds = hang_seconds
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that gave up (the timeout test) is expected; stay quiet about it."""

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def __enter__(self) -> StubServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
        self.server_close()
