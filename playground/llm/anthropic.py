"""Anthropic's Messages API: one ``POST /v1/messages`` under the same rules as the OpenAI client.

No Anthropic SDK: the request goes through ``httpx2`` (which ``openai`` brings) with the same
transport as the OpenAI path (``transport.Transport``), so the same deadline bounds the whole exchange
(connecting, sending, every read) and the same cap bounds the reply. Every failure is one sentence
that never holds the key: a 401's words are dropped (they echo part of it), any other error keeps
the provider's ``error.message``, scrubbed like the OpenAI path's.
"""

from __future__ import annotations

import json
import time
from typing import Any

import httpx2

from .endpoint import Endpoint
from .failure import LLMError, scrub
from .transport import Deadline, ReplyTooLargeError, Transport, reply_cap

ANTHROPIC_URL = "https://api.anthropic.com"
VERSION = "2023-06-01"  # the API version header every Messages request must carry


def messages_url(base_url: str | None) -> str:
    """Where the request goes: ``…/v1/messages`` under the base URL (with or without its ``/v1``)."""
    url = (base_url or ANTHROPIC_URL).strip().rstrip("/")
    return url + ("/messages" if url.endswith("/v1") else "/v1/messages")


def _said(response: httpx2.Response) -> str:
    """The provider's own words about an error, on one short line (``error.message``), if any."""
    try:
        error = response.json().get("error")
    except (ValueError, AttributeError):
        text = " ".join(response.text.split())[:160]
        return f"the reply is not JSON: {text}" if text else ""
    said = error.get("message") if isinstance(error, dict) else None
    return " ".join(str(said).split())[:300] if said else ""


class AnthropicClient:
    """Sends Messages API bodies to one endpoint; ``send`` returns the reply's JSON object."""

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint
        self._ssl = httpx2.create_ssl_context()  # once, not per request: loading certificates takes a while

    def send(self, body: dict[str, Any], sent: int) -> dict[str, Any]:
        """The reply to ``body`` (its model is the endpoint's; ``sent`` bytes of text size the reply
        cap). One attempt within ``timeout``; failures raise ``LLMError``."""
        url, where, timeout = messages_url(self.endpoint.base_url), self.endpoint.where, self.endpoint.timeout
        headers = {"anthropic-version": VERSION, "content-type": "application/json"}
        if self.endpoint.api_key:
            headers["x-api-key"] = self.endpoint.api_key
        deadline = Deadline()
        transport = Transport(url, deadline, reply_cap(sent), self._ssl)
        started = time.monotonic()
        try:
            with httpx2.Client(transport=transport, trust_env=False) as client:
                deadline.at = time.monotonic() + timeout
                response = client.post(url, content=json.dumps({**body, "model": self.endpoint.model}).encode(),
                                       headers=headers, timeout=timeout)
        except ReplyTooLargeError as exc:
            raise LLMError(f"{where} sent a reply larger than the cap of {exc.cap:,} bytes; stopped "
                                  "reading there") from None
        except httpx2.TimeoutException:
            raise LLMError(f"{where} did not answer: gave up after {time.monotonic() - started:.1f} s (the "
                                  f"timeout of {timeout:g} s is the whole wait)") from None
        except httpx2.ConnectError:
            raise LLMError(f"could not connect to {where} (is the server running, and is the base URL "
                                  "right?)") from None
        except httpx2.HTTPError as exc:
            raise LLMError(f"the connection to {where} failed ({type(exc).__name__})") from None
        return self._reply(response)

    def _reply(self, response: httpx2.Response) -> dict[str, Any]:
        where, status = self.endpoint.where, response.status_code
        if status == 401:
            raise LLMError(f"{where} refused the API key (401): check the key")
        if status >= 400:
            said = _said(response)
            raise LLMError(scrub(f"{where} answered with an error ({status})" + (f": {said}" if said else ""),
                                        self.endpoint.api_key))
        try:
            reply = response.json()
        except ValueError:
            raise LLMError(f"{where} sent a reply that is not JSON (malformed reply)") from None
        if not isinstance(reply, dict) or not isinstance(reply.get("content"), list):
            raise LLMError(f"{where} sent a reply that is not a Messages API message (malformed reply)")
        return reply
