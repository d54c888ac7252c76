"""The official ``openai`` client, compacting: ``compacting(client, policy)`` gives an object the agent
uses in its place, whose ``chat.completions.create`` and ``responses.create`` send each request as
replay's stored mode would.

Each call reads the caller's request (``messages``; ``input`` and ``instructions``) into the
playground's conversation, lets the run's ``Session`` for that endpoint build the request replay
would send at that call, writes it back in the endpoint's own form and calls the real client with
every other argument as given, returning its response (or its stream) as it is. The caller's list
and dicts are never changed: the request sent is new objects. Everything else (``models``, ``files``,
``with_raw_response``…) is the real client's, reached through this object, and goes around the
policy. ``OpenAI`` and ``AsyncOpenAI``, Chat Completions and Responses share one core
(``_Endpoint.prepare`` and ``finish``); only the call itself, and each API's reading and writing, differ.

The SDK is never imported here: the wrapper takes the client it is given, so ``openai`` loads only
where the caller already uses it, and any client of the same shape (an Azure or compatible one) works.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from .. import formats
from ..conversation import Conversation
from ..errors import InputError
from ..policies import Policy
from .policy_file import PolicyFile
from .record import CallRecord, append
from .session import Pending, Session

CHAT, RESPONSES = "chat.completions", "responses"


def compacting(client: Any, policy: Policy | PolicyFile, log: str | Path | None = None, *,
               model: str | None = None) -> Compacting:
    """``client`` (an ``openai.OpenAI`` or ``AsyncOpenAI``) with ``policy`` applied to every
    ``chat.completions.create`` and ``responses.create`` as replay's stored mode applies it.
    ``policy``: a policy (``pg.make``; the two endpoints share it) or a policy file
    (``pg.load_policy``: a policy of its own per endpoint, and its model, calibration and cache model
    count and predict the calls). ``model``: whose meter counts the requests (default: the policy
    file's, else each call's ``model``). ``log``: a path each call appends one JSON line to."""
    if isinstance(policy, PolicyFile):
        if policy.mode != "stored":
            raise InputError(f"{policy.source or 'the policy file'} was replayed in {policy.mode} mode; the wrapper "
                             "runs stored mode only (set the Run view's mode to stored, or replace(policy_file, "
                             "mode='stored') to run it so)", where="replay.mode", value=policy.mode)
        sessions = {api: Session(policy.make(), api, model or policy.model, policy.calibration, policy.cache)
                    for api in (CHAT, RESPONSES)}
    else:
        sessions = {api: Session(policy, api, model) for api in (CHAT, RESPONSES)}
    return Compacting(client, sessions, Path(log) if log is not None else None)


class Compacting:
    """The client an agent uses instead of its own: ``chat.completions.create`` and
    ``responses.create`` compact, every other attribute is the real client's. It owns the run
    (``sessions``: per endpoint, the history sent so far), so one ``Compacting`` is one agent run;
    ``with_options`` gives the same run with other options."""

    def __init__(self, client: Any, sessions: dict[str, Session], log: Path | None) -> None:
        self._client = client
        self.sessions = sessions
        self.log = log
        self.chat = _Proxy(client.chat, completions=_ChatCompletions(client.chat.completions, sessions[CHAT], log))
        if hasattr(client, "responses"):
            self.responses = _Responses(client.responses, sessions[RESPONSES], log)

    @property
    def records(self) -> tuple[CallRecord, ...]:
        """Every call's record so far, Chat Completions' first (also in ``log`` when one was given)."""
        return tuple(record for session in self.sessions.values() for record in session.records)

    def with_options(self, **options: Any) -> Compacting:
        """The real client's ``with_options``, still compacting, and still this run."""
        return Compacting(self._client.with_options(**options), self.sessions, self.log)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


class _Proxy:
    """The real object, with some attributes replaced."""

    def __init__(self, real: Any, **replaced: Any) -> None:
        self._real = real
        self.__dict__.update(replaced)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


