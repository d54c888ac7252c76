"""SWE-agent trajectories (``*.traj``) and mini-SWE-agent trajectories (``*.traj.json``), read
as the Chat Completions request the agent's last step amounts to.

SWE-agent (SWE-agent/SWE-agent, ``sweagent/types.py``: ``HistoryItem``, ``AgentRunResult``): a JSON
object whose ``history`` is the chat the model saw (``role``, ``content``, and SWE-agent's own
``agent``, ``message_type``, ``thought``, ``action``, ``is_demo``, ``tags``…; with function calling,
assistant ``tool_calls`` and tool messages with a list ``tool_call_ids``), next to a per-step
``trajectory`` that repeats the same exchange (not read). The model is ``replay_config``'s
``agent.model.name``.

mini-SWE-agent (SWE-agent/mini-swe-agent, docs "Output files"): ``{"info", "messages",
"trajectory_format"}``; messages are Chat messages plus mini's own ``extra`` (raw output, return
code, the provider's response, cost…), ending with a ``role: exit`` record. The model is
``info.config.model.model_name``; each reply's ``extra.response.usage.prompt_tokens``, where the
provider reported it, is that call's bill (``Conversation.billed``).

Either way, what is not part of a Chat request is dropped and counted in the notes. A run without
function calling has no tool calls: each action is the assistant's text and its observation the next
user message, and they stay messages (the notes say so: tool rules cannot match them).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from typing import Any

from ..conversation import Conversation, ToolCall
from . import chat
from ._reader import Reader, counted, with_billed
from ._wire import check, need

_CHAT_ROLES = ("system", "developer", "user", "assistant", "tool")
_NO_CALLS = ("No tool calls: this run used no function calling. Each action is the assistant's text and its "
             "observation the next user message; they stay messages, so rules keyed on tool names cannot match them.")


class _Build:
    """Chat messages built from a log's messages, and what was left out."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self.dropped: Counter[str] = Counter()
        self.notes: list[str] = []

    def message(self, entry: dict, place: str, call_id: str | None = None) -> None:
        role = need(entry, "role", str, place)
        if role not in _CHAT_ROLES:
            self.dropped[f"'{role}' records"] += 1
            return
        message: dict[str, Any] = {"role": role, "content": entry.get("content")}
        if isinstance(entry.get("name"), str):
            message["name"] = entry["name"]
        calls = entry.get("tool_calls")
        if role == "assistant" and calls:
            message["tool_calls"] = [_call(call) for call in check(calls, list, f"{place}.tool_calls")]
        if role == "tool":
            message["tool_call_id"] = call_id or need(entry, "tool_call_id", str, place)
        used = ("tool_call_ids",) if call_id else ()
        self.dropped.update(f"'{key}' keys" for key in entry
                            if key not in message and key not in used and entry[key] is not None)
        self.messages.append(message)

    def conversation(self, source: str, title: str, model: str | None) -> Conversation:
        body: dict[str, Any] = {"model": model, "messages": self.messages} if model else {"messages": self.messages}
        conversation = chat.read(body)
        notes = [f"Read from a {title}: {len(self.messages)} Chat messages.", *self.notes]
        if self.dropped:
            notes.append(f"Left out (the agent's bookkeeping, not part of a Chat request): {counted(self.dropped)}.")
        if not any(isinstance(item, ToolCall) for item in conversation.items):
            notes.append(_NO_CALLS)
        return replace(conversation, source=source, notes=tuple(notes))


def _call(call: Any) -> Any:
    """A tool call as Chat sends it (litellm's streaming ``index`` is not part of a request)."""
    return {key: value for key, value in call.items() if key != "index"} if isinstance(call, dict) else call


# SWE-agent ------------------------------------------------------------------------------------

SWE_AGENT_NAME = "swe-agent"
SWE_AGENT_TITLE = "SWE-agent trajectory (.traj)"


def swe_agent_looks_like(data: Any) -> int:
    if not isinstance(data, dict) or not isinstance(data.get("history"), list):
        return 0
    history = data["history"]
    marked = any(isinstance(m, dict) and ("message_type" in m or "agent" in m) for m in history)
    return 6 if "trajectory" in data or marked else 0


