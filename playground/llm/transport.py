"""The transport every LLM client here sends through: httpx's, with one deadline on every network
step and a cap in bytes on the reply.

``timeout`` is a deadline on the whole exchange, retries included: each network step (connecting,
sending, each read) may use only the time left (``DeadlineBackend``), so a server trickling one
byte every half second is cut off at the deadline like a silent one. A reply is capped in bytes
(``reply_cap``): a summary or a next step longer than the request it answers is of no use, and a
server sending gigabytes is stopped after the cap without holding more than the cap in memory.
"""

from __future__ import annotations

import math
import ssl
import time
import urllib.request
from collections.abc import Iterator
from typing import Any

import httpcore2
import httpx2

from ..limits import MB

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


class Deadline:
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


class DeadlineStream(httpcore2.NetworkStream):
    """A socket whose every read and write may take only the time left before the deadline."""

    def __init__(self, stream: httpcore2.NetworkStream, deadline: Deadline) -> None:
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
        return DeadlineStream(self._stream.start_tls(ssl_context, server_hostname, left), self._deadline)

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class DeadlineBackend(httpcore2.SyncBackend):
    """Connections whose every step ends by the deadline (httpx's own timeouts are per step)."""

    def __init__(self, deadline: Deadline) -> None:
        self._deadline = deadline

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Any = None) -> httpcore2.NetworkStream:
        left = self._deadline.left(timeout, httpcore2.ConnectTimeout)
        return DeadlineStream(super().connect_tcp(host, port, left, local_address, socket_options), self._deadline)


class CappedBody(httpx2.SyncByteStream):
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


class Transport(httpx2.HTTPTransport):
    """httpx's transport with the deadline on every network step and the cap on the body. The
    proxy is the one the environment names for this URL (as httpx itself would choose)."""

    def __init__(self, url: str, deadline: Deadline, cap: int, verify: ssl.SSLContext) -> None:
        host = httpx2.URL(url).host
        proxies = urllib.request.getproxies()
        proxy = None if urllib.request.proxy_bypass(host) else proxies.get(httpx2.URL(url).scheme)
        super().__init__(verify=verify, proxy=proxy)
        self._pool._network_backend = DeadlineBackend(deadline)  # the one hook httpcore offers for sockets
        self._cap = cap

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        response = super().handle_request(request)
        return httpx2.Response(status_code=response.status_code, headers=response.headers,
                               stream=CappedBody(response.stream, self._cap), extensions=response.extensions)
