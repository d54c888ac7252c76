"""One endpoint of a wrapped client, compacting: the core every API shares.

Each call reads the caller's request into the playground's conversation (``read``), lets the run's
``Session`` for that endpoint build the request replay's stored mode would send at that call, writes
it back in the endpoint's own form (``write``) and calls the real endpoint with every other argument
as given, returning its response (or its stream) as it is. The caller's list and dicts are never
changed: the request sent is new objects. Once the provider took the call, the run moves on and the
call's log line is written (``finish``): its figures, what the caller's request added since the last
call and the reply, so the log rebuilds the run (``formats.agent_run``). Only how each API reads,
writes and finds its reply differs (``openai_client``, ``anthropic_client``).
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..conversation import Conversation, Item
from ..recall import RecallStore
from .growing import Seen, Written
from .recalling import keep, with_tool
from .record import append
from .session import Pending, Session


class Endpoint:
    """One endpoint's ``create``, compacting, the rest of it the real one's. ``create`` is a
    coroutine function when the real one is (``AsyncOpenAI``, ``AsyncAnthropic``), so ``await
    wrapped….create(…)`` works as before. A framework's adapter, whose framework calls the model
    itself, gives no real endpoint (``real=None``) and calls ``prepare`` and ``finish`` around it."""

    key = "messages"  # the request's argument: the list the caller's history is in

    def __init__(self, real: Any, session: Session, log: Path | None, recall: RecallStore | None = None) -> None:
        self._real = real
        self._session = session
        self._log = log
        self._recall = recall
        self._seen = Seen()  # the caller's list as last read
        self.written = self.writer()  # the request's list as last written
        if real is not None:
            self.create = self._create_async if inspect.iscoroutinefunction(inspect.unwrap(real.create)) \
                else self._create

    def _create(self, **kwargs: Any) -> Any:
        call, request = self.prepare(kwargs)
        return self.finish(call, self._real.create(**request))

    async def _create_async(self, **kwargs: Any) -> Any:
        call, request = self.prepare(kwargs)
        return self.finish(call, await self._real.create(**request))

    def read(self, kwargs: dict[str, Any]) -> Conversation | None:
        """The caller's request without its list's items (model, tools, instructions) as a
        conversation; None: nothing to compact (it goes as it is)."""
        raise NotImplementedError

    def read_items(self, wire: list[Any], start: int, latest: dict[str, str]) -> tuple[Item, ...]:
        """The items of the caller's list (``wire``: as the SDK sends it, from its index ``start``
        on), linked after the calls so far (``latest``): the format's incremental read."""
        raise NotImplementedError

    def write(self, kwargs: dict[str, Any], pending: Pending) -> dict[str, Any]:
        """The caller's arguments with the request's list replaced by what ``pending`` sends (written
        by ``self.written``, from where it differs from the last request)."""
        return {**kwargs, self.key: self.written(pending.sent.items, pending.prompts.shares)}

    def head(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        """What the request holds besides its list that the run needs again (model, tools,
        instructions), as the SDK sends it: logged whenever it changes."""
        return body(kwargs, {})

    def writer(self) -> Written:
        """What writes the request's list, carried from call to call."""
        raise NotImplementedError

    def reply(self, response: Any) -> list[Any] | None:
        """The provider's reply as items of the request's list, for the log (None: not known)."""
        raise NotImplementedError

    def usage(self, response: Any) -> Any:
        """The provider's counts in ``response``, for the log (None: not known)."""
        return getattr(response, "usage", None)

    def prepare(self, kwargs: dict[str, Any]) -> tuple[Call | None, dict[str, Any]]:
        """The arguments to call the real client with: the request compacted, the rest as given."""
        given = kwargs.get(self.key)
        if isinstance(given, str | bytes | Mapping) or not isinstance(given, Iterable):
            return None, kwargs  # (not a list: the client's own error, or a string sent as it is)
        conversation = self.read(kwargs)
        if conversation is None:
            return None, kwargs
        conversation = self._seen.read(given, plain, self.read_items, conversation.grown)
        pending = self._session.prepare(conversation, stream=bool(kwargs.get("stream")))
        request = self.write(kwargs, pending)
        if self._recall is not None:  # originals behind a reference with a key are stored before the model sees it
            if keep(self._recall, pending.record.edits, pending.request, pending.sent.items):
                self._session.recalling = True
            if self._session.recalling:
                request = with_tool(request, self._session.api)
        return Call(pending, _added(pending, self._seen.wire), self.head(kwargs)), request

    def finish(self, call: Call | None, response: Any, reply: list[Any] | None = None,
               usage: Any = None) -> Any:
        """The provider took the call: the run moves on, its record is kept (and logged)."""
        if call is not None:
            if not call.pending.record.stream:  # (the reply is only the log's: not dumped for no log)
                usage, reply = self.usage(response), self.reply(response) if self._log is not None else None
            record = call.pending.commit(plain(usage) if usage is not None else None)
            if self._log is not None:
                head = self._session.head_to_log(call.head)
                append(self._log, record, call.added, head, reply)
        return response

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


@dataclass(frozen=True)
class Call:
    """A call prepared: the session's pending call, what the caller's list added since the last
    call (``_added``) and the request's head, kept for its log line."""

    pending: Pending
    added: tuple[int, list[Any]]
    head: dict[str, Any]


def _added(pending: Pending, wire: list[Any]) -> tuple[int, list[Any]]:
    """Where the caller's list (``wire``: as the SDK sends it) first holds what the last call had
    not (its index) and that part: the log appends only it, so it grows with the run, not with the
    run's square."""
    given, seen = pending.given, pending.seen
    origin = given[seen].origin if seen < len(given) else None
    at = origin.index if origin is not None else len(wire)
    return at, wire[at:]


def body(kwargs: dict[str, Any], fields: dict[str, Any]) -> dict[str, Any]:
    """A request body for a format's reader: ``fields`` (the request), the model and the tools
    (counted: they are in every prompt), each as the SDK would send it."""
    found = dict(fields)
    if isinstance(kwargs.get("model"), str):
        found["model"] = kwargs["model"]
    tools = kwargs.get("tools")
    if isinstance(tools, Iterable) and not isinstance(tools, str | bytes | Mapping):
        found["tools"] = [plain(tool) for tool in tools]
    return found


def plain(value: Any) -> Any:
    """``value`` as the JSON the SDK sends for it: a pydantic model (the ``ChatCompletionMessage`` or
    the content blocks an agent appends from a reply) dumped as the SDK dumps it (fields it was
    given, JSON mode); lists and dicts copied on the way, so nothing the caller holds is shared with
    the request sent."""
    dump = getattr(value, "model_dump", None)
    if callable(dump) and not isinstance(value, type):
        value = dump(exclude_unset=True, mode="json", exclude=getattr(value, "__api_exclude__", None))
    if isinstance(value, Mapping):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    return value
