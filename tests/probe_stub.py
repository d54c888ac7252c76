"""A real HTTP server on 127.0.0.1 for the live probe, speaking both Chat Completions
(``POST …/chat/completions``) and Anthropic's Messages API (``POST …/v1/messages``).

It answers deterministically from the request's content, like a model that reads its context:
the next step is the tool call ``next_step`` with ``{"marker_seen": true}`` when ``MARKER`` is
anywhere in the request and ``false`` when it is not (so a compaction that hid the marker changes
the next step). The last message picks a failure for that call: ``FAIL-500`` a 500 that echoes the
request's key (a hostile server), ``HANG`` a reply that never comes in time, ``BAD-JSON`` a 200
whose body is not JSON, ``SAY-TEXT`` a text reply instead of a tool call. A request in the wrong
wire format for its path is refused with a 400. Every request is recorded.

A request that lets no tool be called (``tool_choice`` none: ``probe --questions``) is a question on
the run's facts, answered from memory like a model: the ``PLANTED`` facts its messages before the
question hold, listed, or "I do not remember" — so a policy that hid a fact gets a wrong answer. A
request with one message holding ``Reference:`` and ``Answer:`` lines is the judge's: ``YES`` when the
answer names a planted fact the reference names, ``NO`` when not; a question's failure is planted in
the result before it, as for any request. ``facts_run`` is the hand-made run with those facts planted."""

from __future__ import annotations

import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from .openai_stub import StubServer

MARKER = "MARKER-5f3a9c"
TEXT_SEEN = "The marker is in the file I read: I will patch line 12 of f1.py next."
TEXT_UNSEEN = "Nothing found yet; searching the repository again for the configuration loader."


def _texts(value: Any) -> list[str]:
    """Every string in a JSON value (the request's whole content, whatever its format)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for item in value.values() for text in _texts(item)]
    if isinstance(value, list):
        return [text for item in value for text in _texts(item)]
    return []


def _chat_reply(seen: bool, text: bool, model: str, said: str | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": None}
    if text:
        message["content"] = said or (TEXT_SEEN if seen else TEXT_UNSEEN)
    else:
        message["tool_calls"] = [{"id": "call_1", "type": "function", "function": {
            "name": "next_step", "arguments": json.dumps({"marker_seen": seen})}}]
    return {"id": "chatcmpl-probe", "object": "chat.completion", "created": 0, "model": model,
            "choices": [{"index": 0, "finish_reason": "stop" if text else "tool_calls", "message": message}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}


def _messages_reply(seen: bool, text: bool, model: str, said: str | None = None) -> dict[str, Any]:
    block = ({"type": "text", "text": said or (TEXT_SEEN if seen else TEXT_UNSEEN)} if text else
             {"type": "tool_use", "id": "toolu_1", "name": "next_step", "input": {"marker_seen": seen}})
    return {"id": "msg_probe", "type": "message", "role": "assistant", "model": model, "content": [block],
            "stop_reason": "end_turn" if text else "tool_use", "usage": {"input_tokens": 10, "output_tokens": 5}}


PLANTED = ("src/planted_fix.py", "out/summary_v2.csv", "legacy configuration loader", "Exit code 3",
           "PlantedConfigError: missing key alpha_9")


def _recalled(body: dict[str, Any]) -> str:
    """The answer to the question ending ``body``: the planted facts the messages before it hold."""
    before = " ".join(_texts(body["messages"][:-1]) + _texts(body.get("system", "")))
    last = " ".join(_texts(body["messages"][-1]))
    before += " " + last[:last.rfind("Pause the task")] if "Pause the task" in last else ""  # a merged last message
    held = [fact for fact in PLANTED if fact in before]
    return "From memory: " + "; ".join(held) + "." if held else "I do not remember."


def _judged(body: dict[str, Any]) -> bool:
    text = " ".join(_texts(body["messages"]))
    return "tools" not in body and len(body["messages"]) == 1 and "\nReference: " in text and "\nAnswer: " in text


def _verdict(body: dict[str, Any]) -> str:
    text = " ".join(_texts(body["messages"]))
    reference, answer = text.split("\nReference: ", 1)[1].split("\nAnswer: ", 1)
    return "YES" if any(fact in reference and fact in answer for fact in PLANTED) else "NO"


def _wrong_format(path: str, body: dict[str, Any], headers: dict[str, str]) -> str | None:
    """Why ``body`` is not a request of the wire format the path serves, or None."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages missing"
    if body.get("temperature") != 0 or not isinstance(body.get("max_tokens"), int):
        return "the probe must send temperature 0 and max_tokens"
    if path.endswith("/v1/messages"):
        if "anthropic-version" not in headers:
            return "anthropic-version header missing"
        if any(message.get("role") not in ("user", "assistant") for message in messages):
            return "the Messages API takes only user and assistant messages"
    elif "system" in body or any(isinstance(message.get("content"), list) and any(
            part.get("type") in ("tool_use", "tool_result") for part in message["content"]) for message in messages):
        return "Anthropic's format sent to a Chat Completions path"
    return None


