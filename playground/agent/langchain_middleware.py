"""The tuned policy inside a LangChain v1 agent: ``CompactingMiddleware``, an ``AgentMiddleware`` for
``create_agent(…, middleware=[…])`` that compacts the messages each model call sees as replay's
stored mode compacts them, and logs each call to the run log ``pg.compacting`` writes.

LangChain calls the model itself, so the middleware wraps that call (``wrap_model_call``, and
``awrap_model_call`` for ``ainvoke``/``astream``): the request's messages (its system message
first) go to the Chat Completions form with LangChain's own converter, through the same core as the
wrapped clients (``endpoint.ChatCompletions``, one ``Session`` for the run), and the request sent is
converted back and handed to the model with every other field as it was. The agent's state is never
changed: LangChain keeps the whole history, the model sees the compacted one. LangChain, which the
app does not install, is loaded when a middleware is made (``framework.load``): the class LangChain
sees is this one with ``AgentMiddleware`` under it, built then.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from ..policies import Policy
from .client import CHAT, session
from .endpoint import Call
from .framework import beneath, load
from .openai_client import ChatCompletions
from .policy_file import PolicyFile
from .record import CallRecord

INSTALL = "langchain langchain-openai"


class CompactingMiddleware:
    """``policy`` (``pg.make`` or ``pg.load_policy``) applied to every model call of one agent run,
    as replay's stored mode applies it; ``log``: the run log each call appends a line to; ``model``:
    whose meter counts the requests (default: the policy file's, else the chat model's name). One
    middleware is one run, as one wrapped client is: a history that does not extend the last call's
    starts the run again."""

    def __new__(cls, *args: Any, **kwargs: Any) -> CompactingMiddleware:
        """An instance of this class with LangChain's ``AgentMiddleware`` under it (LangChain finds a
        middleware's hooks by its class), LangChain loaded now."""
        made = cls
        if cls is CompactingMiddleware:
            made = beneath(cls, load("langchain.agents.middleware", INSTALL).AgentMiddleware)
        return super().__new__(made)

    def __init__(self, policy: Policy | PolicyFile, log: str | Path | None = None, *,
                 model: str | None = None) -> None:
        super().__init__()
        self.session = session(policy, CHAT, model)
        self.endpoint = _Chat(None, self.session, Path(log) if log is not None else None)

    @property
    def records(self) -> tuple[CallRecord, ...]:
        """Every model call's record so far (also in ``log`` when one was given)."""
        return tuple(self.session.records)

    def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        """LangChain's hook around each model call: ``request`` a ``ModelRequest``, the reply its
        ``ModelResponse``."""
        call, sent = self._prepare(request)
        return self.endpoint.finish(call, handler(sent))

    async def awrap_model_call(self, request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        call, sent = self._prepare(request)
        return self.endpoint.finish(call, await handler(sent))

    def _prepare(self, request: Any) -> tuple[Call | None, Any]:
        """The call prepared and the request to hand to the model: its messages compacted."""
        convert = load("langchain_core.messages", INSTALL)
        convert_to_openai_tool = load("langchain_core.utils.function_calling", INSTALL).convert_to_openai_tool
        system = [request.system_message] if request.system_message is not None else []
        kwargs: dict[str, Any] = {"messages": convert.convert_to_openai_messages([*system, *request.messages])}
        name = getattr(request.model, "model_name", None)
        if isinstance(name, str):
            kwargs["model"] = name
        if request.tools:
            kwargs["tools"] = [convert_to_openai_tool(tool) for tool in request.tools]
        call, compacted = self.endpoint.prepare(kwargs)
        if call is None:
            return None, request
        messages = convert.convert_to_messages(compacted["messages"])
        if system and messages and isinstance(messages[0], convert.SystemMessage):
            return call, request.override(system_message=messages[0], messages=messages[1:])
        return call, request.override(messages=messages)


class _Chat(ChatCompletions):
    """The Chat Completions endpoint whose response is LangChain's: the reply is the model's
    messages (as Chat Completions messages), the usage LangChain's ``usage_metadata``."""

    def reply(self, response: Any) -> list[Any] | None:
        return load("langchain_core.messages", INSTALL).convert_to_openai_messages(_messages(response)) or None

    def usage(self, response: Any) -> Any:
        ai = load("langchain_core.messages", INSTALL).AIMessage
        found = [message.usage_metadata for message in _messages(response)
                 if isinstance(message, ai) and message.usage_metadata]
        return dict(found[0]) if found else None


def _messages(response: Any) -> list[Any]:
    """The messages a model call gave: a ``ModelResponse``'s (inside an ``ExtendedModelResponse``
    too), or the one ``AIMessage`` a middleware further in may return instead."""
    if isinstance(response, load("langchain_core.messages", INSTALL).AIMessage):
        return [response]
    response = getattr(response, "model_response", response)
    return list(getattr(response, "result", None) or [])
