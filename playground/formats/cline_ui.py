"""Cline's ``ui_messages.json``: what the person saw of a task, read for what it says of each request.

Format (cline/cline @ 21cb8d25, ``apps/vscode/src/shared/ExtensionMessage.ts`` ``ClineMessage``, ``ClineSay``,
``ClineAsk``, ``ClineSayTool``; written by ``core/task/index.ts`` @ 9fd2b99be4): a list of messages, each
``{ts, type: "say" | "ask", say | ask, text, conversationHistoryIndex, conversationHistoryDeletedRange?,
modelInfo?}``. Before each request Cline says ``api_req_started`` with ``conversationHistoryIndex`` the index of
the last message of the API history; its ``text`` is JSON: ``request`` (the user turn it sends, its blocks
formatted as text and joined by blank lines: tool results, the person's feedback, ``<environment_details>``),
and once the reply is in ``tokensIn``, ``tokensOut``, ``cacheWrites``, ``cacheReads``, ``cost``. The reply is
what follows: ``text``, ``reasoning``, ``tool`` (a ``ClineSayTool`` JSON: ``tool`` ``readFile``,
``editedExistingFile``…), ``command``, ``completion_result``, asks (``followup``, ``plan_mode_respond``,
``use_mcp_server``) and the command's output. The deleted range in force (Cline's own truncation,
``cline_truncation``) is set on every message created while it holds, so it changes on the messages of the
request that truncated, after its ``api_req_started``. So this log gives each request's bill, the
errors the person was shown (``notes``) and the truncations it records (``recorded_cuts``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from ..words import plural
from . import cline_truncation

REQUEST = "api_req_started"
# ClineSayTool.tool → the tool Cline's result headers name ("[read_file for 'x'] Result:")
_TOOLS = {"readFile": "read_file", "editedExistingFile": "replace_in_file", "newFileCreated": "write_to_file",
          "fileDeleted": "write_to_file", "listFilesTopLevel": "list_files", "listFilesRecursive": "list_files",
          "listCodeDefinitionNames": "list_code_definition_names", "searchFiles": "search_files",
          "webFetch": "web_fetch", "webSearch": "web_search", "summarizeTask": "summarize_task",
          "useSkill": "use_skill", "subagent": "use_subagents"}
# what else in a reply is a call, by its say or ask, and the tool it is
_CALLS = {"command": "execute_command", "completion_result": "attempt_completion",
          "followup": "ask_followup_question", "plan_mode_respond": "plan_mode_respond",
          "use_mcp_server": "use_mcp_tool", "new_task": "new_task", "condense": "condense",
          "report_bug": "report_bug", "browser_action_launch": "browser_action"}
_BLOCK = re.compile(r"\n\n(?=\[[\w-]+(?: for '.*?')?\] Result:|Tool \[[\w-]+\] was not executed|<environment_details>)")
_LOADING = "\n\nLoading..."


@dataclass
class Request:
    """One ``api_req_started``: the history index of the reply (``conversationHistoryIndex`` + 2), what it
    billed, the provider, the deleted range in force while it was sent, and its user turn and reply."""

    reply: int
    info: dict[str, Any]
    provider: str | None
    deleted: tuple[int, int] | None
    user: str | None
    blocks: list[dict[str, Any]] = field(default_factory=list)
    model: str | None = None
    indexed: bool = False  # Cline wrote conversationHistoryIndex, and with it (since 2025-01) every range in force


def looks_like(data: Any) -> bool:
    """A list of ``say`` / ``ask`` messages with timestamps, at least one of Cline's own kinds."""
    return isinstance(data, list) and bool(data) and all(
        isinstance(m, dict) and isinstance(m.get("ts"), int | float) and m.get("type") in ("say", "ask")
        for m in data) and any(m.get("say") in (REQUEST, "task", "text") or "ask" in m for m in data)


