"""Prompt-token meters that follow what the OpenAI API bills, offline.

Where OpenAI publishes the accounting (the Cookbook's "How to count tokens with tiktoken":
3 tokens per message, +1 for ``name``, 3 to prime the reply) we use it as published. Where it
does not — tool calls, tool messages, tool definitions, parallel calls, the gpt-5 / o-series
family — the constants below were fitted on real billed counts in
``shared/fixtures/token-counts/`` and are re-verified by ``python -m playground accuracy``.
A count is ``exact`` only when every part of it is OpenAI's own published accounting.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

import tiktoken

from .encodings import EncodingChoice, choose_encoding, get_encoding
from .model import Conversation, Item, Message, ToolCall, content_text, has_non_text
from .tooldefs import render_functions


@dataclass(frozen=True)
class Accounting:
    """How one model family turns a request into prompt tokens."""

    family: str
    per_message: int = 3  # Cookbook: <|start|>{role}<|message|>…<|end|>
    per_name: int = 1  # Cookbook
    priming: int = 3  # Cookbook: every reply is primed with <|start|>assistant<|message|>
    # Fitted. A call bills tokens("functions." + name) + tokens(arguments) + CALL; its id is not
    # billed. gpt-4o family: 0 off on all 19 single-call recordings with CALL=4.
    call: int = 4
    # Fitted. Each call in a message holding several (billed as one multi_tool_use.parallel
    # call) costs PARALLEL more: recordings 7, 12, 13 (two calls) bill 16 over the single rule.
    parallel: int = 8
    # Fitted. Function definitions: tokens(tooldefs.render_functions(tools)) plus TOOLS_ALONE
    # when they form their own system message, TOOLS_WITH_SYSTEM when they join one.
    tools_alone: int = 8
    tools_with_system: int = 5
    published: bool = False  # True where the Cookbook covers this model's message accounting


# Cookbook's own rules (gpt-3.5-turbo, gpt-4, gpt-4o, gpt-4o-mini and their dated snapshots).
COOKBOOK = Accounting("gpt-4o / gpt-4 (Cookbook)", published=True)
# Cookbook's legacy rule for gpt-3.5-turbo-0301: 4 tokens per message, name replaces role.
COOKBOOK_0301 = Accounting("gpt-3.5-turbo-0301 (Cookbook legacy)", per_message=4, per_name=-1, published=True)
# Same constants, verified on gpt-4.1-mini (3 recordings) and gpt-4.5-preview (1), not published.
CHATML = Accounting("gpt-4.1 / gpt-4.5 / other (fitted)")
# Fitted. gpt-5, o1, o3, o4 render prompts in the harmony format: the API bills one token less
# for plain messages (12 recordings: o3-mini ×5, gpt-5 ×4, gpt-5.6 ×1, 0 off with priming 2),
# CALL=10 (recordings 27–36, 87, 93: within 2), and 89 for tools with or without a system
# message (16 of 17 tools-only recordings within 2).
HARMONY = Accounting("gpt-5 / o-series (fitted)", priming=2, call=10, tools_alone=89, tools_with_system=89)

CACHE_ENTRIES = 50_000  # per model; a cleared cache only costs a re-count
_COOKBOOK_MODELS = ("gpt-3.5-turbo", "gpt-4o-mini", "gpt-4o", "gpt-4")
_NOT_COOKBOOK = ("gpt-4o-search", "gpt-4o-audio", "gpt-4o-realtime")  # bill differently (fixtures 74, 75)


def accounting_for(model: str | None) -> Accounting:
    name = (model or "").lower()
    if name == "gpt-3.5-turbo-0301":
        return COOKBOOK_0301
    if name.startswith(("gpt-5", "o1", "o3", "o4")):
        return HARMONY
    snapshot = name.startswith(tuple(base + "-" for base in _COOKBOOK_MODELS)) and not name.startswith(_NOT_COOKBOOK)
    return COOKBOOK if name in _COOKBOOK_MODELS or snapshot else CHATML


@dataclass(frozen=True)
class TokenCount:
    """A prompt-token total and where it goes: one count per item, then the fixed parts."""

    total: int
    items: tuple[int, ...]
    tools: int
    instructions: int
    priming: int
    model: str
    encoding: str
    accounting: str
    exact: bool
    notes: tuple[str, ...]

    def prefix(self, index: int) -> int:
        """Tokens before item ``index``: what a provider's prompt cache can reuse up to it."""
        return self.tools + self.instructions + sum(self.items[:index])


