"""The tuned policy inside an OpenAI Agents SDK run: ``CompactingFilter``, given to
``RunConfig(call_model_input_filter=…)`` and, for its log, to ``Runner.run(…, hooks=…)``.

The SDK hands the filter the input of each model call (the run's items in the Responses form, and
the agent's instructions) just before the call; the filter sends back the input replay's stored
mode would send at that call, through the same core as the wrapped clients (``endpoint.Responses``,
one ``Session`` for the run). The SDK keeps its own history whole; only the model sees the compacted
one, in whatever form the agent's model speaks (``OpenAIChatCompletionsModel`` converts it to Chat
Completions messages). A filter does not see the reply, so the same object is also the run's
``RunHooks``: ``on_llm_end`` commits the call the filter prepared, with the provider's usage and the
reply for the log; a call that failed never reaches it and is no call of the run. The SDK
(``openai-agents``), which the app does not install, is loaded when a filter is made
(``framework.load``): the class the SDK sees is this one with ``RunHooks`` under it, built then.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from ..policies import Policy
from .client import RESPONSES, session
from .endpoint import Call, plain
from .framework import beneath, load
from .openai_client import Responses
from .policy_file import PolicyFile
from .record import CallRecord


class CompactingFilter:
    """``policy`` (``pg.make`` or ``pg.load_policy``) applied to every model call of one run, as
    replay's stored mode applies it: ``RunConfig(call_model_input_filter=it)`` compacts, and
    ``hooks=it`` commits each call the provider took (without it, ``records`` and the log stay
    empty). ``log``: the run log each call appends a line to; ``model``: whose meter counts the
    requests (default: the policy file's, else the agent's model name). One filter is one run."""

    def __new__(cls, *args: Any, **kwargs: Any) -> CompactingFilter:
        """An instance of this class with the SDK's ``RunHooks`` under it (every hook it does not
        define stays the SDK's), the SDK loaded now."""
        made = cls
        if cls is CompactingFilter:
            made = beneath(cls, load("agents", "openai-agents").RunHooks)
        return super().__new__(made)

    def __init__(self, policy: Policy | PolicyFile, log: str | Path | None = None, *,
                 model: str | None = None) -> None:
        self.session = session(policy, RESPONSES, model)
        self.endpoint = _Responses(None, self.session, Path(log) if log is not None else None)
        self._pending: Call | None = None

    @property
    def records(self) -> tuple[CallRecord, ...]:
        """Every model call's record so far (also in ``log`` when one was given)."""
        return tuple(self.session.records)

    def __call__(self, data: Any) -> Any:
        """``call_model_input_filter``: the SDK's ``CallModelData`` in, its ``ModelInputData`` out
        (a copy of the one given, with the input compacted; the instructions stay as they are)."""
        given, agent = data.model_data, data.agent
        kwargs: dict[str, Any] = {"input": given.input, "tools": _tools(agent)}
        name = getattr(agent.model, "model", agent.model)
        if isinstance(name, str):
            kwargs["model"] = name
        if isinstance(given.instructions, str):
            kwargs["instructions"] = given.instructions
        self._pending, sent = self.endpoint.prepare(kwargs)
        return dataclasses.replace(given, input=sent["input"]) if self._pending is not None else given

    async def on_llm_end(self, context: Any, agent: Any, response: Any) -> None:
        """The provider took the call the filter prepared last: the run moves on, and it is logged."""
        call, self._pending = self._pending, None
        self.endpoint.finish(call, response)


class _Responses(Responses):
    """The Responses endpoint whose response is the SDK's ``ModelResponse``: the reply its output
    items, the usage the provider's own when the SDK kept it, else the SDK's counts."""

    def reply(self, response: Any) -> list[Any] | None:
        return [plain(item) for item in response.output]

    def usage(self, response: Any) -> Any:
        if response.raw_usage is not None:
            return response.raw_usage
        counts = response.usage
        return {"input_tokens": counts.input_tokens, "output_tokens": counts.output_tokens,
                "total_tokens": counts.total_tokens}


def _tools(agent: Any) -> list[dict[str, Any]]:
    """The agent's function tools as the Responses API defines them, counted in every prompt
    (hosted tools, whose definitions the SDK writes itself, are left out)."""
    return [{"type": "function", "name": tool.name, "description": tool.description,
             "parameters": tool.params_json_schema}
            for tool in agent.tools if isinstance(getattr(tool, "params_json_schema", None), dict)]
