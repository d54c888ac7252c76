"""Prompt-token meters that follow what the provider bills, offline.

Where OpenAI publishes the accounting (the Cookbook's "How to count tokens with tiktoken":
3 tokens per message, +1 for ``name``, 3 to prime the reply) we use it as published. Where it
does not — tool calls, tool messages, tool definitions, parallel calls, the gpt-5 / o-series
family, what only Responses requests hold — the constants (``accounting.py``) were fitted on real
billed counts in ``shared/fixtures/token-counts/`` and are re-verified, leave-one-out, by ``python
-m playground accuracy``. Claude models are counted by Anthropic's accounting in ``claude.py``; images by the
providers' published size rules in ``images.py``. A count is ``exact`` only when every part of it
is OpenAI's own published accounting; every other count says why in its notes.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import pairwise
from typing import TYPE_CHECKING

import tiktoken

from .. import limits
from ..conversation import (
    Content,
    Conversation,
    Item,
    Message,
    Part,
    Same,
    ToolCall,
    content_text,
    has_non_text,
    is_instruction,
)
from . import claude, images, responses
from .accounting import CHATML, CLAUDE, COOKBOOK, HARMONY, RESPONSES, accounting_for
from .encodings import DEFAULT_ENCODING, EncodingChoice, choose_encoding, get_encoding
from .names import bare
from .pieces import PIECE, SPLITTABLE, Cutter, lines
from .tooldefs import render_functions

if TYPE_CHECKING:
    from .factor import Calibration


CACHE_ENTRIES = 50_000  # per model; a cleared cache only costs a re-count
# A request with at least this much text not yet counted is encoded first on several threads
# (tiktoken lets go of the GIL while it encodes): an uploaded log of a million tokens, not a replay's call.
THREADED_CHARACTERS = 500_000
THREADS = min(4, limits.cores())
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
    unlogged: int = 0  # a calibration's tokens for what the agent sent that its log does not hold; first

    def prefix(self, index: int) -> int:
        """Tokens before item ``index``: what a provider's prompt cache can reuse up to it."""
        return self.unlogged + self.tools + self.instructions + sum(self.items[:index])


