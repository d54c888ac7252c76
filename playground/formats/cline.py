"""Cline and Roo Code tasks (``tasks/<id>/`` in the extension's storage: ``api_conversation_history.json``
with ``ui_messages.json`` beside it), read as the Anthropic Messages request they amount to.

Format (cline/cline @ 21cb8d25, ``apps/vscode/src/core/storage/disk.ts`` ``GlobalFileNames``,
``apps/vscode/src/shared/ExtensionMessage.ts`` ``ClineMessage``): the API history is a list of
Anthropic messages, each with Cline's own ``modelInfo`` and ``metrics`` (left out of the request).
With native tool calling the assistant's ``tool_use`` blocks are kept, but Cline records each result
as a user ``text`` block, ``[read_file for 'x'] Result:`` then the output (or ``Tool [x] was not
executed because …``); older Cline (and Roo Code) write the calls themselves as XML in the assistant's
text (``<read_file><path>x</path></read_file>``). Either way each result becomes the ``tool_result``
of its call (an XML call becomes a ``tool_use``, so rules keyed on tool names match it, and the note
says so: Cline sent it as text). A result that reports ``The tool execution failed`` is an error.
``ui_messages.json`` is what the person saw: its errors are named in the notes, and each
``api_req_started`` records the tokens billed for that request.

Cline's SDK (the CLI, and the apps built on ``@cline/core``) writes a session instead
(cline/cline @ 21cb8d25, ``sdk/packages/core/docs/messages-contract-v1.md``):
``~/.cline/data/sessions/<id>/<id>.messages.json``, ``{version, sessionId, agent, messages,
system_prompt}``, with native ``tool_use`` / ``tool_result`` blocks, ``modelInfo {id, provider}``
and per-call ``metrics {inputTokens (cache reads and writes included), outputTokens, …}``. A
``file`` block (a file the person attached) is sent as ``<file_content path="…">`` text
(``formatFileContentBlock`` in ``sdk/packages/shared/src/prompt/format.ts``), and a message Cline's
compaction wrote carries ``metadata.kind`` (``compaction_summary``, ``compaction``).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace
from typing import Any

from ..conversation import FALL_FROM, FALL_TOKENS, AgentCompaction, Conversation, Item, Message
from ..errors import InputError
from ..words import plural
from . import anthropic, cline_truncation, cline_ui
from ._reader import Folder, Reader, as_log, counted, read_note, with_billed
from ._wire import check, need

NAME = "cline"
TITLE = "Cline / Roo Code task (folder or .zip: api_conversation_history.json; an SDK session, <id>.messages.json)"
HISTORY = "api_conversation_history.json"
UI = "ui_messages.json"
SESSION = ".messages.json"  # the SDK's <id>.messages.json
_RESULT = re.compile(r"\A\[(?P<name>[\w-]+)(?: for '.*?')?\] Result:\n?", re.DOTALL)
_NOT_RUN = re.compile(r"\ATool \[(?P<name>[\w-]+)\] was not executed")
_FAILED = "The tool execution failed with the following error"
_BLOCK_KEYS = {"text": ("type", "text", "cache_control"), "thinking": ("type", "thinking", "signature"),
               "redacted_thinking": ("type", "data"), "tool_use": ("type", "id", "name", "input", "cache_control"),
               "tool_result": ("type", "tool_use_id", "content", "is_error", "cache_control")}
_RESUMED = "[TASK RESUMPTION]"  # the text Cline opens a resumed task's user message with
_INTERRUPTED = "Task was interrupted before this tool call could be completed."  # Cline's stand-in result
TASK_HISTORY = "taskHistory.json"
# Providers whose tokensIn (metrics.tokens.prompt) is the whole prompt, cache reads included: their handlers
# set inputTokens to the API's prompt_tokens and report the cache beside it (cline/cline @ 9fd2b99be4,
# src/core/api/providers/{openai,litellm,xai,zai,fireworks,qwen,hicap,doubao,lmstudio,oca}.ts). Every other
# handler (anthropic, vertex, bedrock, openrouter, cline, deepseek, openai-native, gemini…) leaves the cache
# out of it, so a call's input is tokensIn + cacheWrites + cacheReads (prompt + cached).
_WHOLE_PROMPT = frozenset({"openai", "litellm", "xai", "zai", "fireworks", "qwen", "hicap", "doubao", "lmstudio",
                           "oca"})


def _files(data: Any) -> tuple[Any, Any, Any] | None:
    """The API history (None when only the UI log is there), the UI messages (None when absent) and the
    task history (``taskHistory.json``, where the folder has it) of a task folder, a zip of one, or either
    file on its own."""
    if isinstance(data, Folder):
        for wanted in (HISTORY, UI):
            for name, value in data.files.items():
                if name.rsplit("/", 1)[-1] == wanted:
                    folder = name[:-len(wanted)]
                    if wanted == UI and not cline_ui.looks_like(value):
                        continue
                    tasks = data.files.get(folder + TASK_HISTORY, data.files.get(TASK_HISTORY))
                    return (value, data.files.get(folder + UI), tasks) if wanted == HISTORY else (None, value, tasks)
        return None
    if _is_history(data):
        return data, None, None
    return (None, data, None) if cline_ui.looks_like(data) else None


def _is_history(data: Any) -> bool:
    """Anthropic messages with Cline's own keys, or its ``[tool …] Result:`` blocks."""
    if not isinstance(data, list) or not data or not all(
            isinstance(m, dict) and isinstance(m.get("content"), list | str) and "role" in m for m in data):
        return False
    return any("modelInfo" in m or "metrics" in m or any(
        isinstance(b, dict) and _RESULT.match(str(b.get("text", ""))) for b in m["content"] if isinstance(b, dict))
        for m in data if isinstance(m["content"], list))


