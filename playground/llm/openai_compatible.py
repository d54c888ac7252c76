"""An OpenAI-compatible endpoint and its client: OpenAI, Azure, Ollama, vLLM, LM Studio — any
server that speaks Chat Completions, through the ``openai`` package and its ``base_url``. The
summarizer (``summarize/online.py``) and the probe both send through it.

Every failure becomes one clear sentence (bad key, unknown model, rate limit, refused
connection, timeout, an empty or malformed reply) that keeps the provider's own words when it
sent some (a 400 "maximum context length" says so). The API key never appears in a message.

The client itself never retries, our loop does, within ``timeout``: the whole exchange, retries
included, through ``transport.Transport``'s deadline and reply cap.
"""

from __future__ import annotations

import json
import time
from typing import Any

import httpx2
import openai

from .endpoint import Endpoint
from .failure import LLMError, scrub
from .keys import DEFAULT_HOST
from .transport import Deadline, ReplyTooLargeError, Transport, reply_cap

PLACEHOLDER_KEY = "not-needed"  # local servers (Ollama, vLLM, LM Studio) accept any key
_BACKOFF = 0.5  # seconds before the first retry, doubled each time, capped by the time left
_RETRYABLE_STATUS = frozenset({408, 409, 429}) | frozenset(range(500, 600))


# First match wins: the subclasses (timeout, 401…) come before their parents.
_EXPLANATIONS: tuple[tuple[type[Exception], str], ...] = (
    (openai.APITimeoutError, "{where} did not answer: gave up after {elapsed:.1f} s ({attempts}; the timeout of "
                             "{timeout:g} s is the whole wait)"),
    (openai.APIConnectionError, "{connection}"),
    (openai.AuthenticationError, "{where} refused the API key (401): check the key"),
    (openai.PermissionDeniedError, "{where} denied access (403): the key may not be allowed to use {model}"),
    (openai.NotFoundError, "{where} does not know the model {model!r} or the path (404)"),
    (openai.RateLimitError, "{where} is rate limiting requests (429): wait and try again"),
    (openai.APIStatusError, "{where} answered with an error ({status})"),  # the provider's words are added
    (openai.APIResponseValidationError, "{where} sent a reply that is not a valid chat completion (malformed reply)"),
)


def _provider_message(exc: openai.APIStatusError) -> str:
    """What the provider said about the error, on one short line: ``error.message`` of a JSON
    body, or the start of a body that is not JSON (said so). Empty when it said nothing."""
    body = exc.body
    if isinstance(body, dict):
        said = body.get("message")
        return " ".join(str(said).split())[:300] if said else ""
    if isinstance(body, str) and body.strip():
        return "the reply is not JSON: " + " ".join(body.split())[:160]
    return ""


def _connection_failure(exc: openai.OpenAIError) -> str:
    """What went wrong with the connection, from the cause httpx gave: never reached, or reached
    and then dropped before the reply was complete (a crash or a limit on the server's side)."""
    cause = exc.__cause__
    if isinstance(cause, httpx2.ConnectError):
        return "could not connect to {where} (is the server running, and is the base URL right?)"
    if isinstance(cause, httpx2.RemoteProtocolError | httpx2.ReadError | httpx2.WriteError):
        return ("{where} closed the connection before its reply was complete ({attempts}; the server may have "
                "crashed, restarted or hit a limit of its own)")
    return "the connection to {where} failed ({kind})"


def _retry_after(exc: openai.APIStatusError) -> float | None:
    """The server's own wait (``retry-after-ms`` or ``retry-after`` seconds), if it gave one."""
    headers = exc.response.headers
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        try:
            return float(headers[name]) * scale
        except (KeyError, ValueError):
            continue
    return None