class _Handler(BaseHTTPRequestHandler):
    server: ProbeServer

    def log_message(self, *args: Any) -> None:  # quiet
        return

    def _send(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        body = json.loads(raw or b"{}")
        headers = {k.lower(): v for k, v in self.headers.items()}
        self.server.requests.append({"path": self.path, "headers": headers, "body": body})
        anthropic = self.path.endswith("/v1/messages")
        if not anthropic and not self.path.endswith("/chat/completions"):
            self._send(404, json.dumps({"error": {"message": "no such path"}}).encode())
            return
        wrong = _wrong_format(self.path, body, headers)
        if wrong:
            self._send(400, json.dumps({"error": {"message": wrong}}).encode())
            return
        choice = body.get("tool_choice")
        asked = choice in ("none", {"type": "none"})  # a question: the failure is planted in the result before it
        last = " ".join(_texts(body["messages"][-2:] if asked else body["messages"][-1]))
        if "FAIL-500" in last:
            key = headers.get("x-api-key") or headers.get("authorization", "")
            self._send(500, json.dumps({"error": {"message": f"internal error for {key}"}}).encode())
            return
        if "HANG" in last:
            time.sleep(self.server.hang_seconds)
        if "BAD-JSON" in last:
            self._send(200, b"<html>this is not json</html>")
            return
        if asked or _judged(body):
            said = _recalled(body) if asked else _verdict(body)
            reply = (_messages_reply if anthropic else _chat_reply)(False, True, body.get("model", ""), said)
            self._send(200, json.dumps(reply).encode())
            return
        seen = MARKER in " ".join(_texts({key: value for key, value in body.items() if key != "tools"}))
        reply = (_messages_reply if anthropic else _chat_reply)(seen, "SAY-TEXT" in last, body.get("model", ""))
        self._send(200, json.dumps(reply).encode())


FILLER = "\n".join(f"line {n}: value = compute({n}) + offset  # unchanged code" for n in range(60))


def run(results: dict[int, str] | None = None, steps: int = 6) -> dict:
    """The hand-made run tests/test_probe.py describes; ``results`` puts extra text into a step's result."""
    results = results or {}
    messages = [{"role": "system", "content": "You are a coding agent."},
                {"role": "user", "content": "Fix the failing test."}]
    for n in range(steps):
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": f"c{n}", "type": "function", "function": {"name": "read_file", "arguments": json.dumps(
                {"path": f"f{n}.py"})}}]})
        body = FILLER[: len(FILLER) // 2] + (f"\n{MARKER}\n" if n == 1 else "\n") + FILLER[len(FILLER) // 2:]
        messages.append({"role": "tool", "tool_call_id": f"c{n}", "content": body + results.get(n, "")})
    messages.append({"role": "assistant", "content": "Done."})
    tools = [{"type": "function", "function": {"name": "read_file", "description": "Read a file.", "parameters": {
        "type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}}]
    return {"model": "gpt-4o", "messages": messages, "tools": tools}


def facts_run(extra: dict[int, str] | None = None) -> dict:
    """A run with the ``PLANTED`` facts: the user's two requirements, a file written (step 0), a
    command that fails with exit code 3 and a typed error (step 1), then four files read; ``extra``
    puts text into a step's result. Seven calls: clear-tool-uses with ``--trigger 100 --keep 1
    --clear-inputs`` fires from call 2 on and clears step 0's call there, so the path is gone from the
    request; the command's status and error go from call 3 on, with step 1's result."""
    extra = extra or {}
    steps = [("write_file", {"path": "src/planted_fix.py", "content": "FIX = 1\n"}, "File written."),
             ("bash", {"command": "python run_checks.py"}, "Traceback (most recent call last):\n  File "
              "\"run_checks.py\", line 3\nPlantedConfigError: missing key alpha_9\nExit code 3")]
    steps += [("read_file", {"path": f"f{n}.py"}, FILLER) for n in range(4)]
    messages = [{"role": "system", "content": "You are a coding agent."},
                {"role": "user", "content": "Fix the failing check. The report must only be written to "
                                            "out/summary_v2.csv. Never touch the legacy configuration loader."}]
    for n, (name, arguments, result) in enumerate(steps):
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": f"c{n}", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}]})
        messages.append({"role": "tool", "tool_call_id": f"c{n}", "content": result + extra.get(n, "")})
    messages.append({"role": "assistant", "content": "Done: the check passes."})
    tools = [{"type": "function", "function": {"name": name, "description": f"{name}.", "parameters": {
        "type": "object", "properties": {key: {"type": "string"} for key in arguments}}}}
        for name, arguments, _ in steps[:3]]
    return {"model": "gpt-4o", "messages": messages, "tools": tools}


class ProbeServer(StubServer):
    """The summarizer's test server (start, stop, recorded requests, quiet on clients that gave up)
    with the probe's handler."""

    def __init__(self, hang_seconds: float = 3.0, port: int = 0) -> None:
        super().__init__(hang_seconds, _Handler, port)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


if __name__ == "__main__":  # docs/probe.md's examples: python -m tests.probe_stub PORT RUN.json [--facts]
    port, path = int(sys.argv[1]), Path(sys.argv[2])
    with ProbeServer(port=port) as server:  # bound before the run is written: once it exists, requests are answered
        path.write_text(json.dumps(facts_run() if sys.argv[3:] == ["--facts"] else run()))
        print(f"serving {server.url} (Chat Completions at /v1/chat/completions, Messages at /v1/messages); "
              f"the hand-made run is in {path}", flush=True)
        threading.Event().wait()