def _session(data: Any) -> dict | None:
    """The SDK's ``messages.json`` (a ``version``, ``sessionId`` and messages with a ``role`` each: Gemini
    CLI's sessions have the two keys too, but messages with a ``type``), alone or in its folder."""
    if isinstance(data, Folder):
        found = [value for name, value in data.files.items() if name.endswith(SESSION) or name == "messages.json"]
        return found[0] if len(found) == 1 and _session(found[0]) is not None else None
    if not (isinstance(data, dict) and isinstance(data.get("version"), int) and isinstance(data.get("sessionId"), str)
            and isinstance(data.get("messages"), list)):
        return None
    return data if all(isinstance(m, dict) and "role" in m for m in data["messages"]) else None


def looks_like(data: Any) -> int:
    return 6 if _files(data) is not None or _session(data) is not None else 0


def _xml_calls(text: str, names: set[str]) -> list[tuple[str, dict[str, str], tuple[int, int]]]:
    """XML tool calls in an assistant's text: name, parameters, and where the call sits."""
    found = []
    for match in re.finditer(r"<(?P<name>[a-z_]+)>\s*(?P<body>.*?)</(?P=name)>", text, re.DOTALL):
        if match.group("name") in names:
            params = {p.group(1): p.group(2).strip("\n") for p in
                      re.finditer(r"<([a-z_]+)>(.*?)</\1>", match.group("body"), re.DOTALL)}
            found.append((match.group("name"), params, match.span()))
    return found


