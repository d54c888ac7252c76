"""The last resort: summarize older history when compaction was not enough.

Kept verbatim: everything up to the first user message (system and developer messages included)
and the newest ``keep_steps`` steps, a step being one assistant turn with the tool results that
answer it. The span between them is replaced, in place, by one marked user message. The cut
moves back until no call is separated from its result, so the request stays valid. The
summarizer reads the span's original content (not compaction's placeholders), each item trimmed
to a budget; a summary already in the span is extended, not summarized again. If the summarizer
fails, nothing is dropped. Unlike a reference, a summary cannot be undone by calling a tool.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from . import formats
from .breakdown import telling_argument
from .errorpatterns import error_detail
from .errors import InputError
from .model import Conversation, Item, Message, ToolCall, ToolResult, content_text, pairs, role_of
from .tokens import Meter

MARKER = "[Summary of earlier conversation"
OFFLINE_LABEL = "offline summary — no LLM"
LOSS = ("A summary is lossy: the items it replaced are gone from the request, and calling a tool again cannot "
        "bring back what was said (a compaction reference can).")
DEFAULT_KEEP_STEPS = 3
DEFAULT_ITEM_BUDGET = 600  # tokens of each original item the summarizer reads

DEFAULT_PROMPT = """You are compressing the older part of an AI agent's working history so the agent can \
carry on without it. Write a compact summary, in plain sentences and short lists, that holds exactly what \
the agent needs to continue:

1. The task: what the user asked for, with their constraints, in their words where they matter.
2. Findings: facts learned so far, each with its source (file path, URL, query or command).
3. Files, pages and queries touched: what was read, written or run, and with what outcome.
4. Decisions made and why; approaches tried that failed, and the errors they gave.
5. What is left to do.

Keep identifiers, paths, numbers and error messages exact. If the history starts with an earlier summary, \
fold it in: keep what still matters from it. Do not invent anything. Do not address the user."""


class SummarizerError(Exception):
    """The summarizer could not produce a summary; the message is safe to show (no secrets)."""


class Summarizer(Protocol):
    """Anything that turns a plan into summary text: the offline extractor reads the original
    items, an LLM the trimmed transcript and the prompt."""

    label: str

    def summarize(self, plan: Plan) -> str: ...


@dataclass(frozen=True)
class SummarySettings:
    limit: int  # summarize when the compacted request is at or above this many tokens
    keep_steps: int = DEFAULT_KEEP_STEPS
    item_budget: int = DEFAULT_ITEM_BUDGET
    prompt: str = DEFAULT_PROMPT

    def __post_init__(self) -> None:
        for name in ("limit", "keep_steps", "item_budget"):
            if getattr(self, name) < 0:
                raise InputError(f"{name} must be 0 or more", where=name, value=getattr(self, name))


@dataclass(frozen=True)
class Plan:
    """What would be summarized: items ``start`` to ``end`` (exclusive) of the request."""

    start: int
    end: int
    items: tuple[Item, ...]  # the span's original, uncompacted items
    prompt: str
    previous_summary: bool
    budget: int
    meter: Meter = field(repr=False, compare=False)

    @functools.cached_property
    def transcript(self) -> str:
        """The items as an LLM reads them, each trimmed to the budget. Made on first use: the
        offline summarizer reads the items themselves and never needs it."""
        return transcript(self.items, self.budget, self.meter)

    @property
    def key(self) -> str:
        """Identifies the summarizer's input, so a result can be cached and reused."""
        return hashlib.sha256(f"{self.prompt}\0{self.transcript}".encode()).hexdigest()


@dataclass(frozen=True)
class SummaryReport:
    status: str  # "not_needed", "nothing_to_summarize", "summarized" or "failed"
    limit: int
    tokens_before: int
    tokens_after: int
    summarizer: str | None = None
    start: int | None = None  # span, as positions in the conversation's items
    end: int | None = None
    span_origin: tuple[int, int] | None = None  # first and last index in the input's own list
    summary_position: int | None = None
    summary_tokens: int = 0
    error: str | None = None
    detail: str = ""


STATUS_WORDS = {
    "not_needed": "not needed: the compacted request is below the summarization limit",
    "nothing_to_summarize": "nothing to summarize: no older history outside what is kept",
    "summarized": "summarized: the oldest history became one summary message",
    "failed": "the summarizer failed: nothing was dropped",
}