# SWE-agent's stand-ins for a model (sweagent/agent/models.py): a replayed trajectory, a person at the
# keyboard, a test double. None of them is priced or has a tokenizer; the run names no real model.
_PSEUDO_MODELS = ("replay", "human", "human_thought", "instant_empty_submit")


def _swe_agent_model(data: dict) -> str | None:
    config = data.get("replay_config")
    if isinstance(config, str):
        try:
            config = json.loads(config)
        except ValueError:
            return None
    model = config.get("agent", {}).get("model", {}) if isinstance(config, dict) else {}
    name = model.get("name") if isinstance(model, dict) else None
    return name if isinstance(name, str) and name not in _PSEUDO_MODELS else None


def swe_agent_read(data: Any) -> Conversation:
    body = check(data, dict, "document")
    build = _Build()
    for position, entry in enumerate(need(body, "history", list, "document")):
        place = f"history[{position}]"
        check(entry, dict, place)
        ids = entry.get("tool_call_ids")
        if entry.get("role") == "tool" and isinstance(ids, list) and ids:
            if len(ids) > 1:
                build.notes.append(f"{place} answers {len(ids)} calls at once; it is paired with the first, "
                                   f"{ids[0]} (Chat pairs one result with one call).")
            build.message(entry, place, str(ids[0]))
        elif entry.get("role") == "tool" and "tool_call_id" not in entry:
            build.message({**entry, "role": "user"}, place)
            build.notes.append(f"{place} is a tool observation with no call id: it is kept as a user message.")
        else:
            build.message(entry, place)
    if isinstance(body.get("trajectory"), list):
        build.notes.append(f"The per-step trajectory ({len(body['trajectory'])} steps) repeats the history and "
                           "is not read.")
    return build.conversation(SWE_AGENT_NAME, "SWE-agent trajectory", _swe_agent_model(body))


# mini-SWE-agent --------------------------------------------------------------------------------

MINI_NAME = "mini-swe-agent"
MINI_TITLE = "mini-SWE-agent trajectory (.traj.json)"


def mini_looks_like(data: Any) -> int:
    if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
        return 0
    info = data.get("info")
    mini = str(data.get("trajectory_format", "")).startswith("mini-swe-agent")
    return 6 if mini or (isinstance(info, dict) and ("mini_version" in info or "config" in info)) else 0


def _mini_model(data: dict) -> str | None:
    info = data.get("info")
    config = info.get("config") if isinstance(info, dict) else None
    model = config.get("model") if isinstance(config, dict) else None
    name = model.get("model_name") if isinstance(model, dict) else None
    return name if isinstance(name, str) else None


def _mini_billed(entry: dict) -> int | None:
    """The prompt tokens the provider billed for the reply ``entry`` (mini keeps the whole
    response, usage and all, in ``extra.response``), if it says."""
    extra = entry.get("extra")
    response = extra.get("response") if isinstance(extra, dict) else None
    usage = response.get("usage") if isinstance(response, dict) else None
    tokens = usage.get("prompt_tokens") if isinstance(usage, dict) else None
    return tokens if isinstance(tokens, int) and not isinstance(tokens, bool) and tokens > 0 else None


def mini_read(data: Any) -> Conversation:
    body = check(data, dict, "document")
    build = _Build()
    billed: dict[int, int] = {}
    for position, entry in enumerate(need(body, "messages", list, "document")):
        build.message(check(entry, dict, f"messages[{position}]"), f"messages[{position}]")
        tokens = _mini_billed(entry) if entry.get("role") == "assistant" else None
        if tokens is not None:
            billed[len(build.messages) - 1] = tokens
    conversation = build.conversation(MINI_NAME, "mini-SWE-agent trajectory", _mini_model(body))
    return with_billed(conversation, billed, "mini-SWE-agent", "'extra.response.usage.prompt_tokens', the provider's")


SWE_AGENT = Reader(SWE_AGENT_NAME, SWE_AGENT_TITLE, swe_agent_looks_like, swe_agent_read)
MINI_SWE_AGENT = Reader(MINI_NAME, MINI_TITLE, mini_looks_like, mini_read)