class OpenAIClient:
    """Sends Chat Completions requests to one endpoint (each retried within the timeout)."""

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint
        self._ssl = httpx2.create_ssl_context()  # loading the certificates takes a while: once, not per exchange

    def _client(self, deadline: Deadline, cap: int) -> openai.OpenAI:
        """A client for one exchange: its sockets keep to ``deadline`` and its replies to ``cap``."""
        url = self.endpoint.base_url or f"https://{DEFAULT_HOST}/v1"
        transport = Transport(url, deadline, cap, self._ssl)
        http = httpx2.Client(transport=transport, trust_env=False)  # the environment's proxy: see Transport
        return openai.OpenAI(api_key=self.endpoint.api_key or PLACEHOLDER_KEY, base_url=self.endpoint.base_url or None,
                             timeout=self.endpoint.timeout, max_retries=0, http_client=http)

    def _request(self, messages: list[dict[str, str]], max_tokens: int | None) -> object:
        sent = sum(len(message["content"].encode("utf-8", "surrogatepass")) for message in messages)
        return self.send({"messages": messages, **({"max_tokens": max_tokens} if max_tokens else {})}, sent)

    def send(self, body: dict[str, Any], sent: int) -> object:
        """The completion for a Chat Completions ``body`` (its model is the endpoint's; ``sent``
        bytes of text size the reply cap), retried on a refused or dropped connection, 408/409/429
        and 5xx while time is left; every attempt and every network step in it gets only the time
        left, so ``timeout`` bounds the whole exchange. Failures raise ``LLMError``."""
        deadline = Deadline()
        with self._client(deadline, reply_cap(sent)) as client:
            started = time.monotonic()
            deadline.at = started + self.endpoint.timeout
            return self._attempts(client, body, started, deadline.at)

    def _attempts(self, client: openai.OpenAI, body: dict[str, Any], started: float, deadline: float) -> object:
        body = {key: value for key, value in body.items() if key != "model"}
        attempt, previous = 0, None
        while True:
            attempt += 1
            try:
                return client.chat.completions.create(
                    model=self.endpoint.model, timeout=max(deadline - time.monotonic(), 0.001), **body)
            except ReplyTooLargeError as exc:
                raise LLMError(f"{self.endpoint.where} sent a reply larger than the cap of {exc.cap:,} bytes "
                                      "(a summary longer than the history it replaces saves nothing); stopped "
                                      "reading there") from None
            except (openai.APITimeoutError, openai.APIConnectionError, openai.APIStatusError) as exc:
                status = getattr(exc, "status_code", None)
                retryable = (status in _RETRYABLE_STATUS if isinstance(exc, openai.APIStatusError)
                             else not isinstance(exc, openai.APITimeoutError))
                wait = _BACKOFF * 2 ** (attempt - 1)
                if isinstance(exc, openai.APIStatusError):
                    wait = _retry_after(exc) or wait
                if not retryable or attempt > self.endpoint.max_retries or time.monotonic() + wait >= deadline:
                    # A retry cut off by the deadline says why it was retried (a 429, a dropped connection)
                    cause = previous if isinstance(exc, openai.APITimeoutError) and previous is not None else exc
                    raise LLMError(self._explain(cause, time.monotonic() - started, attempt)) from None
                previous = exc
                time.sleep(wait)
            except openai.OpenAIError as exc:
                raise LLMError(self._explain(exc, time.monotonic() - started, attempt)) from None
            except json.JSONDecodeError:  # a 200 whose body is not JSON (only then: see _provider_message)
                where = self.endpoint.where
                raise LLMError(f"{where} sent a reply that is not JSON (malformed reply)") from None

    def complete(self, messages: list[dict[str, str]], max_tokens: int | None = None) -> str:
        response = self._request(messages, max_tokens)
        try:
            text = response.choices[0].message.content  # type: ignore[attr-defined]
        except (AttributeError, IndexError, TypeError):
            raise LLMError(f"{self.endpoint.where} answered without a message (malformed reply)") from None
        if not isinstance(text, str) or not text.strip():
            raise LLMError(f"{self.endpoint.where} answered with an empty message")
        return text

    def check(self) -> str:
        """A one-word request, to test the connection, key and model before a real summary."""
        self.complete([{"role": "user", "content": "Reply with the word: ok"}], max_tokens=5)
        return f"connected: {self.endpoint.model} at {self.endpoint.where} answered"

    def _explain(self, exc: openai.OpenAIError, elapsed: float, attempts: int) -> str:
        """One sentence built from what we know, plus the provider's own error message (a 400
        "maximum context length" must say so). Never the exception's text, which may echo request
        details; never a 401's words, which echo part of the key."""
        facts = {"where": self.endpoint.where, "model": self.endpoint.model, "timeout": self.endpoint.timeout,
                 "status": getattr(exc, "status_code", "?"), "kind": type(exc).__name__, "elapsed": elapsed,
                 "attempts": f"{attempts} attempt" + ("s" if attempts != 1 else "")}
        facts["connection"] = _connection_failure(exc).format(**facts)
        template = next((text for kind, text in _EXPLANATIONS if isinstance(exc, kind)),
                        "the request to {where} failed ({kind})")
        sentence = template.format(**facts)
        if isinstance(exc, openai.APIStatusError) and not isinstance(exc, openai.AuthenticationError):
            said = _provider_message(exc)
            sentence += f": {said}" if said else ""
        return self._scrub(sentence)

    def _scrub(self, text: str) -> str:
        return scrub(text, self.endpoint.api_key)
