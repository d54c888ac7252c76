"""An OpenAI-compatible endpoint as a summarizer: OpenAI, Azure, Ollama, vLLM, LM Studio — any
server that speaks Chat Completions, through the ``openai`` package and its ``base_url``.

Every failure becomes one clear sentence (bad key, unknown model, rate limit, refused
connection, timeout, an empty or malformed reply) that keeps the provider's own words when it
sent some (a 400 "maximum context length" says so). The API key never appears in a message.

``timeout`` is a deadline on the whole exchange, retries included: the client itself never
retries, our loop does, and every network step — connecting, sending, each read — may use only
the time left (``_DeadlineBackend``), so a server trickling one byte every half second is cut
off at the deadline like a silent one. A reply is capped in bytes (``reply_cap``): a summary
longer than the history it replaces saves nothing, and a server sending gigabytes is stopped
after the cap without holding more than the cap in memory.
"""

from __future__ import annotations

import json
import math
import re
import ssl
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpcore2
import httpx2
import openai

from ..limits import MB, seconds
from .history import Plan, SummarizerError
from .keys import DEFAULT_HOST, without_credentials

DEFAULT_TIMEOUT = 60.0
DEFAULT_RETRIES = 2  # attempts after the first, for 408/409/429/5xx and refused connections, within the timeout
PLACEHOLDER_KEY = "not-needed"  # local servers (Ollama, vLLM, LM Studio) accept any key
_BACKOFF = 0.5  # seconds before the first retry, doubled each time, capped by the time left
_RETRYABLE_STATUS = frozenset({408, 409, 429}) | frozenset(range(500, 600))
_KEY_LIKE = re.compile(r"\bsk-[\w*.\-]{4,}")  # OpenAI-style keys, as providers echo them


@dataclass(frozen=True)
class Endpoint:
    model: str
    base_url: str | None = None  # None: api.openai.com
    api_key: str | None = field(default=None, repr=False)
    timeout: float = DEFAULT_TIMEOUT  # seconds for the whole request, retries included
    max_retries: int = DEFAULT_RETRIES

    def __post_init__(self) -> None:
        seconds(self.timeout)

    @property
    def where(self) -> str:
        """The host (and port) for messages and labels, without any ``user:password@``."""
        if not self.base_url:
            return DEFAULT_HOST
        url = without_credentials(self.base_url)
        return url.split("//", 1)[-1].split("/", 1)[0] or url

    @property
    def label(self) -> str:
        return f"LLM summary — {self.model} at {self.where}"


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


REPLY_FLOOR = 1 * MB  # bytes any reply may have: a short answer, the JSON around it, headers of a proxy page


def reply_cap(sent: int) -> int:
    """The most bytes a reply to a request carrying ``sent`` bytes of text may have: the floor plus
    twice the text (JSON escaping can double it); more cannot be a useful summary of it."""
    return REPLY_FLOOR + 2 * sent


class ReplyTooLargeError(Exception):
    """The reply went past its cap; raised from inside the body, so openai passes it on unwrapped."""

    def __init__(self, cap: int) -> None:
        super().__init__(f"the reply is larger than the cap of {cap:,} bytes")
        self.cap = cap