def is_summary(item: Item) -> bool:
    return isinstance(item, Message) and item.role == "user" and content_text(item.content).startswith(MARKER)


def _step_starts(items: tuple[Item, ...]) -> list[int]:
    """Positions where an assistant turn begins (an assistant item after a non-assistant one)."""
    return [p for p, item in enumerate(items)
            if role_of(item) == "assistant" and (p == 0 or role_of(items[p - 1]) != "assistant")]


def span(items: tuple[Item, ...], keep_steps: int) -> tuple[int, int] | None:
    """The items to summarize, ``(start, end)``, or None when there is nothing outside what is kept."""
    first_user = next((p for p, item in enumerate(items) if role_of(item) == "user" and not is_summary(item)), None)
    if first_user is None:
        return None
    starts = [p for p in _step_starts(items) if p > first_user]
    if len(starts) <= keep_steps:
        return None
    end = starts[len(starts) - keep_steps] if keep_steps else len(items)
    answers = pairs(items)
    moved = True
    while moved:  # a call before the cut whose result is after it: cut before that call's turn
        moved = False
        for call, result in answers.items():
            if call < end <= result:
                end = max((s for s in starts if s <= call), default=first_user + 1)
                moved = True
    start = first_user + 1
    for p in range(start, end):  # system messages stay verbatim: the span begins after the last one
        if role_of(items[p]) in ("system", "developer"):
            start = p + 1
    if end - start <= 0 or (end - start == 1 and is_summary(items[start])):
        return None
    return start, end


def _trim(text: str, budget: int, meter: Meter) -> str:
    """``text`` cut to ``budget`` tokens. The full count is cached from counting the request; the
    cut encodes only a prefix that holds the budget (about 4 characters a token; doubled until it does)."""
    total = meter.text(text)
    if total <= budget:
        return text
    span = budget * 6
    tokens = meter.encoding.encode_ordinary(text[:span])
    while len(tokens) <= budget and span < len(text):
        span *= 2
        tokens = meter.encoding.encode_ordinary(text[:span])
    return meter.encoding.decode(tokens[:budget]) + f" […{total - budget} more tokens cut]"


def transcript(items: tuple[Item, ...], budget: int, meter: Meter) -> str:
    """The span as the summarizer reads it: one labelled block per item, long ones trimmed."""
    blocks = []
    for item in items:
        if is_summary(item):
            blocks.append(f"[earlier summary]\n{content_text(item.content)}")
        elif isinstance(item, ToolCall):
            blocks.append(f"[assistant calls {item.name}]\n{_trim(item.arguments, budget, meter)}")
        elif isinstance(item, ToolResult):
            status = " (error)" if item.is_error else ""
            blocks.append(f"[{item.name} result{status}]\n{_trim(content_text(item.content), budget, meter)}")
        elif content_text(item.content):
            blocks.append(f"[{item.role}]\n{_trim(content_text(item.content), budget, meter)}")
    return "\n\n".join(blocks)


def plan(original: Conversation, compacted: Conversation, settings: SummarySettings, meter: Meter) -> Plan | None:
    """What to summarize in ``compacted`` (positions match ``original``), read from ``original``."""
    found = span(compacted.items, settings.keep_steps)
    if found is None:
        return None
    start, end = found
    originals = original.items[start:end]
    return Plan(start, end, originals, settings.prompt, any(is_summary(item) for item in originals),
                settings.item_budget, meter)


def summary_message(text: str, count: int, label: str) -> Message:
    header = (f"{MARKER} ({label}): it replaces {count} items. What it leaves out is gone and cannot be "
              "fetched again by calling a tool.]")
    return Message(role="user", content=f"{header}\n\n{text.strip()}")


def apply(compacted: Conversation, chosen: Plan, text: str, label: str) -> Conversation:
    """The request with the span replaced, in place, by one summary message, checked valid."""
    items = (*compacted.items[:chosen.start], summary_message(text, chosen.end - chosen.start, label),
             *compacted.items[chosen.end:])
    return formats.read(formats.write(compacted.with_items(items)), compacted.format)


@dataclass(frozen=True)
class Summarization:
    conversation: Conversation
    report: SummaryReport
    plan: Plan | None


def _origin_span(conversation: Conversation, start: int, end: int) -> tuple[int, int] | None:
    first, last = conversation.items[start].origin, conversation.items[end - 1].origin
    return (first.index, last.index) if first and last else None