class _Task:
    """Anthropic messages rebuilt from the history, and what the notes say."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self.pending: list[tuple[str, str]] = []  # (tool name, tool_use id) awaiting a result, in order
        self.dropped: Counter[str] = Counter()
        self.xml = 0
        self.unmatched = 0
        self.renamed: Counter[str] = Counter()  # results whose header names the only pending call otherwise
        self.interrupted = 0  # calls cut off by an interruption, answered as Cline answers them on resuming
        self.models: Counter[str] = Counter()
        self.billed: dict[int, int] = {}  # the SDK's metrics.inputTokens by the index of the reply's message
        self.unplaced = 0  # bills of replies merged into the message before (no call of their own)
        self.files = 0
        self.merged = 0
        self.compactions: Counter[str] = Counter()
        self.index_of: dict[int, int] = {}  # index in Cline's own history → index of the message rebuilt from it
        self.raw: dict[int, dict] = {}  # index in Cline's own history → the message as Cline wrote it
        self.providers: Counter[str] = Counter()
        self.first_text: int | None = None  # the block of the first assistant message a truncation replaces

    def add(self, message: dict, place: str, index: int | None = None) -> None:
        role = need(message, "role", str, place)
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else check(
            content, list, f"{place}.content")
        billed = self._bookkeeping(message)
        index = len(self.index_of) if index is None else index
        self.raw[index] = message
        if index == 1 and role == "assistant" and blocks and isinstance(blocks[0], dict) \
                and blocks[0].get("type") == "text":
            self.first_text = 0
        self.dropped.update(f"'{key}' keys" for key in message if key not in ("role", "content"))
        kept = [self._block(check(block, dict, f"{place}.content[{i}]")) for i, block in enumerate(blocks)]
        if role == "user":
            kept = self._interrupted(self._results(kept))
        else:
            self.pending = [(b["name"], b["id"]) for b in kept if b.get("type") == "tool_use"]
        if self.messages and self.messages[-1]["role"] == role:
            self.merged += 1  # the API combines consecutive turns of one role; so does the request written
            self.messages[-1]["content"].extend(kept)
            self.unplaced += billed is not None
        else:
            self.messages.append({"role": role, "content": kept})
            if billed is not None and role == "assistant":
                self.billed[len(self.messages) - 1] = billed
        self.index_of[index] = len(self.messages) - 1

    def _bookkeeping(self, message: dict) -> int | None:
        """What Cline records beside a message: its model (``modelId`` in a task, ``id`` in the SDK),
        whether its compaction wrote the message; returns the input billed for it, if any: the SDK's
        ``metrics.inputTokens``, or a task's ``metrics.tokens`` (``prompt`` + ``cached``, as ``_input`` adds)."""
        info = message.get("modelInfo") if isinstance(message.get("modelInfo"), dict) else {}
        model = info.get("modelId") or info.get("id")
        if isinstance(model, str):
            self.models[model] += 1
        provider = info.get("providerId") or info.get("provider")
        if isinstance(provider, str):
            self.providers[provider] += 1
        metadata = message.get("metadata") if isinstance(message.get("metadata"), dict) else {}
        if str(metadata.get("kind", "")).startswith("compaction"):
            self.compactions[str(metadata["kind"])] += 1
        metrics = message.get("metrics") if isinstance(message.get("metrics"), dict) else {}
        tokens = metrics.get("inputTokens")
        if _count(tokens):
            return tokens
        used = metrics.get("tokens") if isinstance(metrics.get("tokens"), dict) else {}
        return _input(used.get("prompt"), used.get("cached"), provider if isinstance(provider, str) else None)

    def _block(self, block: dict) -> dict:
        if block.get("type") == "file" and isinstance(block.get("content"), str):
            self.files += 1  # sent as text, as the SDK's formatFileContentBlock writes it
            return {"type": "text", "text": f'<file_content path="{block.get("path", "")}">\n{block["content"]}\n'
                                            "</file_content>"}
        keys = _BLOCK_KEYS.get(str(block.get("type")))
        if keys is None:
            return block
        self.dropped.update(f"'{key}' keys on blocks" for key in block if key not in keys)
        return {key: value for key, value in block.items() if key in keys}

    def _results(self, blocks: list[dict]) -> list[dict]:
        """User text blocks that are tool results, as ``tool_result`` blocks first (the API's order)."""
        results, rest = [], []
        for block in blocks:
            text = block.get("text") if block.get("type") == "text" else None
            header = (_RESULT.match(text) or _NOT_RUN.match(text)) if isinstance(text, str) else None
            call_id = self._answer(header.group("name")) if header else None
            if call_id is None:
                rest.append(block)
                continue
            output = text[header.end():] if header.re is _RESULT else text
            result = {"type": "tool_result", "tool_use_id": call_id, "content": output}
            if header.re is _NOT_RUN or _FAILED in output[:200]:
                result["is_error"] = True
            results.append(result)
        return results + rest

    def _interrupted(self, blocks: list[dict]) -> list[dict]:
        """A task resumed after the calls of the message before were cut off: Cline answers each of
        them, as it sends the request, with its stand-in result, which the history does not keep
        (``resumeTaskFromHistory``); without it the request would hold calls that nothing answers."""
        text = next((b.get("text") for b in blocks if b.get("type") == "text"), None)
        if not self.pending or not isinstance(text, str) or not text.startswith(_RESUMED):
            return blocks
        answers = [{"type": "tool_result", "tool_use_id": call_id, "content": _INTERRUPTED}
                   for _, call_id in self.pending]
        self.interrupted += len(answers)
        self.pending = []
        return answers + blocks

    def _answer(self, name: str) -> str | None:
        """The id of the pending call a result for ``name`` answers; an XML call in the last assistant
        message becomes a ``tool_use`` when none is pending."""
        if not self.pending and self.messages and self.messages[-1]["role"] == "assistant":
            self._lift_xml(self.messages[-1], name)
        for position, (pending_name, call_id) in enumerate(self.pending):
            if pending_name == name:
                del self.pending[position]
                return call_id
        if len(self.pending) == 1:  # one call a message: a header may name it otherwise ([subagents]: use_subagents)
            pending_name, call_id = self.pending.pop()
            self.renamed[f"[{name}] → {pending_name}"] += 1
            return call_id
        self.unmatched += 1
        return None

    def _lift_xml(self, message: dict, name: str) -> None:
        for block in message["content"]:
            if block.get("type") != "text":
                continue
            calls = _xml_calls(block["text"], {name})
            if not calls:
                continue
            tool, params, (start, end) = calls[0]
            self.xml += 1
            call_id = f"cline_xml_{self.xml}"
            block["text"] = (block["text"][:start] + block["text"][end:]).strip() or "(tool call)"
            message["content"].append({"type": "tool_use", "id": call_id, "name": tool, "input": params})
            self.pending.append((tool, call_id))
            return


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _input(prompt: Any, cached: Any, provider: str | None) -> int | None:
    """A call's input tokens from what Cline recorded of it: ``tokensIn`` (``prompt``) and the cache
    (``cached``, or ``cacheWrites`` + ``cacheReads``), the cache left out for a provider whose ``tokensIn``
    holds it already (``_WHOLE_PROMPT``). A real task through Anthropic records prompt 10 beside cached
    13,657: the cache is most of the input."""
    parts = [value for value in (prompt, cached) if isinstance(value, int) and not isinstance(value, bool)]
    if not parts or (len(parts) == 1 and not isinstance(prompt, int)):
        return None
    tokens = prompt if provider in _WHOLE_PROMPT and isinstance(prompt, int) else sum(parts)
    return tokens if tokens > 0 else None