class _Deadline:
    """When one exchange must be over: set as it starts, after its client is built (local work),
    and read by every network step of it."""

    def __init__(self) -> None:
        self.at = math.inf

    def left(self, timeout: float | None, kind: type[Exception]) -> float:
        """Seconds a step may take: its own timeout, cut to the time left; ``kind`` once none is."""
        left = self.at - time.monotonic()
        if left <= 0:
            raise kind("the deadline passed")
        return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore2.NetworkStream):
    """A socket whose every read and write may take only the time left before the deadline."""

    def __init__(self, stream: httpcore2.NetworkStream, deadline: _Deadline) -> None:
        self._stream, self._deadline = stream, deadline

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, self._deadline.left(timeout, httpcore2.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, self._deadline.left(timeout, httpcore2.WriteTimeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore2.NetworkStream:
        left = self._deadline.left(timeout, httpcore2.ConnectTimeout)
        return _DeadlineStream(self._stream.start_tls(ssl_context, server_hostname, left), self._deadline)

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class _DeadlineBackend(httpcore2.SyncBackend):
    """Connections whose every step ends by the deadline (httpx's own timeouts are per step)."""

    def __init__(self, deadline: _Deadline) -> None:
        self._deadline = deadline

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Any = None) -> httpcore2.NetworkStream:
        left = self._deadline.left(timeout, httpcore2.ConnectTimeout)
        return _DeadlineStream(super().connect_tcp(host, port, left, local_address, socket_options), self._deadline)


class _CappedBody(httpx2.SyncByteStream):
    """A reply body read chunk by chunk that stops once it passes ``cap`` bytes."""

    def __init__(self, body: httpx2.SyncByteStream, cap: int) -> None:
        self._body, self._cap = body, cap

    def __iter__(self) -> Iterator[bytes]:
        received = 0
        for chunk in self._body:
            received += len(chunk)
            if received > self._cap:
                raise ReplyTooLargeError(self._cap)
            yield chunk

    def close(self) -> None:
        self._body.close()


class _Transport(httpx2.HTTPTransport):
    """httpx's transport with the deadline on every network step and the cap on the body. The
    proxy is the one the environment names for this URL (as httpx itself would choose)."""

    def __init__(self, url: str, deadline: _Deadline, cap: int, verify: ssl.SSLContext) -> None:
        host = httpx2.URL(url).host
        proxies = urllib.request.getproxies()
        proxy = None if urllib.request.proxy_bypass(host) else proxies.get(httpx2.URL(url).scheme)
        super().__init__(verify=verify, proxy=proxy)
        self._pool._network_backend = _DeadlineBackend(deadline)  # the one hook httpcore offers for sockets
        self._cap = cap

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        response = super().handle_request(request)
        return httpx2.Response(status_code=response.status_code, headers=response.headers,
                               stream=_CappedBody(response.stream, self._cap), extensions=response.extensions)


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


class OpenAISummarizer:
    """Summarizes a plan with one Chat Completions request (retried within the timeout)."""

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint
        self.label = endpoint.label
        self._ssl = httpx2.create_ssl_context()  # loading the certificates takes a while: once, not per exchange

    def _client(self, deadline: _Deadline, cap: int) -> openai.OpenAI:
        """A client for one exchange: its sockets keep to ``deadline`` and its replies to ``cap``."""
        url = self.endpoint.base_url or f"https://{DEFAULT_HOST}/v1"
        transport = _Transport(url, deadline, cap, self._ssl)
        http = httpx2.Client(transport=transport, trust_env=False)  # the environment's proxy: see _Transport
        return openai.OpenAI(api_key=self.endpoint.api_key or PLACEHOLDER_KEY, base_url=self.endpoint.base_url or None,
                             timeout=self.endpoint.timeout, max_retries=0, http_client=http)

    def _request(self, messages: list[dict[str, str]], max_tokens: int | None) -> object:
        sent = sum(len(message["content"].encode("utf-8", "surrogatepass")) for message in messages)
        return self.send({"messages": messages, **({"max_tokens": max_tokens} if max_tokens else {})}, sent)

    def send(self, body: dict[str, Any], sent: int) -> object:
        """The completion for a Chat Completions ``body`` (its model is the endpoint's; ``sent``
        bytes of text size the reply cap), retried on a refused or dropped connection, 408/409/429
        and 5xx while time is left; every attempt and every network step in it gets only the time
        left, so ``timeout`` bounds the whole exchange. Failures raise ``SummarizerError``."""
        deadline = _Deadline()
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
                raise SummarizerError(f"{self.endpoint.where} sent a reply larger than the cap of {exc.cap:,} bytes "
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
                    raise SummarizerError(self._explain(cause, time.monotonic() - started, attempt)) from None
                previous = exc
                time.sleep(wait)
            except openai.OpenAIError as exc:
                raise SummarizerError(self._explain(exc, time.monotonic() - started, attempt)) from None
            except json.JSONDecodeError:  # a 200 whose body is not JSON (only then: see _provider_message)
                where = self.endpoint.where
                raise SummarizerError(f"{where} sent a reply that is not JSON (malformed reply)") from None

    def _complete(self, messages: list[dict[str, str]], max_tokens: int | None = None) -> str:
        response = self._request(messages, max_tokens)
        try:
            text = response.choices[0].message.content  # type: ignore[attr-defined]
        except (AttributeError, IndexError, TypeError):
            raise SummarizerError(f"{self.endpoint.where} answered without a message (malformed reply)") from None
        if not isinstance(text, str) or not text.strip():
            raise SummarizerError(f"{self.endpoint.where} answered with an empty message")
        return text

    def summarize(self, plan: Plan) -> str:
        return self._complete([{"role": "system", "content": plan.prompt},
                               {"role": "user", "content": "History to summarize:\n\n" + plan.transcript}])

    def check(self) -> str:
        """A one-word request, to test the connection, key and model before a real summary."""
        self._complete([{"role": "user", "content": "Reply with the word: ok"}], max_tokens=5)
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


def scrub(text: str, key: str | None) -> str:
    """No key in a message: ours replaced, and anything shaped like a key masked."""
    text = text.replace(key, "***") if key else text
    return _KEY_LIKE.sub("sk-***", text)
