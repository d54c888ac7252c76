"""The official ``anthropic`` client's compacting endpoint: ``messages`` (the request is
``messages`` after ``system``), with ``create`` (streamed or not) and the ``stream`` helper.

``messages.stream(…)`` returns the SDK's context manager, which sends the request only when it is
entered: the wrapper's manager enters the real one and commits the call when the block ends, with
the message the stream assembled (its usage, its reply for the log), so a stream the caller left
early still counts as the call the provider took. The SDK is never imported: ``anthropic`` is an
optional extra (``requirements-anthropic.txt``), loaded only where the caller already uses it.
"""

from __future__ import annotations

from typing import Any

from .. import formats
from ..conversation import Conversation, Item
from .endpoint import Call, Endpoint, body, plain
from .growing import Written


class Messages(Endpoint):
    """``messages``: the request is ``messages``; ``system`` (a string or text blocks) stays as given."""

    def read(self, kwargs: dict[str, Any]) -> Conversation | None:
        return formats.anthropic.read(self.head(kwargs) | {"messages": []})

    def read_items(self, wire: list[Any], start: int, latest: dict[str, str]) -> tuple[Item, ...]:
        return formats.anthropic.read_items(wire, start, latest)

    def writer(self) -> Written:
        return Written(formats.anthropic.write_messages, formats.anthropic.begins_message)


    def head(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        found = body(kwargs, {})
        if isinstance(kwargs.get("system"), str | list):
            found["system"] = plain(kwargs["system"])
        return found

    def reply(self, response: Any) -> list[Any] | None:
        content = getattr(response, "content", None)
        return [{"role": "assistant", "content": plain(content)}] if isinstance(content, list) else None

    def stream(self, **kwargs: Any) -> Any:
        """The real ``stream`` helper's manager, compacting: entered, it sends the request replay
        would send; left, the call is committed with the message the stream assembled."""
        call, request = self.prepare({**kwargs, "stream": True})
        request.pop("stream")
        manager = self._real.stream(**request)
        return (_AsyncStreamManager if hasattr(manager, "__aenter__") else _StreamManager)(self, call, manager)


def _snapshot(stream: Any) -> Any:
    """The message a stream has assembled so far (None: not begun)."""
    try:
        return stream.current_message_snapshot
    except AssertionError:  # (the SDK asserts there is one)
        return None


class _StreamManager:
    """``with wrapped.messages.stream(…) as stream``: the real manager, committing on the way out."""

    def __init__(self, endpoint: Messages, call: Call | None, manager: Any) -> None:
        self._endpoint, self._call, self._manager = endpoint, call, manager
        self._stream: Any = None

    def __enter__(self) -> Any:
        self._stream = self._manager.__enter__()
        return self._stream

    def __exit__(self, *exc: object) -> None:
        self._manager.__exit__(*exc)
        self._commit()

    def _commit(self) -> None:
        message = _snapshot(self._stream)
        reply = self._endpoint.reply(message) if message is not None else None
        self._endpoint.finish(self._call, self._stream, reply, getattr(message, "usage", None))


class _AsyncStreamManager(_StreamManager):
    """``async with wrapped.messages.stream(…) as stream`` (``AsyncAnthropic``)."""

    async def __aenter__(self) -> Any:
        self._stream = await self._manager.__aenter__()
        return self._stream

    async def __aexit__(self, *exc: object) -> None:
        await self._manager.__aexit__(*exc)
        self._commit()