def _ui_bill(request: cline_ui.Request, provider: str | None) -> int | None:
    info = request.info
    cache = [info.get(key) for key in ("cacheWrites", "cacheReads")]
    cached = sum(value for value in cache if isinstance(value, int) and not isinstance(value, bool))
    return _input(info.get("tokensIn"), cached, request.provider or provider)


def _messages(task: _Task, messages: Any, where: str) -> None:
    for position, message in enumerate(check(messages, list, where)):
        task.add(check(message, dict, f"{where}[{position}]"), f"{where}[{position}]", position)


def _conversation(task: _Task, system: Any = None) -> Conversation:
    """The Anthropic request the rebuilt messages amount to, with the model Cline used most (its
    provider's ``vendor/`` prefix dropped: the request is Anthropic's, and the meter knows the name)."""
    body: dict[str, Any] = {"messages": task.messages}
    if task.models:
        body["model"] = task.models.most_common(1)[0][0].rsplit("/", 1)[-1]
    if isinstance(system, str) and system:
        body["system"] = system
    return anthropic.read(body)


def _task_notes(task: _Task) -> list[str]:
    """What reading the messages changed, for either form (a note only for what happened)."""
    def be(number: int, one: str = "is", more: str = "are") -> str:
        return one if number == 1 else more

    renamed = sum(task.renamed.values())
    said = [
        (task.xml, f"{plural(task.xml, 'tool call')} written as XML in the assistant's text {be(task.xml)} read as "
                   "tool_use blocks, so rules match them; Cline sent them as text, so the count differs from "
                   "Cline's by a few tokens a call."),
        (task.unmatched, f"{plural(task.unmatched, 'tool result')} answering no call in the message before "
                         f"{be(task.unmatched, 'stays', 'stay')} as text."),
        (task.renamed, f"{plural(renamed, 'tool result')} whose header names another tool ({counted(task.renamed)}) "
                       f"{be(renamed, 'answers', 'answer')} the only call of the message before."),
        (task.interrupted, f"{plural(task.interrupted, 'tool call')} cut off when the task was interrupted "
                           f"{be(task.interrupted)} answered as Cline answers them when it resumes "
                           f"the task ('{_INTERRUPTED}'): it sends that result, the history does not keep it."),
        (task.files, f"{plural(task.files, 'attached file')} {be(task.files)} read as the <file_content> text Cline "
                     "sends."),
        (task.merged, f"{plural(task.merged, 'message')} following one of the same role {be(task.merged)} joined to "
                      "it, as the API joins consecutive turns."),
        (task.compactions, f"Cline's own compaction wrote {plural(sum(task.compactions.values()), 'message')} here "
                           f"(metadata.kind {counted(task.compactions)}): this is the session as Cline sent it after "
                           "compacting."),
        (task.dropped, f"Left out (Cline's bookkeeping, not part of a request): {counted(task.dropped)}."),
    ]
    return [note for happened, note in said if happened]


