"""``compacting(client, policy)``: an official ``openai`` or ``anthropic`` client (sync or async)
whose requests are compacted as replay's stored mode compacts them, and everything else its own.

The wrapper gives the agent an object to use in the client's place: ``chat.completions.create`` and
``responses.create`` (``openai``), ``messages.create`` and ``messages.stream`` (``anthropic``)
compact, through one core (``endpoint``); every other attribute (``models``, ``files``,
``with_raw_response``…) is the real client's, reached through this object, and goes around the
policy. Which endpoints there are is read from the client's shape, so no SDK is imported here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import InputError
from ..policies import Policy
from ..recall import RecallStore
from .anthropic_client import Messages
from .openai_client import ChatCompletions, Responses
from .policy_file import PolicyFile
from .record import CallRecord
from .session import Session

CHAT, RESPONSES, MESSAGES = "chat.completions", "responses", "messages"
APIS = (CHAT, RESPONSES, MESSAGES)


def compacting(client: Any, policy: Policy | PolicyFile, log: str | Path | None = None, *,
               model: str | None = None, recall: RecallStore | None = None) -> Compacting:
    """``client`` (``openai.OpenAI`` or ``AsyncOpenAI``, ``anthropic.Anthropic`` or ``AsyncAnthropic``)
    with ``policy`` applied to every request as replay's stored mode applies it. ``policy``: a policy
    (``pg.make``; the endpoints share it) or a policy file (``pg.load_policy``: a policy of its own
    per endpoint, and its model, calibration and cache model count and predict the calls).
    ``model``: whose meter counts the requests (default: the policy file's, else each call's
    ``model``). ``log``: a path each call appends one JSON line to (a run ``replay`` reads).
    ``recall``: a ``RecallStore`` that keeps every original a reference naming its key replaced
    (``{recall_key}`` in a rule's template); from the first such reference on, each request offers
    the ``recall`` tool, which ``client.recall.answer(arguments)`` answers."""
    return Compacting(client, {api: session(policy, api, model) for api in APIS},
                      Path(log) if log is not None else None, recall)


def session(policy: Policy | PolicyFile, api: str, model: str | None = None) -> Session:
    """A run's session on ``api`` under ``policy``, as ``compacting`` opens one per endpoint (and
    each framework adapter one for its model calls): a policy file gives a fresh policy, its model,
    calibration and cache model, and is refused unless it was replayed in stored mode."""
    if not isinstance(policy, PolicyFile):
        return Session(policy, api, model)
    if policy.mode != "stored":
        raise InputError(f"{policy.source or 'the policy file'} was replayed in {policy.mode} mode; the wrapper "
                         "runs stored mode only (set the Run view's mode to stored, or replace(policy_file, "
                         "mode='stored') to run it so)", where="replay.mode", value=policy.mode)
    return Session(policy.make(), api, model or policy.model, policy.calibration, policy.cache)


class Compacting:
    """The client an agent uses instead of its own: the endpoints it has compact, every other
    attribute is the real client's. It owns the run (``sessions``: per endpoint, the history sent so
    far), so one ``Compacting`` is one agent run; ``with_options`` gives the same run with other
    options."""

    def __init__(self, client: Any, sessions: dict[str, Session], log: Path | None,
                 recall: RecallStore | None = None) -> None:
        self._client = client
        self.sessions = sessions
        self.log = log
        self.recall = recall  # the store the ``recall`` tool reads (None: no recall)
        if hasattr(client, "chat"):
            self.chat = _Proxy(client.chat, completions=ChatCompletions(client.chat.completions, sessions[CHAT], log,
                                                                        recall))
        if hasattr(client, "responses"):
            self.responses = Responses(client.responses, sessions[RESPONSES], log, recall)
        if hasattr(client, "messages"):
            self.messages = Messages(client.messages, sessions[MESSAGES], log, recall)

    @property
    def records(self) -> tuple[CallRecord, ...]:
        """Every call's record so far, endpoint by endpoint (also in ``log`` when one was given)."""
        return tuple(record for session in self.sessions.values() for record in session.records)

    def with_options(self, **options: Any) -> Compacting:
        """The real client's ``with_options``, still compacting, and still this run."""
        return Compacting(self._client.with_options(**options), self.sessions, self.log, self.recall)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


class _Proxy:
    """The real object, with some attributes replaced."""

    def __init__(self, real: Any, **replaced: Any) -> None:
        self._real = real
        self.__dict__.update(replaced)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)
