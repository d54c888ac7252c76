"""A real HTTP server on 127.0.0.1 that speaks enough of the Chat Completions API for the real
``openai`` client: the model name picks the behaviour (success, 401, 404, 429, a 400 with the
provider's message, a 502 in HTML, a hang, a malformed or empty body). Every request is
recorded, so tests can check what was sent."""

from __future__ import annotations

import json
import threading
import time
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
        if not self.path.endswith("/chat/completions"):
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
        else:
            status, body = 200, _completion(SUMMARY, model)
        self._send(status, json.dumps(body).encode())


class StubServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, hang_seconds: float = 3.0) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
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