class Meter:
    """Counts tokens for one model, caching counts per text so a rule edit re-counts only the
    items it changed. Claude models get Anthropic's accounting (``claude.py``), every other model
    OpenAI's; the request's format adds what only it has (Responses options, Anthropic options).
    With a ``calibration`` every count (text, item, total) is multiplied by its factor."""

    def __init__(self, model: str | None = None, calibration: Calibration | None = None) -> None:
        self.calibration = calibration
        self._factor = calibration.factor if calibration else 1.0
        model = bare(model)  # a router's or a cloud's name for a model is counted as the model
        self.claude = claude.is_claude(model)
        self.choice: EncodingChoice = (EncodingChoice(str(model), DEFAULT_ENCODING) if self.claude
                                       else choose_encoding(model))
        self.encoding: tiktoken.Encoding = get_encoding(self.choice.encoding)
        self.accounting = CLAUDE if self.claude else accounting_for(model)
        self._ratio = claude.CONSTANTS[claude.text_feature(self.choice.model)] if self.claude else 1.0
        self._cache: dict[str, int] = {}
        self._splittable = self.encoding.name in SPLITTABLE  # a long text's count is its pieces' (``pieces``)
        self._cutter = Cutter()
        # per item and its place (parallel, continued, thinking): tokens and the notes it gave
        self._items_cache: dict[tuple[Same, bool, bool, bool], tuple[int, frozenset[str]]] = {}
        self._images: dict[str, tuple[int, int] | None] = {}
        self._last: tuple[Conversation, TokenCount] | None = None
        self._largest = 0  # the most items one count has read ahead (``_read_ahead``)

    def raw(self, text: str) -> int:
        """Tokens in ``text`` by this meter's tiktoken encoding (special-token strings are text)."""
        if not text:
            return 0
        count = self._cache.get(text)
        if count is None:
            if len(self._cache) >= CACHE_ENTRIES:
                self._cache.clear()
            if self._splittable and len(text) >= 2 * PIECE:  # a long text: its pieces, each counted once
                count = sum(map(self._piece, self._cutter.cut(text)))
            else:
                count = len(self.encoding.encode_ordinary(text))
            self._cache[text] = count
        return count

    def raw_by_line(self, text: str) -> int:
        """``raw(text)``, counted line by line and remembered as ``raw``'s count: for a text this
        program writes again at every call of a replay with most of its lines the last one's (a
        summary of a span that moves on by a step), so only its new lines are encoded."""
        count = self._cache.get(text)
        if count is None:
            if not self._splittable or len(text) >= 2 * PIECE:
                return self.raw(text)
            if len(self._cache) >= CACHE_ENTRIES:
                self._cache.clear()
            count = self._cache[text] = sum(map(self._piece, lines(text)))
        return count

    def _piece(self, piece: str) -> int:
        count = self._cache.get(piece)
        if count is None:
            count = self._cache[piece] = len(self.encoding.encode_ordinary(piece))
        return count

    def text(self, text: str) -> int:
        """Tokens in ``text`` for this model: tiktoken's count, scaled for Claude models."""
        count = self.raw(text)
        return count if self._ratio == self._factor == 1.0 else round(count * self._ratio * self._factor)

    def item(self, item: Item, *, parallel: bool = False, continues: bool = False, thinking: bool = False) -> int:
        """Tokens one item adds. ``parallel``: a call that shares its message with other calls;
        ``continues``: a message block after the first of its wire message (no new overhead);
        ``thinking``: its thinking blocks are in the current turn (billed, Anthropic)."""
        return self._item(item, parallel, continues, thinking, set())

    def _item(self, item: Item, parallel: bool, continues: bool, thinking: bool, notes: set[str]) -> int:
        """An item's tokens, once per item and place: a replay counts the same items at every call,
        and items are immutable (the key holds the item, so it cannot stand for another)."""
        key = (Same(item), parallel, continues, thinking)
        known = self._items_cache.get(key)
        if known is None:
            own: set[str] = set()
            tokens = self._uncalibrated(item, parallel, continues, thinking, own)
            if len(self._items_cache) >= CACHE_ENTRIES:
                self._items_cache.clear()
            known = self._items_cache[key] = (tokens if self._factor == 1.0 else round(tokens * self._factor),
                                              frozenset(own))
        notes |= known[1]
        return known[0]

    def _uncalibrated(self, item: Item, parallel: bool, continues: bool, thinking: bool, notes: set[str]) -> int:
        if self.claude:
            return claude.tokens(claude.item_features(item, self.raw, self.choice.model, continues=continues,
                                                      billed_thinking=thinking, notes=notes,
                                                      images_cache=self._images))
        rules, raw = self.accounting, self.raw
        if isinstance(item, ToolCall):
            return (raw("functions." + item.name) + raw(item.arguments) + rules.call
                    + (rules.parallel if parallel else 0))
        body = raw(content_text(item.content)) + self._non_text(item, notes)
        if isinstance(item, Message):
            if item.extra.get("type") == "reasoning":  # billed in the current turn only (``responses``)
                return responses.reasoning_tokens(item, raw) if thinking else 0
            if item.extra.get("type", "message") != "message":
                return body  # a Responses item that is not a message: no message wrapper
            name = raw(item.name) + rules.per_name if item.name else 0
            return body + name + (0 if continues else rules.per_message + raw(item.role))
        # A tool message: billed like a message from role "tool", plus the answered function's name.
        return rules.per_message + raw("tool") + body + raw(item.name)

    def _non_text(self, item: Item, notes: set[str]) -> int:
        """OpenAI: images by the tile rule, files and Responses items by fitted estimates."""
        content = item.content if not isinstance(item, ToolCall) else None
        if not isinstance(content, tuple):
            return 0
        return sum(self._openai_part(part, notes) for part in content if part.text is None)

    def _openai_part(self, part: Part, notes: set[str]) -> int:
        extra = part.extra
        image = images.image_reference(part.type, extra)
        if image is not None:
            notes.add("images: OpenAI's published size rule per model (detail auto billed as high)")
            size = self._image_size(image[0]) if image[0] else None
            if size is None:
                notes.add("image given by URL or file id: estimated as one 512-px tile")
                size = (512, 512)
            return images.openai_tokens(self.choice.model, *size, detail=image[1])
        if part.type in images.FILE_KINDS:
            notes.add(f"input files: estimated at {RESPONSES['file']:.0f} tokens each (the API extracts their "
                      "text; we do not)")
            return round(RESPONSES["file"])
        if part.type == "reasoning":  # counted by its item (``_uncalibrated``), said once per request in _notes
            return 0
        if part.type in ("input_text", "output_text", "text", "summary_text", "item_reference"):
            return 0  # (an item_reference is said once per request, in _notes)
        notes.add(f"{part.type} items: counted as the tokens of their JSON (OpenAI documents no rule)")
        return self.raw(json.dumps(images.without_payloads(extra), ensure_ascii=False))

    def _image_size(self, data: str) -> tuple[int, int] | None:
        if data not in self._images:
            self._images[data] = images.image_size(data)
        return self._images[data]

    def item_at(self, layout: Layout, position: int, item: Item) -> int:
        """Tokens of ``item`` standing at ``position`` of a request with ``layout``."""
        return self.item(item, parallel=position in layout.parallel, continues=position in layout.continued,
                         thinking=position in layout.thinking)

    def items(self, items: tuple[Item, ...]) -> tuple[int, ...]:
        return self._items(items, set())

    def _items(self, items: tuple[Item, ...], notes: set[str]) -> tuple[int, ...]:
        if len(items) > 2 * self._largest:  # (doubling: a replay's requests, a few items longer each call, rarely)
            self._largest = len(items)
            self._read_ahead(items)
        layout = Layout.of(items)
        return tuple(self._item(item, i in layout.parallel, i in layout.continued, i in layout.thinking, notes)
                     for i, item in enumerate(items))

    def _read_ahead(self, items: tuple[Item, ...]) -> None:
        """Count the long texts ``items`` will ask ``raw`` for, on ``THREADS`` threads, when there
        is enough new text to be worth it: the counts are the ones ``raw`` gives (a long text by its
        pieces), cached for it, so only the wall time changes (about half, on two free cores)."""
        texts = {text for item in items for text in self._long_texts(item) if text not in self._cache}
        if THREADS < 2 or sum(map(len, texts)) < THREADED_CHARACTERS:
            return
        cuts = {text: self._cutter.cut(text) if self._splittable and len(text) >= 2 * PIECE else [text]
                for text in texts}
        new = list({piece for cut in cuts.values() for piece in cut if piece not in self._cache})
        if len(self._cache) + len(new) + len(cuts) >= CACHE_ENTRIES:
            return  # raw would clear the cache before using them
        with ThreadPoolExecutor(THREADS) as pool:
            self._cache.update(zip(new, pool.map(self._encoded, new, chunksize=16), strict=True))
        self._cache.update((text, sum(map(self._cache.__getitem__, cut))) for text, cut in cuts.items())

    def _encoded(self, text: str) -> int:
        return len(self.encoding.encode_ordinary(text))

    def _long_texts(self, item: Item) -> Iterator[str]:
        """The texts of at least ``PIECE`` characters that counting ``item`` asks ``raw`` for: a
        call's arguments, else its text (Claude counts each part's text; OpenAI, the parts joined)."""
        if isinstance(item, ToolCall):
            texts: Iterator[str] = iter((item.arguments,))
        elif self.claude and isinstance(item.content, tuple):
            texts = (part.text for part in item.content if part.text)
        else:
            texts = iter((content_text(item.content),))
        return (text for text in texts if len(text) >= PIECE)

    def count(self, conversation: Conversation) -> TokenCount:
        last = self._last
        if last is not None and last[0] is conversation:  # a rerun over the very same request
            return last[1]
        result = self._count(conversation)
        self._last = (conversation, result)
        return result

    def _count(self, conversation: Conversation) -> TokenCount:
        notes: set[str] = set()
        per_item = self._items(conversation.items, notes)
        if self.claude:
            return self._claude_count(conversation, per_item, notes)
        rules = self.accounting
        instruction_text = content_text(conversation.instructions)
        has_system = _has_instructions(conversation)
        instructions = rules.per_message + self.raw("system") + self.raw(instruction_text) if instruction_text else 0
        rendered = render_functions(conversation.tools)
        tools = self.raw(rendered) + (rules.tools_with_system if has_system else rules.tools_alone) if rendered else 0
        priming = rules.priming
        if conversation.format == "responses":
            tools += round(RESPONSES["harmony_tools"]) if rendered and rules is HARMONY else 0
            custom, features = responses.custom_features(conversation.tools, self.raw)
            tools += custom + round(sum(RESPONSES[name] * value for name, value in features.items()))
            priming += self._responses_options(conversation, notes)
        return self._result(conversation, per_item, tools, instructions, priming, notes)

    def _responses_options(self, conversation: Conversation, notes: set[str]) -> int:
        """Structured output (``text.format`` with a JSON schema) in a Responses request, and what the
        request's date was billed beyond today's rule."""
        schema = _json_schema(conversation)
        options = 0 if schema is None else round(RESPONSES["schema_block"] + RESPONSES["schema"] * self.raw(schema))
        extra, said = responses.dated(conversation, self.choice.model)
        notes.update(said)
        return options + extra

    def claude_features(self, conversation: Conversation) -> claude.Features:
        """Every feature of ``conversation`` summed (for refitting ``claude.CONSTANTS``)."""
        model, notes, layout = self.choice.model, set(), Layout.of(conversation.items)
        parts = [claude.item_features(item, self.raw, model, continues=i in layout.continued,
                                      billed_thinking=i in layout.thinking, notes=notes, images_cache=self._images)
                 for i, item in enumerate(conversation.items)]
        parts.extend(self._claude_request(conversation, notes))
        total: claude.Features = {}
        for features in parts:
            for name, value in features.items():
                total[name] = total.get(name, 0.0) + value
        return total

    def responses_features(self, conversation: Conversation) -> dict[str, float]:
        """How much of each ``RESPONSES`` constant a Responses request holds (for refitting)."""
        files = sum(1 for item in conversation.items if not isinstance(item, ToolCall)
                    and isinstance(item.content, tuple) for part in item.content if part.type in images.FILE_KINDS)
        features = {"file": float(files)}
        if render_functions(conversation.tools) and self.accounting is HARMONY:
            features["harmony_tools"] = 1.0
        features.update(responses.custom_features(conversation.tools, self.raw)[1])
        features.update(responses.reasoning_features(conversation.items, self.raw))
        features.update(responses.dated_features(conversation, self.choice.model))
        schema = _json_schema(conversation)
        if schema is not None:
            features["schema_block"] = 1.0
            features["schema"] = float(self.raw(schema))
        return features

    def chat_features(self, conversation: Conversation) -> dict[str, float]:
        """How much of each fitted ``Accounting`` constant a request holds, named
        ``family.field`` (for the leave-one-out check of the Chat constants)."""
        rules = self.accounting
        family = "harmony" if rules is HARMONY else "chatml" if rules in (COOKBOOK, CHATML) else None
        if family is None:
            return {}
        layout = Layout.of(conversation.items)
        features = {f"{family}.call": float(sum(isinstance(item, ToolCall) for item in conversation.items)),
                    f"{family}.parallel": float(len(layout.parallel))}
        if render_functions(conversation.tools):
            has_system = _has_instructions(conversation)
            if family == "harmony":
                features["harmony.tools"] = 1.0
            else:
                features["chatml.tools_with_system" if has_system else "chatml.tools_alone"] = 1.0
        if family == "harmony":
            features["harmony.priming"] = 1.0
        return features

    def _claude_request(self, conversation: Conversation, notes: set[str]) -> tuple[claude.Features, ...]:
        """The features outside the items: system, tools, request options."""
        model = self.choice.model
        return (claude.content_features(conversation.instructions, self.raw, claude.text_feature(model), notes,
                                        self._images),
                claude.tools_features(conversation.tools, model, conversation.extra.get("tool_choice"), self.raw,
                                      notes),
                claude.request_features(conversation, model, self.raw))

    def _claude_count(self, conversation: Conversation, per_item: tuple[int, ...], notes: set[str]) -> TokenCount:
        system, tools, options = self._claude_request(conversation, notes)
        return self._result(conversation, per_item, claude.tokens(tools), claude.tokens(system),
                            claude.tokens(options), notes)

    def _result(self, conversation: Conversation, per_item: tuple[int, ...], tools: int, instructions: int,
                priming: int, notes: set[str]) -> TokenCount:
        reasons = self._notes(conversation, notes)
        unlogged = 0
        if self.calibration is not None:  # items are calibrated already (see _item)
            tools, instructions, priming = (self.calibration.apply(part) for part in (tools, instructions, priming))
            unlogged = self.calibration.unlogged(conversation.source)
            reasons.append(self.calibration.note())
        return TokenCount(
            total=unlogged + sum(per_item) + tools + instructions + priming,
            unlogged=unlogged,
            items=per_item,
            tools=tools,
            instructions=instructions,
            priming=priming,
            model=self.choice.model,
            encoding=self.choice.encoding,
            accounting=self.accounting.family,
            exact=not reasons,
            notes=tuple(reasons),
        )

    def _notes(self, conversation: Conversation, found: set[str]) -> list[str]:
        """Every reason the count is an estimate rather than the provider's published accounting."""
        if self.claude:
            encrypted = sum(1 for item in conversation.items if isinstance(item, Message) and _encrypted(item.content))
            tail = [f"estimate: {encrypted} reasoning item{'s' if encrypted != 1 else ''} with encrypted content "
                    "not counted"] if encrypted else []
        else:
            tail = responses.reasoning_notes(conversation.items)
        tail += sorted(found)
        if self.claude:
            return ["Claude's tokenizer is not published: text counted with o200k_base × "
                    f"{self._ratio:.3f} and Anthropic's overheads fitted on billed counts", *tail]
        notes = [self.choice.note] if self.choice.note else []
        if conversation.format == "responses":
            notes.append("Responses: Chat Completions' accounting, verified on recorded Responses requests "
                         "(OpenAI publishes none for Responses)")
        elif conversation.format not in ("chat", "native"):
            notes.append("accounting for this format is OpenAI Chat Completions' applied to the same items")
        if not self.accounting.published:
            notes.append(f"model family {self.accounting.family}: per-message constants fitted on billed counts")
        if any(not isinstance(item, Message) for item in conversation.items):
            notes.append("tool calls and tool results: rules fitted on billed counts (OpenAI publishes none)")
        if conversation.tools:
            notes.append("tool definitions: rendering rule fitted on billed counts")
        if any(tool.kind == "custom" for tool in conversation.tools):
            notes.append("custom tools: their name, description and grammar, plus constants fitted on gpt-5 bills")
        notes += responses.hosted_notes(conversation.tools)
        if conversation.format == "responses":
            notes += responses.stored_notes(conversation)
        contents = [item.content for item in conversation.items if not isinstance(item, ToolCall)]
        if not any(has_non_text(content) for content in contents) and any(isinstance(c, tuple) for c in contents):
            notes.append("content given as a list of parts: counted as their joined text (the Cookbook covers strings)")
        ignored = sorted(key for key in ("response_format", "web_search_options", "prediction", "audio")
                         if key in conversation.extra)
        if ignored:
            notes.append(f"request options that add tokens we do not count: {', '.join(ignored)}")
        if conversation.format == "responses" and _json_schema(conversation) is not None:
            notes.append("structured output: schema tokens estimated with fitted constants")
        return notes + tail


