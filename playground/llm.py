"""An OpenAI-compatible endpoint as a summarizer: OpenAI, Azure, Ollama, vLLM, LM Studio — any
server that speaks Chat Completions, through the ``openai`` package and its ``base_url``.

Every failure becomes one clear sentence (bad key, unknown model, rate limit, refused
connection, timeout, an empty or malformed reply) that keeps the provider's own words when it
sent some (a 400 "maximum context length" says so). The API key never appears in a message.

``timeout`` is the whole wait, retries included: the client itself never retries, our loop does,
and each attempt may use only the time left. (A server that keeps trickling bytes can stretch one
attempt, as httpx's timeouts are per read; a silent or hung server cannot.)
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field

import openai

from .keys import DEFAULT_HOST, without_credentials
from .summarize import Plan, SummarizerError

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
    (openai.APIConnectionError, "could not connect to {where} (is the server running, and is the base URL right?)"),
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
        self._client = openai.OpenAI(api_key=endpoint.api_key or PLACEHOLDER_KEY, base_url=endpoint.base_url or None,
                                     timeout=endpoint.timeout, max_retries=0)

    def _request(self, messages: list[dict[str, str]], max_tokens: int | None) -> object:
        """The completion, retried on a refused connection, 408/409/429 and 5xx while time is
        left; each attempt gets only the time left, so ``timeout`` bounds the whole wait."""
        started = time.monotonic()
        deadline = started + self.endpoint.timeout
        attempt = 0
        while True:
            attempt += 1
            try:
                return self._client.chat.completions.create(
                    model=self.endpoint.model, messages=messages, timeout=max(deadline - time.monotonic(), 0.001),
                    **({"max_tokens": max_tokens} if max_tokens else {}))
            except (openai.APITimeoutError, openai.APIConnectionError, openai.APIStatusError) as exc:
                status = getattr(exc, "status_code", None)
                retryable = (status in _RETRYABLE_STATUS if isinstance(exc, openai.APIStatusError)
                             else not isinstance(exc, openai.APITimeoutError))
                wait = _BACKOFF * 2 ** (attempt - 1)
                if isinstance(exc, openai.APIStatusError):
                    wait = _retry_after(exc) or wait
                if not retryable or attempt > self.endpoint.max_retries or time.monotonic() + wait >= deadline:
                    raise SummarizerError(self._explain(exc, time.monotonic() - started, attempt)) from None
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
        template = next((text for kind, text in _EXPLANATIONS if isinstance(exc, kind)),
                        "the request to {where} failed ({kind})")
        sentence = template.format(**facts)
        if isinstance(exc, openai.APIStatusError) and not isinstance(exc, openai.AuthenticationError):
            said = _provider_message(exc)
            sentence += f": {said}" if said else ""
        return self._scrub(sentence)

    def _scrub(self, text: str) -> str:
        """No key in a message: ours replaced, and anything shaped like a key masked."""
        key = self.endpoint.api_key
        text = text.replace(key, "***") if key else text
        return _KEY_LIKE.sub("sk-***", text)