class Meter:
    """Counts tokens for one model, caching counts per text so a rule edit re-counts only the
    items it changed."""

    def __init__(self, model: str | None = None) -> None:
        self.choice: EncodingChoice = choose_encoding(model)
        self.encoding: tiktoken.Encoding = get_encoding(self.choice.encoding)
        self.accounting = accounting_for(model)
        self._cache: dict[str, int] = {}
        self._last: tuple[Conversation, TokenCount] | None = None

    def text(self, text: str) -> int:
        """Tokens in ``text``, read as plain text (special-token strings are just text)."""
        if not text:
            return 0
        count = self._cache.get(text)
        if count is None:
            if len(self._cache) >= CACHE_ENTRIES:
                self._cache.clear()
            count = self._cache[text] = len(self.encoding.encode_ordinary(text))
        return count

    def item(self, item: Item, *, parallel: bool = False, continues: bool = False) -> int:
        """Tokens one item adds. ``parallel``: a call that shares its message with other calls;
        ``continues``: a message block after the first of its wire message (no new overhead)."""
        rules = self.accounting
        if isinstance(item, ToolCall):
            return (self.text("functions." + item.name) + self.text(item.arguments) + rules.call
                    + (rules.parallel if parallel else 0))
        body = self.text(content_text(item.content))
        if isinstance(item, Message):
            name = self.text(item.name) + rules.per_name if item.name else 0
            return body + name + (0 if continues else rules.per_message + self.text(item.role))
        # A tool message: billed like a message from role "tool", plus the answered function's name.
        return rules.per_message + self.text("tool") + body + self.text(item.name)

    def item_at(self, layout: Layout, position: int, item: Item) -> int:
        """Tokens of ``item`` standing at ``position`` of a request with ``layout``."""
        return self.item(item, parallel=position in layout.parallel, continues=position in layout.continued)

    def items(self, items: tuple[Item, ...]) -> tuple[int, ...]:
        layout = Layout.of(items)
        return tuple(self.item_at(layout, i, item) for i, item in enumerate(items))

    def count(self, conversation: Conversation) -> TokenCount:
        last = self._last
        if last is not None and last[0] is conversation:  # a rerun over the very same request
            return last[1]
        result = self._count(conversation)
        self._last = (conversation, result)
        return result

    def _count(self, conversation: Conversation) -> TokenCount:
        rules = self.accounting
        per_item = self.items(conversation.items)
        instruction_text = content_text(conversation.instructions)
        has_system = bool(instruction_text) or any(
            isinstance(item, Message) and item.role in ("system", "developer") for item in conversation.items
        )
        instructions = rules.per_message + self.text("system") + self.text(instruction_text) if instruction_text else 0
        rendered = render_functions(conversation.tools)
        tools = self.text(rendered) + (rules.tools_with_system if has_system else rules.tools_alone) if rendered else 0
        notes = self._notes(conversation)
        return TokenCount(
            total=sum(per_item) + tools + instructions + rules.priming,
            items=per_item,
            tools=tools,
            instructions=instructions,
            priming=rules.priming,
            model=self.choice.model,
            encoding=self.choice.encoding,
            accounting=rules.family,
            exact=not notes,
            notes=tuple(notes),
        )

    def _notes(self, conversation: Conversation) -> list[str]:
        """Every reason the count is an estimate rather than OpenAI's published accounting."""
        if conversation.format == "anthropic":  # one note says it all: every part is approximate
            return ["Anthropic models use their own tokenizer: counted with "
                    f"{self.choice.encoding} and OpenAI's accounting as an approximation"]
        notes = [self.choice.note] if self.choice.note else []
        if conversation.format != "chat":
            notes.append("accounting for this format is OpenAI Chat Completions' applied to the same items")
        if not self.accounting.published:
            notes.append(f"model family {self.accounting.family}: per-message constants fitted on billed counts")
        if any(not isinstance(item, Message) for item in conversation.items):
            notes.append("tool calls and tool results: rules fitted on billed counts (OpenAI publishes none)")
        if conversation.tools:
            notes.append("tool definitions: rendering rule fitted on billed counts")
        if any(tool.kind != "function" for tool in conversation.tools):
            notes.append("hosted tools (not functions) are not counted")
        contents = [item.content for item in conversation.items if not isinstance(item, ToolCall)]
        if any(has_non_text(content) for content in contents):
            notes.append("blocks without text (images, files, reasoning…) are not counted")
        elif any(isinstance(content, tuple) for content in contents):
            notes.append("content given as a list of parts: counted as their joined text (the Cookbook covers strings)")
        ignored = sorted(key for key in ("response_format", "web_search_options", "prediction", "audio")
                         if key in conversation.extra)
        if ignored:
            notes.append(f"request options that add tokens we do not count: {', '.join(ignored)}")
        return notes


@dataclass(frozen=True)
class Layout:
    """Where items share a wire message, which changes what they cost: calls in a run of two
    or more (one parallel turn) and message blocks that continue the block before them."""

    parallel: frozenset[int]
    continued: frozenset[int]

    @classmethod
    def of(cls, items: tuple[Item, ...]) -> Layout:
        parallel: set[int] = set()
        continued: set[int] = set()
        for i, (before, after) in enumerate(pairwise(items)):
            if isinstance(before, ToolCall) and isinstance(after, ToolCall):
                parallel.update((i, i + 1))
            if (isinstance(before, Message) and isinstance(after, Message) and before.origin and after.origin
                    and after.origin.block and before.origin.index == after.origin.index):
                continued.add(i + 1)
        return cls(frozenset(parallel), frozenset(continued))


def count(conversation: Conversation, model: str | None = None) -> TokenCount:
    """The prompt tokens of ``conversation`` for ``model`` (default: the request's own model),
    with a throwaway meter; hold an ``Engine`` to keep counts across calls."""
    return Meter(model or conversation.model).count(conversation)
