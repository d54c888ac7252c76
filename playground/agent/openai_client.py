"""The official ``openai`` client, compacting: ``compacting(client, policy)`` gives an object the agent
uses in its place, whose ``chat.completions.create`` sends each request as replay's stored mode would.

Each call reads the caller's ``messages`` into the playground's conversation, lets the run's
``Session`` build the request replay would send at that call, writes it back as Chat Completions
messages and calls the real client with every other argument as given, returning its response (or
its stream) as it is. The caller's list and dicts are never changed: the request sent is new
objects. Everything else (``models``, ``files``, ``with_raw_response``…) is the real client's,
reached through this object, and goes around the policy. ``OpenAI`` and ``AsyncOpenAI`` share one
core (``_Completions.prepare`` and ``finish``); only the call itself differs.

The SDK is never imported here: the wrapper takes the client it is given, so ``openai`` loads only
where the caller already uses it, and any client of the same shape (an Azure or compatible one) works.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from .. import formats
from ..errors import InputError
from ..policies import Policy
from .policy_file import PolicyFile
from .record import CallRecord, append
from .session import Pending, Session

API = "chat.completions"


def compacting(client: Any, policy: Policy | PolicyFile, log: str | Path | None = None, *,
               model: str | None = None) -> Compacting:
    """``client`` (an ``openai.OpenAI`` or ``AsyncOpenAI``) with ``policy`` applied to every
    ``chat.completions.create`` as replay's stored mode applies it. ``policy``: a policy
    (``pg.make``) or a policy file (``pg.load_policy``: its model, calibration and cache model
    count and predict the calls). ``model``: whose meter counts the requests (default: the policy
    file's, else each call's ``model``). ``log``: a path each call appends one JSON line to."""
    if isinstance(policy, PolicyFile):
        if policy.mode != "stored":
            raise InputError(f"{policy.source or 'the policy file'} was replayed in {policy.mode} mode; the wrapper "
                             "runs stored mode only (set the Run view's mode to stored, or replace(policy_file, "
                             "mode='stored') to run it so)", where="replay.mode", value=policy.mode)
        session = Session(policy.make(), API, model or policy.model, policy.calibration, policy.cache)
    else:
        session = Session(policy, API, model)
    return Compacting(client, session, Path(log) if log is not None else None)


class Compacting:
    """The client an agent uses instead of its own: ``chat.completions.create`` compacts, every
    other attribute is the real client's. It owns the run (``session``: the history sent so far),
    so one ``Compacting`` is one agent run; ``with_options`` gives the same run with other options."""

    def __init__(self, client: Any, session: Session, log: Path | None) -> None:
        self._client = client
        self.session = session
        self.log = log
        self.chat = _Chat(client.chat, _Completions(client.chat.completions, session, log))

    @property
    def records(self) -> tuple[CallRecord, ...]:
        """Every call's record so far (also in ``log`` when one was given)."""
        return tuple(self.session.records)

    def with_options(self, **options: Any) -> Compacting:
        """The real client's ``with_options``, still compacting, and still this run."""
        return Compacting(self._client.with_options(**options), self.session, self.log)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


class _Chat:
    def __init__(self, chat: Any, completions: _Completions) -> None:
        self._chat = chat
        self.completions = completions

    def __getattr__(self, name: str) -> Any:
        return getattr(self._chat, name)


class _Completions:
    """``chat.completions`` with ``create`` compacting; ``create`` is a coroutine function when the
    real one is (``AsyncOpenAI``), so ``await wrapped.chat.completions.create(…)`` works as before."""

    def __init__(self, completions: Any, session: Session, log: Path | None) -> None:
        self._completions = completions
        self._session = session
        self._log = log
        real = completions.create
        self.create = self._create_async if inspect.iscoroutinefunction(real) else self._create

    def _create(self, **kwargs: Any) -> Any:
        pending, request = self.prepare(kwargs)
        response = self._completions.create(**request)
        return self.finish(pending, response)

    async def _create_async(self, **kwargs: Any) -> Any:
        pending, request = self.prepare(kwargs)
        response = await self._completions.create(**request)
        return self.finish(pending, response)

    def prepare(self, kwargs: dict[str, Any]) -> tuple[Pending | None, dict[str, Any]]:
        """The arguments to call the real client with: ``messages`` compacted, the rest as given."""
        if "messages" not in kwargs:
            return None, kwargs  # (the client's own error says what is missing)
        messages = [plain(message) for message in kwargs["messages"]]
        body: dict[str, Any] = {"messages": messages}
        if isinstance(kwargs.get("model"), str):
            body["model"] = kwargs["model"]
        tools = kwargs.get("tools")
        if isinstance(tools, Iterable) and not isinstance(tools, str | bytes | Mapping):
            body["tools"] = [plain(tool) for tool in tools]  # (counted: they are in every prompt)
        conversation = formats.chat.read(body)
        pending = self._session.prepare(conversation, stream=bool(kwargs.get("stream")))
        return pending, {**kwargs, "messages": formats.chat.write_messages(pending.sent.items)}

    def finish(self, pending: Pending | None, response: Any) -> Any:
        """The provider took the call: the run moves on, its record is kept (and logged)."""
        if pending is not None:
            usage = getattr(response, "usage", None) if not pending.record.stream else None
            record = pending.commit(plain(usage) if usage is not None else None)
            if self._log is not None:
                append(self._log, record)
        return response

    def __getattr__(self, name: str) -> Any:
        return getattr(self._completions, name)


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