def _has_instructions(conversation: Conversation) -> bool:
    """Instructions, or a system or developer message: the tool definitions then cost less."""
    return bool(content_text(conversation.instructions)) or any(map(is_instruction, conversation.items))


def _json_schema(conversation: Conversation) -> str | None:
    """The JSON schema text of a Responses request's structured output (``text.format``), if any."""
    if conversation.format != "responses":
        return None
    text = conversation.extra.get("text")
    schema_format = text.get("format") if isinstance(text, Mapping) else None
    if not isinstance(schema_format, Mapping) or schema_format.get("type") != "json_schema":
        return None
    return json.dumps(schema_format.get("schema"))


def _encrypted(content: Content) -> bool:
    return isinstance(content, tuple) and any(part.type == "reasoning" and part.extra.get("encrypted_content")
                                              for part in content)


@dataclass(frozen=True)
class Layout:
    """Where items share a wire message, which changes what they cost: calls in a run of two
    or more (one parallel turn), message blocks that continue the block before them, and
    thinking or reasoning items in the current assistant turn (the only ones Anthropic and OpenAI bill)."""

    parallel: frozenset[int]
    continued: frozenset[int]
    thinking: frozenset[int] = frozenset()

    @classmethod
    def of(cls, items: tuple[Item, ...]) -> Layout:
        parallel: set[int] = set()
        continued: set[int] = set()
        for i, (before, after) in enumerate(pairwise(items)):
            if _both_calls(before, after):
                parallel.update((i, i + 1))
            if _continues(before, after):
                continued.add(i + 1)
        return cls(frozenset(parallel), frozenset(continued),
                   claude.billed_thinking(items) | responses.current_reasoning(items))

    @staticmethod
    def at(items: tuple[Item, ...], position: int) -> tuple[bool, bool]:
        """Whether the item at ``position`` is in ``parallel`` and in ``continued``, read from its two
        neighbours alone: what counting one item where it stands needs (an edited item, thinking),
        where the layout of a window around it also read its thinking, at every such item of a request."""
        item = items[position]
        before = items[position - 1] if position else None
        after = items[position + 1] if position + 1 < len(items) else None
        return _both_calls(before, item) or _both_calls(item, after), _continues(before, item)


def _both_calls(before: Item | None, after: Item | None) -> bool:
    """Two neighbours that are calls: one parallel turn, each call priced as one of several."""
    return isinstance(before, ToolCall) and isinstance(after, ToolCall)


def _continues(before: Item | None, after: Item | None) -> bool:
    """``after`` is a later block of ``before``'s wire message: it pays no message overhead of its own."""
    return bool(isinstance(before, Message) and isinstance(after, Message) and before.origin and after.origin
                and after.origin.block and before.origin.index == after.origin.index)


def turn_billed(item: Item) -> bool:
    """``item`` is thinking (Anthropic) or reasoning (Responses): billed only in the current turn,
    after the last user message, so what it costs depends on what follows it in the request — a
    user message added after it takes it out of the bill, whatever the meter's provider."""
    return bool(Layout.of((item,)).thinking)


def count(conversation: Conversation, model: str | None = None) -> TokenCount:
    """The prompt tokens of ``conversation`` for ``model`` (default: the request's own model),
    with a throwaway meter; hold an ``Engine`` to keep counts across calls."""
    return Meter(model or conversation.model).count(conversation)