def requests(ui: Any) -> list[Request]:
    """Every request the UI log records, in order, with the reply that followed it (a request whose JSON
    cannot be read is skipped: it tells nothing)."""
    if not isinstance(ui, list):
        return []
    found: list[Request] = []
    seen_calls: set[str] = set()
    for message in ui:
        if not isinstance(message, dict):
            continue
        kind = message.get("say") or message.get("ask")
        if kind == REQUEST:
            info = _json(message.get("text"))
            if info is None:
                continue
            at = message.get("conversationHistoryIndex")
            reply = at + 2 if isinstance(at, int) and not isinstance(at, bool) and at >= -1 else 2 * len(found) + 1
            model = message.get("modelInfo") if isinstance(message.get("modelInfo"), dict) else {}
            request = info.get("request")
            user = request.removesuffix(_LOADING) if isinstance(request, str) else None
            name = model.get("modelId")
            found.append(Request(reply, info, model.get("providerId"), _range(message), user,
                                 model=name if isinstance(name, str) and name else None,
                                 indexed=isinstance(at, int) and not isinstance(at, bool)))
            seen_calls = set()
        elif found:
            _reply(found[-1], message, kind, seen_calls)
    _ranges(ui, found)
    return found


def _ranges(ui: list, found: list[Request]) -> None:
    """The range in force for each request: the one on the messages after its ``api_req_started`` (the
    truncation happens while it is set up, after that message is said)."""
    starts = [p for p, m in enumerate(ui) if isinstance(m, dict) and m.get("say") == REQUEST
              and _json(m.get("text")) is not None]
    for number, start in enumerate(starts):
        end = starts[number + 1] if number + 1 < len(starts) else len(ui)
        after = [m for m in ui[start + 1:end + 1] if isinstance(m, dict)]
        if after:
            found[number].deleted = _range(after[0])


def _reply(request: Request, message: dict, kind: Any, seen: set[str]) -> None:
    """A message of the reply to ``request``, as the block of the assistant's turn it stands for."""
    text = message.get("text") if isinstance(message.get("text"), str) else ""
    if message.get("partial") is True:
        return
    if kind == "text" and message.get("type") == "say" and text:
        request.blocks.append({"type": "text", "text": text})
        return
    if kind == "tool":
        tool = _json(text) or {}
        name = _TOOLS.get(str(tool.get("tool")), str(tool.get("tool") or "tool"))
        arguments = {key: value for key, value in tool.items() if key != "tool"}
    elif kind in _CALLS and (text or kind == "command"):
        name = _CALLS[kind]
        parsed = _json(text)
        arguments = parsed if isinstance(parsed, dict) else {"text": text}
    else:
        return
    key = f"{name}:{text}"
    if key in seen:  # an ask answered, said again as it ran
        return
    seen.add(key)
    request.blocks.append({"type": "tool_use", "id": f"cline_ui_{message.get('ts')}", "name": name,
                           "input": arguments})


def history(found: list[Request]) -> list[tuple[int, dict[str, Any]]]:
    """The API history the requests amount to, each message with its index in Cline's own history: each
    request's user turn (its blocks split again where Cline joined them), then its reply."""
    messages: list[tuple[int, dict[str, Any]]] = []
    for request in found:
        if request.user:
            blocks = [{"type": "text", "text": part} for part in _BLOCK.split(request.user) if part]
            messages.append((request.reply - 1, {"role": "user", "content": blocks}))
        if request.blocks:
            messages.append((request.reply, {"role": "assistant", "content": request.blocks}))
    return messages


def _range(message: dict) -> tuple[int, int] | None:
    value = message.get("conversationHistoryDeletedRange")
    if isinstance(value, list) and len(value) == 2 and all(isinstance(v, int) and not isinstance(v, bool)
                                                          for v in value):
        return value[0], value[1]
    return None


def _json(text: Any) -> dict | None:
    if not isinstance(text, str):
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


_ERRORS = ("error", "diff_error", "api_req_failed", "mistake_limit_reached")


def notes(ui: Any) -> list[str]:
    """Errors the person was shown."""
    if not isinstance(ui, list):
        return []
    errors: list[str] = []
    for message in ui:
        if not isinstance(message, dict):
            continue
        kind = message.get("say") or message.get("ask")
        if kind in _ERRORS:
            errors.append(f"{kind}: {str(message.get('text', ''))[:120]}")
    return [f"ui_messages.json shows {plural(len(errors), 'error')}: {'; '.join(errors[:3])}."] if errors else []


def recorded_cuts(requests: list[Request]) -> list[cline_truncation.Cut]:
    """The truncations the UI log records: each request whose range in force differs from the one before."""
    cuts, before = [], None
    for request in requests:
        if request.deleted is not None and request.deleted != before:
            cuts.append(cline_truncation.Cut(request.reply, request.deleted[1]))
        before = request.deleted
    return cuts
