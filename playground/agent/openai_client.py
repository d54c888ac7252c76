"""The official ``openai`` client's two compacting endpoints: ``chat.completions`` (the request is
``messages``) and ``responses`` (``input`` after ``instructions``). Each only reads its request into
a conversation, writes the one to send back, and finds the reply in a response; the rest is the
shared core (``endpoint``). The SDK is never imported here: the wrapper takes the client it is
given, so any client of the same shape (an Azure or compatible one) works.
"""

from __future__ import annotations

from typing import Any

from .. import formats
from ..conversation import Conversation, Item
from .endpoint import Endpoint, body, plain
from .growing import Written

__all__ = ["ChatCompletions", "Responses", "plain"]


class ChatCompletions(Endpoint):
    """``chat.completions``: the request is ``messages``."""

    def read(self, kwargs: dict[str, Any]) -> Conversation | None:
        return formats.chat.read(body(kwargs, {"messages": []}))

    def read_items(self, wire: list[Any], start: int, latest: dict[str, str]) -> tuple[Item, ...]:
        return formats.chat.read_items(wire, start, latest)

    def writer(self) -> Written:
        return Written(formats.chat.write_messages, formats.chat.begins_message)


    def reply(self, response: Any) -> list[Any] | None:
        choices = getattr(response, "choices", None)
        return [plain(choices[0].message)] if choices else None


class Responses(Endpoint):
    """``responses``: the request is ``input`` (a list of items; a string is one message, sent as it
    is) after ``instructions``. A call that continues a stored response (``previous_response_id``,
    ``conversation``) sends only its new items, the history being the provider's: it goes as it is."""

    key = "input"

    def read(self, kwargs: dict[str, Any]) -> Conversation | None:
        if kwargs.get("previous_response_id") or kwargs.get("conversation"):
            return None
        return formats.responses.read(self.head(kwargs) | {"input": []})

    def read_items(self, wire: list[Any], start: int, latest: dict[str, str]) -> tuple[Item, ...]:
        return formats.responses.read_items(wire, start, latest)

    def writer(self) -> Written:
        return Written(formats.responses.write_items, lambda items, position: True)  # (one wire item per item)


    def head(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        found = body(kwargs, {})
        if isinstance(kwargs.get("instructions"), str):
            found["instructions"] = kwargs["instructions"]
        return found

    def reply(self, response: Any) -> list[Any] | None:
        output = getattr(response, "output", None)
        return plain(output) if isinstance(output, list) else None
