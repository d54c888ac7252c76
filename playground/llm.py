"""An OpenAI-compatible endpoint as a summarizer: OpenAI, Azure, Ollama, vLLM, LM Studio — any
server that speaks Chat Completions, through the ``openai`` package and its ``base_url``.

Every failure becomes one clear sentence (bad key, unknown model, rate limit, refused
connection, timeout, an empty or malformed reply). The API key never appears in a message.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import openai

from .summarize import Plan, SummarizerError

DEFAULT_TIMEOUT = 60.0
DEFAULT_RETRIES = 2  # the openai client retries 408/409/429/5xx and timeouts with backoff
PLACEHOLDER_KEY = "not-needed"  # local servers (Ollama, vLLM, LM Studio) accept any key


@dataclass(frozen=True)
class Endpoint:
    model: str
    base_url: str | None = None  # None: api.openai.com
    api_key: str | None = field(default=None, repr=False)
    timeout: float = DEFAULT_TIMEOUT
    max_retries: int = DEFAULT_RETRIES

    @property
    def where(self) -> str:
        if not self.base_url:
            return "api.openai.com"
        parts = urlsplit(self.base_url)
        return parts.netloc or self.base_url

    @property
    def label(self) -> str:
        return f"LLM summary — {self.model} at {self.where}"


def key_from_environment() -> str | None:
    return os.environ.get("OPENAI_API_KEY") or None


# First match wins: the subclasses (timeout, 401…) come before their parents.
_EXPLANATIONS: tuple[tuple[type[Exception], str], ...] = (
    (openai.APITimeoutError, "{where} did not answer within {timeout:g} s (timeout)"),
    (openai.APIConnectionError, "could not connect to {where} (is the server running, and is the base URL right?)"),
    (openai.AuthenticationError, "{where} refused the API key (401): check the key"),
    (openai.PermissionDeniedError, "{where} denied access (403): the key may not be allowed to use {model}"),
    (openai.NotFoundError, "{where} does not know the model {model!r} or the path (404)"),
    (openai.RateLimitError, "{where} is rate limiting requests (429): wait and try again"),
    (openai.APIStatusError, "{where} answered with an error ({status})"),
    (openai.APIResponseValidationError, "{where} sent a reply that is not a valid chat completion (malformed reply)"),
)


class OpenAISummarizer:
    """Summarizes a plan with one Chat Completions request."""

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint
        self.label = endpoint.label
        self._client = openai.OpenAI(
            api_key=endpoint.api_key or PLACEHOLDER_KEY,
            base_url=endpoint.base_url or None,
            timeout=endpoint.timeout,
            max_retries=endpoint.max_retries,
        )

    def _complete(self, messages: list[dict[str, str]], max_tokens: int | None = None) -> str:
        try:
            response = self._client.chat.completions.create(model=self.endpoint.model, messages=messages,
                                                            **({"max_tokens": max_tokens} if max_tokens else {}))
        except openai.OpenAIError as exc:
            raise SummarizerError(self._explain(exc)) from None
        except ValueError:  # a 200 whose body is not JSON
            raise SummarizerError(f"{self.endpoint.where} sent a reply that is not JSON (malformed reply)") from None
        try:
            text = response.choices[0].message.content
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

    def _explain(self, exc: openai.OpenAIError) -> str:
        """One sentence built from what we know (never from the exception's text, which may
        echo request details)."""
        facts = {"where": self.endpoint.where, "model": self.endpoint.model, "timeout": self.endpoint.timeout,
                 "status": getattr(exc, "status_code", "?"), "kind": type(exc).__name__}
        template = next((text for kind, text in _EXPLANATIONS if isinstance(exc, kind)),
                        "the request to {where} failed ({kind})")
        return self._scrub(template.format(**facts))

    def _scrub(self, text: str) -> str:
        key = self.endpoint.api_key
        return text.replace(key, "***") if key else text