class _Endpoint:
    """One endpoint's ``create``, compacting, the rest of it the real one's. The one core both
    clients share: ``create`` is a coroutine function when the real one is (``AsyncOpenAI``), so
    ``await wrapped.chat.completions.create(…)`` works as before; each API only says how its request
    is read (``read``) and written back (``write``)."""

    def __init__(self, real: Any, session: Session, log: Path | None) -> None:
        self._real = real
        self._session = session
        self._log = log
        self.create = self._create_async if inspect.iscoroutinefunction(real.create) else self._create

    def _create(self, **kwargs: Any) -> Any:
        pending, request = self.prepare(kwargs)
        return self.finish(pending, self._real.create(**request))

    async def _create_async(self, **kwargs: Any) -> Any:
        pending, request = self.prepare(kwargs)
        return self.finish(pending, await self._real.create(**request))

    def read(self, kwargs: dict[str, Any]) -> Conversation | None:
        """The caller's request as a conversation; None: nothing to compact (it goes as it is)."""
        raise NotImplementedError

    def write(self, kwargs: dict[str, Any], sent: Conversation) -> dict[str, Any]:
        """The caller's arguments with the request replaced by ``sent``."""
        raise NotImplementedError

    def prepare(self, kwargs: dict[str, Any]) -> tuple[Pending | None, dict[str, Any]]:
        """The arguments to call the real client with: the request compacted, the rest as given."""
        conversation = self.read(kwargs)
        if conversation is None:
            return None, kwargs
        pending = self._session.prepare(conversation, stream=bool(kwargs.get("stream")))
        return pending, self.write(kwargs, pending.sent)

    def finish(self, pending: Pending | None, response: Any) -> Any:
        """The provider took the call: the run moves on, its record is kept (and logged)."""
        if pending is not None:
            usage = getattr(response, "usage", None) if not pending.record.stream else None
            record = pending.commit(plain(usage) if usage is not None else None)
            if self._log is not None:
                append(self._log, record)
        return response

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


def _body(kwargs: dict[str, Any], key: str, value: list[Any]) -> dict[str, Any]:
    """A request body for a format's reader: the request (``key``), the model and the tools (counted:
    they are in every prompt), each as the SDK would send it."""
    body: dict[str, Any] = {key: value}
    if isinstance(kwargs.get("model"), str):
        body["model"] = kwargs["model"]
    tools = kwargs.get("tools")
    if isinstance(tools, Iterable) and not isinstance(tools, str | bytes | Mapping):
        body["tools"] = [plain(tool) for tool in tools]
    return body


class _ChatCompletions(_Endpoint):
    """``chat.completions``: the request is ``messages``."""

    def read(self, kwargs: dict[str, Any]) -> Conversation | None:
        if "messages" not in kwargs:
            return None  # (the client's own error says what is missing)
        return formats.chat.read(_body(kwargs, "messages", [plain(message) for message in kwargs["messages"]]))

    def write(self, kwargs: dict[str, Any], sent: Conversation) -> dict[str, Any]:
        return {**kwargs, "messages": formats.chat.write_messages(sent.items)}


class _Responses(_Endpoint):
    """``responses``: the request is ``input`` (a list of items; a string is one message, sent as it
    is) after ``instructions``. A call that continues a stored response (``previous_response_id``,
    ``conversation``) sends only its new items, the history being the provider's: it goes as it is."""

    def read(self, kwargs: dict[str, Any]) -> Conversation | None:
        given = kwargs.get("input")
        if isinstance(given, str | bytes | Mapping) or not isinstance(given, Iterable) or \
                kwargs.get("previous_response_id") or kwargs.get("conversation"):
            return None
        body = _body(kwargs, "input", [plain(item) for item in given])
        if isinstance(kwargs.get("instructions"), str):
            body["instructions"] = kwargs["instructions"]
        return formats.responses.read(body)

    def write(self, kwargs: dict[str, Any], sent: Conversation) -> dict[str, Any]:
        return {**kwargs, "input": formats.responses.write(replace(sent, bare=True))}


def plain(value: Any) -> Any:
    """``value`` as the JSON the SDK sends for it: a pydantic model (the ``ChatCompletionMessage`` an
    agent appends from a reply) dumped as the SDK dumps it (fields it was given, JSON mode); lists
    and dicts copied on the way, so nothing the caller holds is shared with the request sent."""
    dump = getattr(value, "model_dump", None)
    if callable(dump) and not isinstance(value, type):
        value = dump(exclude_unset=True, mode="json", exclude=getattr(value, "__api_exclude__", None))
    if isinstance(value, Mapping):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    return value