def _read_session(session: dict) -> Conversation:
    """The SDK's ``messages.json``: its own system prompt, and the input billed per call in ``metrics``."""
    task = _Task()
    _messages(task, session["messages"], "messages")
    conversation = _conversation(task, session.get("system_prompt"))
    what = f"a Cline SDK session's messages.json (session {session['sessionId']})"
    notes = [read_note(what, len(session["messages"]), "message", len(conversation.items), "Cline",
                       system=bool(conversation.instructions)),
             *_task_notes(task)]
    return with_billed(as_log(conversation, NAME, notes), task.billed, "Cline",
                       "metrics.inputTokens, cache reads and writes included", task.unplaced)


def read(data: Any) -> Conversation:
    session = _session(data)
    if session is not None:
        return _read_session(session)
    files = _files(data)
    if files is None:
        raise InputError(f"a Cline task folder holds {HISTORY} (or an SDK session, <id>{SESSION}); this one does not")
    history, ui, tasks = files
    requests = cline_ui.requests(ui)
    task = _Task()
    if history is not None:
        _messages(task, history, HISTORY)
        what, read_count, noun = f"a Cline task's {HISTORY}", len(history), "message"
    elif not requests:
        raise InputError(f"this Cline {UI} records no request (no api_req_started that can be read), so it is no run "
                         f"alone: give the task folder (tasks/<id>/, with {HISTORY}), or a .zip of it, instead")
    else:
        for index, message in cline_ui.history(requests):
            task.add(message, f"{UI} request", index)
        task.models.update(request.model for request in requests if request.model)
        task.providers.update(request.provider for request in requests if isinstance(request.provider, str))
        what, read_count, noun = f"a Cline task's {UI} alone", len(ui), "UI message"
    conversation = _conversation(task)
    notes = [read_note(what, read_count, noun, len(conversation.items), "Cline"), *_task_notes(task)]
    if history is None:
        notes.append(f"Read from the UI log: each request's user turn is the text Cline shows of it (api_req_started "
                     f"'request'), each reply its text and tool calls; the reasoning is left out. Give the task "
                     f"folder, with {HISTORY}, for the request Cline sent.")
    elif ui is None:
        notes.append(f"No {UI} beside it: errors the person was shown, and the ranges Cline deleted, are not known.")
    notes.extend(cline_ui.notes(ui))
    billed, field = dict(task.billed), "metrics.tokens: prompt + cached"
    if not billed:
        billed, field = _ui_billed(task, requests), "api_req_started: tokensIn + cacheWrites + cacheReads"
    if task.providers and task.providers.most_common(1)[0][0] in _WHOLE_PROMPT:
        field += f" — through {task.providers.most_common(1)[0][0]}, whose tokensIn holds the cache: tokensIn alone"
    conversation = with_billed(as_log(conversation, NAME, notes), billed, "Cline", field, task.unplaced)
    return _truncated(conversation, task, requests, tasks)


