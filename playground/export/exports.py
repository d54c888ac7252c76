"""Everything the playground can import, it can export: the files behind the download buttons."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, replace
from typing import Any

from .. import formats
from ..compaction import Settings
from ..conversation import EMPTY, Conversation, Item, Message, ToolCall, content_text, repeated_id_notes
from ..engine import Optimized
from ..errors import InputError
from ..present.report import optimized_to_json
from ..rules.ruleset import Rules, rules_to_json, rules_to_python
from ..run.prices import DEFAULT_MODEL
from . import framework as framework_export
from . import snippets

# An Anthropic request must name a Claude model and a reply limit. A conversation that names no Claude model
# (one converted from OpenAI's formats) gets these; both are printed in the notes so a person can change them.
DEFAULT_CLAUDE_MODEL = "claude-sonnet-4-5"
DEFAULT_MAX_TOKENS = 8192
_API_FORMATS = ("chat", "responses", "anthropic")  # the formats a provider takes a request in
SENT_AS = "chat"  # a native conversation's request (the meters count native as Chat)


@dataclass(frozen=True)
class Download:
    name: str
    data: str
    mime: str
    notes: tuple[str, ...] = ()  # what the export changed or dropped, for the page to show beside the button


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2) + "\n"


def conversation_name(stem: str, format: str) -> str:
    """The file name of a conversation export, known before its (possibly large) data is made."""
    return f"{stem}.{format}.json"


def report_name(stem: str) -> str:
    return f"{stem}.report.json"


def conversation(conv: Conversation, stem: str, format: str | None = None) -> Download:
    """The conversation in its own format (or converted to ``format``): for an API format, a request
    the provider accepts as it is (see ``request_body``)."""
    name = format or conv.format
    if name not in _API_FORMATS:
        return Download(conversation_name(stem, name), formats.dumps(conv, name) + "\n", "application/json")
    body, notes = request_body(conv, name)
    return Download(conversation_name(stem, name), _json(body), "application/json", notes)


def request_body(conv: Conversation, format: str | None = None) -> tuple[dict[str, Any], tuple[str, ...]]:
    """A body ``chat.completions.create``, ``responses.create`` or Anthropic's ``messages.create``
    accepts as it is, and notes on everything that had to change: the conversion's losses, a model
    or ``max_tokens`` filled in, Responses items that cannot be sent back (no id)."""
    name = format or (SENT_AS if conv.format == "native" else conv.format)
    if name not in _API_FORMATS:
        raise InputError(f"a provider request is one of {', '.join(_API_FORMATS)}", value=name)
    converted = formats.convert(conv, name)
    notes = list(converted.notes[len(conv.notes):])
    if format is None and conv.format == "native":
        notes.insert(0, "written as a Chat Completions request: the native format (agent logs such as Gemini CLI's, "
                        "Goose's, OpenHands' and opencode's) is counted as Chat and sent as Chat")
    if name == "responses":
        converted = converted.with_items(_sendable_responses_items(converted.items, notes))
    if name == "anthropic" and conv.format != "anthropic":  # (read as Anthropic's, its notes already say it)
        notes.extend(repeated_id_notes(conv.items, formats.FORMATS.get(conv.format, formats.native).where))
    body = formats.write(replace(converted, bare=False))
    model = _request_model(conv.model, name, notes)
    body = {"model": model, **{key: value for key, value in body.items() if key != "model"}}
    if name == "anthropic" and "max_tokens" not in body:
        body["max_tokens"] = DEFAULT_MAX_TOKENS
        notes.append(f"max_tokens set to {DEFAULT_MAX_TOKENS:,} (Anthropic requires a reply limit; change it to yours)")
    return body, tuple(notes)


def _request_model(model: str | None, format: str, notes: list[str]) -> str:
    claude = model is not None and model.startswith("claude")
    if format == "anthropic" and not claude:
        named = f"model {model} is not a Claude model" if model else "the conversation names no model"
        notes.append(f"{named}: the request names {DEFAULT_CLAUDE_MODEL} (change it to yours)")
        return DEFAULT_CLAUDE_MODEL
    if format != "anthropic" and (model is None or claude):
        named = f"model {model} is not an OpenAI model" if model else "the conversation names no model"
        notes.append(f"{named}: the request names {DEFAULT_MODEL} (change it to yours)")
        return DEFAULT_MODEL
    return model or DEFAULT_MODEL


def _sendable_responses_items(items: tuple[Item, ...], notes: list[str]) -> list[Item]:
    """Responses items as ``responses.create`` takes them back. Logs (Codex's rollouts) store items
    without the ids the API gave them: reasoning and hosted calls cannot be sent without one and are
    dropped; an id-less ``local_shell_call`` is sent as a function call; an id-less assistant message
    is sent as plain text (an ``output_text`` part needs the id)."""
    dropped: Counter[str] = Counter()
    kept: list[Item] = []
    for item in items:
        kind = item.extra.get("type")
        if isinstance(item, Message) and kind in (None, "message"):
            kept.append(_plain_assistant(item) if item.role == "assistant" and "id" not in item.extra else item)
        elif isinstance(item, Message) and not (isinstance(item.content, tuple) and "id" in item.content[0].extra):
            dropped[f"'{kind}' items dropped: the API takes them back only with the id it gave them"] += 1
        elif isinstance(item, ToolCall) and kind == "local_shell_call" and "id" not in item.extra:
            kept.append(replace(item, extra=EMPTY))  # already named local_shell by the reader
            dropped["local_shell_call items sent as function calls (no id)"] += 1
        else:
            kept.append(item)
    notes.extend(f"{what} ({count})" for what, count in dropped.items())
    return kept


def _plain_assistant(item: Message) -> Message:
    if isinstance(item.content, tuple) and all(part.text is not None for part in item.content):
        return replace(item, content=content_text(item.content))
    return item


def report(result: Optimized, stem: str, summary_limit: int | None, notes: tuple[str, ...] | None = None) -> Download:
    """Compaction and summarization, as ``compact --report`` writes them, with the notes on how the
    conversation was read or converted (``notes``; by default the result conversation's own)."""
    data = optimized_to_json(result, summary_limit)
    data["notes"] = list(formats.notes(result.conversation) if notes is None else notes)
    return Download(report_name(stem), _json(data), "application/json")


def rules_json(rules: Rules) -> Download:
    return Download("compaction-rules.json", _json(rules_to_json(rules)), "application/json")


def rules_python(rules: Rules) -> Download:
    return Download("compaction_rules.py", rules_to_python(rules), "text/x-python")


def rules_compactor(rules: Rules, settings: Settings, model: str | None = None) -> Download:
    """Rules + compactor (Python): one standard-library module with ``compact(request, format)``,
    its token decisions made with ``model``'s per-item accounting."""
    from .python import export_python  # here: the compactor's source is read only when someone asks for it

    return Download("compactor.py", export_python(rules, settings, model), "text/x-python")


def framework_settings(conversation: Conversation, rules: Rules, settings: Settings) -> Download | None:
    """Anthropic context_management and LangChain ClearToolUsesEdit settings, with what does not
    carry over; None when the rules clear no tool result of this conversation."""
    found = native_settings(conversation, rules, settings)
    if found is None:
        return None
    return Download("context-editing.json", _json(framework_export.to_json(found)), "application/json")


AGENT_CLIENTS = snippets.CLIENTS  # the clients pg.compacting wraps, by key, with the page's words for them
WORKSPACE_FILE = snippets.WORKSPACE_FILE


def agent_snippet(client: str, model: str) -> Download:
    """The agent loop around ``client`` that runs this workspace's policy, calling the page's ``model``
    where that client serves it (else the client's usual model)."""
    code = snippets.wrapper_snippet(client, snippets.client_model(client, model))
    return Download(f"agent_{client}.py", code, "text/x-python")


def native_settings(conversation: Conversation, rules: Rules,
                    settings: Settings) -> framework_export.FrameworkSettings | None:
    """The policy as the providers' and frameworks' own clearing (their snippets, and what does not carry
    over); None when the rules clear no tool result of this conversation."""
    return framework_export.framework_settings(conversation, rules, settings)