def run(original: Conversation, compacted: Conversation, settings: SummarySettings, summarizer: Summarizer,
        meter: Meter, cache: Mapping[tuple[str, str], str] | None = None, prefer: str | None = None) -> Summarization:
    """Summarize if the compacted request is at or over the limit.

    ``cache`` holds summaries already made, by (summarizer label, plan key): when it has one from
    ``prefer`` for this very input, it is used and ``summarizer`` is not called. The UI keeps paid
    LLM results there and calls the endpoint only when asked.
    """
    before = meter.count(compacted).total
    if before < settings.limit:
        return Summarization(compacted, SummaryReport("not_needed", settings.limit, before, before), None)
    chosen = plan(original, compacted, settings, meter)
    if chosen is None:
        detail = f"fewer than {settings.keep_steps + 1} assistant turns after the first user message"
        return Summarization(compacted, SummaryReport("nothing_to_summarize", settings.limit, before, before,
                                                      detail=detail), None)
    cached = cache.get((prefer, chosen.key)) if cache is not None and prefer else None
    label = prefer if cached is not None else summarizer.label
    common = {"limit": settings.limit, "tokens_before": before, "summarizer": label,
              "start": chosen.start, "end": chosen.end,
              "span_origin": _origin_span(compacted, chosen.start, chosen.end)}
    try:
        text = cached if cached is not None else summarizer.summarize(chosen)
        if not text or not text.strip():
            raise SummarizerError("the summarizer returned an empty summary")
    except SummarizerError as exc:
        return Summarization(compacted, SummaryReport("failed", tokens_after=before, error=str(exc), **common),
                             chosen)
    result = apply(compacted, chosen, text, label)
    after = meter.count(result)
    return Summarization(result, SummaryReport("summarized", tokens_after=after.total,
                                               summary_position=chosen.start,
                                               summary_tokens=after.items[chosen.start], **common), chosen)


# ---------------------------------------------------------------------------------------------
# The offline summarizer: deterministic and extractive, for when no endpoint is configured.


def _first_line(text: str, limit: int = 160) -> str:
    line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _looks_failed(result: ToolResult) -> bool:
    """An error result: flagged by its format, or plainly one by the shipped error patterns."""
    return error_detail(result) is not None


class OfflineSummarizer:
    """Pulls out, in order: the user's requests, each tool call with its key argument and how
    it ended, the errors, and the assistant's conclusions. No model involved."""

    label = OFFLINE_LABEL

    def summarize(self, plan: Plan) -> str:
        items = plan.items
        conversation = Conversation(items=items)
        telling: dict[str, str | None] = {}  # per tool, found once: the argument that names a call best
        calls: dict[str, ToolCall] = {}
        requests, actions, errors, conclusions, earlier = [], [], [], [], []
        for item in items:
            if is_summary(item):
                earlier.append(content_text(item.content).split("\n\n", 1)[-1].strip())
            elif isinstance(item, ToolCall):
                calls[item.call_id] = item
            elif isinstance(item, ToolResult):
                call = calls.get(item.call_id)
                if item.name not in telling:
                    telling[item.name] = telling_argument(conversation, item.name)
                key = telling[item.name]
                arguments = (call.parsed_arguments() or {}) if call else {}
                shown = f"{key}={json.dumps(arguments[key], ensure_ascii=False)[:120]}" if key in arguments else ""
                text = content_text(item.content)
                if _looks_failed(item):
                    actions.append(f"- {item.name}({shown}) → error: {_first_line(text)}")
                    errors.append(f"- {item.name}({shown}): {_first_line(text)}")
                else:
                    actions.append(f"- {item.name}({shown}) → ok, {len(text.splitlines())} lines")
            elif item.role == "user" and content_text(item.content).strip():
                requests.append(f"- {_first_line(content_text(item.content), 300)}")
            elif item.role == "assistant" and content_text(item.content).strip():
                conclusions.append(f"- {_first_line(content_text(item.content), 300)}")
        sections = [f"({OFFLINE_LABEL}: extracted from {len(items)} items, not written by a model.)"]
        for title, lines in (("Earlier summary", earlier), ("User requests", requests), ("Tool calls, in order",
                             actions), ("Errors", errors), ("Assistant conclusions", conclusions)):
            if lines:
                sections.append(f"{title}:\n" + "\n".join(lines))
        return "\n\n".join(sections)