def _ui_billed(task: _Task, requests: list[cline_ui.Request]) -> dict[int, int]:
    """Each request's bill from the UI log, by the message its reply was rebuilt into."""
    provider = task.providers.most_common(1)[0][0] if task.providers else None
    billed = {}
    for request in requests:
        tokens = _ui_bill(request, provider)
        message = task.index_of.get(request.reply)
        if tokens is not None and message is not None and task.messages[message]["role"] == "assistant":
            billed.setdefault(message, tokens)
    return billed


def _truncated(conversation: Conversation, task: _Task, requests: list[cline_ui.Request],
               tasks: Any) -> Conversation:
    """The conversation with Cline's own truncations (``cline_truncation``): the ranges the UI log records
    on its messages, the last one ``taskHistory.json`` records, and those inferred from the bills."""
    recorded = cline_ui.recorded_cuts(requests)
    by_message = {message: index for index, message in task.index_of.items()}
    first: dict[int, int] = {}
    for position, item in enumerate(conversation.items):
        if item.origin is not None:
            first.setdefault(item.origin.index, position)
    bills = sorted((by_message[conversation.items[position].origin.index], tokens)  # type: ignore[union-attr]
                   for position, tokens in conversation.billed)
    # the UI log records every range in force: a drop without a new one was the file reads' rewrite alone
    every = any(request.indexed for request in requests)
    cuts = cline_truncation.infer(bills, task.raw, recorded, recorded=every)
    if not every:
        last = cline_truncation.task_history_range(tasks)
        if last is not None and cuts and cuts[-1].end != last[1]:  # taskHistory.json knows the last range only
            cuts = (*cuts[:-1], replace(cuts[-1], end=last[1], keep=""))
    records = tuple(record for record in (_record(cut, task, conversation, first) for cut in cuts) if record)
    if not records:
        return conversation
    inferred = [record for record in records if record.inferred]
    said = (f"Cline cut what it sent {plural(len(records), 'time')} (its context manager rewrites every read of a "
            "file but the last with a notice, then, unless that saved 30 %, keeps the first user and assistant "
            "messages and deletes half, or three quarters, of the rest, and replaces the first reply's text with a "
            "notice)")
    how = [f"{len(records) - len(inferred)} recorded in its task state (conversationHistoryDeletedRange)"] \
        if len(inferred) < len(records) else []
    if inferred:
        how.append(f"{len(inferred)} inferred from the bills (a bill that falls at least "
                   f"{cline_truncation.DROP_SHARE:.0%} and {FALL_TOKENS:,} tokens from "
                   f"{FALL_FROM:,} and stays down; the range its rule could cut whose request "
                   "best matches the bill)")
    note = (f"{said}: {'; '.join(how)}. `as-it-ran` sends what Cline sent after each; the full history stays the "
            "`none` figure.")
    return replace(conversation, notes=(*conversation.notes, note), compactions=records)


def _record(cut: cline_truncation.Cut, task: _Task, conversation: Conversation,
            first: dict[int, int]) -> AgentCompaction | None:
    """What Cline sent from the request ``cut`` names on: messages 0 and 1 (the notice for the first
    reply's first text, once a range is deleted), then the history after the deleted range, each repeated
    file read rewritten (an edited item goes in ``added`` in place of the one kept: order changes no count)."""
    reply = task.index_of.get(cut.reply)
    if reply is None or reply not in first:
        return None
    kept_messages = {task.index_of[index] for index in cline_truncation.sent(cut.reply, cut.end)
                     if index in task.index_of}
    notice = cut.end is not None and task.first_text is not None and task.index_of.get(1) not in (
        None, task.index_of.get(0))
    added: list[Item] = [Message(role="assistant", content=cline_truncation.NOTICE)] if notice else []
    edited: dict[int, Item] = {}
    for edit in cut.edits:
        message = task.index_of.get(edit.index)
        for position, item in enumerate(conversation.items[:first[reply]]):
            if message in kept_messages and item.origin is not None and item.origin.index == message:
                new = cline_truncation.edited(edited.get(position, item), edit.search, edit.replace)
                if new is not None:
                    edited[position] = new
                    break
    kept = tuple(position for position, item in enumerate(conversation.items[:first[reply]])
                 if item.origin is not None and item.origin.index in kept_messages and position not in edited
                 and not (notice and (item.origin.index, item.origin.block) == (task.index_of[1], task.first_text)))
    added.extend(edited[position] for position in sorted(edited))
    rewrites = f", {plural(len(cut.edits), 'repeated file read')} rewritten" if cut.edits else ""
    deleted = f"deleting messages 2-{cut.end}" if cut.end is not None else "deleting none"
    if cut.inferred:
        low = f" ({cut.billed[0]:,} → {cut.billed[1]:,} tokens billed)" if cut.billed else ""
        where = f"inferred from the bills{low}: {_KEPT.get(cut.keep, 'the recorded range')}, {deleted}{rewrites}"
    else:
        where = f"{UI}: conversationHistoryDeletedRange [2, {cut.end}]{rewrites}"
    return AgentCompaction(first[reply], kept=kept, added=tuple(added), summary=False, trigger="truncation",
                           where=where, inferred=cut.inferred, log=conversation.items)


_KEPT = {"half": "keep half", "quarter": "keep a quarter", "lastTwo": "keep the last two", "none": "keep none",
         "files": "the file reads alone"}


def part(data: Any) -> str | None:
    """What to give instead of a file that is one part of a Cline task folder and no run alone
    (``GlobalFileNames`` in ``apps/vscode/src/core/storage/disk.ts``)."""
    instead = f"give the task folder (tasks/<id>/, with {HISTORY} and {UI}), or a .zip of it, instead"
    if isinstance(data, dict) and ("files_in_context" in data or "model_usage" in data) and \
            isinstance(data.get("files_in_context", data.get("model_usage")), list):
        return f"this is a Cline task's task_metadata.json (the files and models it used, no messages): {instead}"
    if isinstance(data, list) and data and all(isinstance(i, dict) and "id" in i and "task" in i and "ts" in i
                                               and "tokensIn" in i for i in data):
        return (f"this is Cline's {TASK_HISTORY} (one line per task: its totals and deleted range, no messages): "
                f"{instead}; put {TASK_HISTORY} beside them for the ranges Cline deleted")
    if isinstance(data, list) and data and all(isinstance(e, list) and len(e) == 2 and isinstance(e[0], int)
                                               and isinstance(e[1], list) for e in data):
        return f"this looks like a Cline task's context_history.json (its edits to the history, no messages): {instead}"
    return None


READER = Reader(NAME, TITLE, looks_like, read, part)
