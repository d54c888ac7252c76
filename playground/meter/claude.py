"""Anthropic Messages accounting: what Claude models bill for a request, estimated offline.

Claude's tokenizer is not published, so text is counted with ``o200k_base`` and scaled by a ratio
fitted on real billed counts. Measured alternatives, same features, leave-one-out on the recorded
cases (median / worst / mean): o200k_base 1.9% / 23.5% / 3.3%; cl100k_base 2.3% / 17.6% / 3.6%; the
legacy Claude 2 tokenizer (``tokenizer.json`` shipped in ``anthropic`` SDK ≤ 0.37 on PyPI, run with
the ``tokenizers`` package) 2.0% / 25.0% / 4.3% — Anthropic documents it as inaccurate for Claude 3
and later. o200k_base has the best median and mean, and is the vocabulary already loaded.
Every other part is a named *feature* of the request (a count of tokens, blocks, pages…) with one
fitted *constant* each, so a count is ``Σ constant × feature`` and ``python -m playground
accuracy`` can refit the constants without any one recorded case (leave-one-out).

Evidence: ``shared/fixtures/token-counts/anthropic_recorded_cases.json`` (125 real requests,
110 computable from the body); the constants below are the fit that ``python -m playground
accuracy`` prints in its "fitted now on all computable cases" column, rounded. Anthropic documents
two of the parts, used as published: the tool-use system prompt per model and ``tool_choice``, and
image tokens.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ..conversation import Content, Conversation, Item, Message, Part, Tool, ToolCall, ToolResult
from . import images

Features = dict[str, float]

# Fitted on the recorded cases (relative-error L1 fit: fitting.fit_constants). Units: tokens per
# feature unit; "text" and "text_v2" are Claude tokens per o200k_base token.
CONSTANTS: Mapping[str, float] = {
    "base": 4.467,  # every request: the turn markers around the conversation
    "message": 1.053,  # each wire message
    "text": 1.158,  # prose, code and JSON alike: a split (code/JSON 1.21, prose 1.16) did not improve
    # leave-one-out (2.0% vs 1.9% median); no recorded request is mostly non-English, so none is fitted
    "text_v2": 1.578,  # Opus 4.7 / 4.8 use a newer tokenizer (8 recorded cases)
    "tool_definition": 0.972,  # per o200k token of a tool's JSON (name, description, input_schema)
    "tool": 3.400,  # each tool definition
    "tool_prompt_newer_auto": 164.5,  # 4.5 / 4.6 models bill more than the documented prompt…
    "tool_prompt_newer_any": 298.6,  # …with tool_choice any / tool
    "tool_use_key": 17.1,  # each key of a tool_use input (its name and value are text)
    "tool_block": 17.8,  # each tool_use and each tool_result block
    "image_block": 6.805,  # each image, on top of Anthropic's documented width × height / 750
    "pdf_page": 1607.4,  # each PDF page (rendered as an image plus its text): an estimate
    "schema": 1.566,  # per o200k token of a structured-output JSON schema
    "schema_block": 87.9,  # the structured-output instructions around it
    "task_budget": 37.1,  # output_config.task_budget
    "thinking_enabled": 32.0,  # thinking {"type": "enabled"}
}
# Parts Anthropic publishes, used as documented (coefficient 1, not fitted).
PUBLISHED = ("tool_prompt", "image")

# Anthropic's pricing page, "Tool use system prompt tokens": (auto or none, any or tool).
TOOL_PROMPTS: tuple[tuple[str, tuple[int, int]], ...] = (
    ("claude-3-opus", (530, 281)),
    ("claude-3-sonnet", (159, 235)),
    ("claude-3-haiku", (264, 340)),
    ("claude-3-5-haiku", (264, 340)),
    ("claude-3-5-sonnet-20240620", (294, 261)),
)
DEFAULT_TOOL_PROMPT = (346, 313)  # Claude 3.5 Sonnet (Oct), 3.7, 4.x
_NEWER_TOOL_PROMPT = re.compile(r"(sonnet|haiku|opus)-4-[56]")
_NEW_TOKENIZER = re.compile(r"opus-4[-.][78]")  # (Cline names them with a dot: claude-opus-4.8-fast)
_THINKING = ("thinking", "redacted_thinking")


def is_claude(model: str | None) -> bool:
    return bool(model) and str(model).lower().startswith("claude")


def text_feature(model: str) -> str:
    """Which ratio turns o200k tokens into this model's tokens."""
    return "text_v2" if _NEW_TOKENIZER.search(model) else "text"


def tokens(features: Features, constants: Mapping[str, float] = CONSTANTS) -> int:
    """``Σ constant × feature``, published parts at face value."""
    return round(sum(value * (1.0 if name in PUBLISHED else constants.get(name, 0.0))
                     for name, value in features.items()))


def _add(features: Features, name: str, value: float) -> None:
    if value:
        features[name] = features.get(name, 0.0) + value


def part_features(part: Part, raw: Callable[[str], int], text: str, notes: set[str],
                  images_cache: dict[str, tuple[int, int] | None]) -> Features:
    """One content block that is not plain text: images, documents, and blocks we can only
    approximate by their JSON."""
    features: Features = {}
    if part.text is not None:
        _add(features, text, raw(part.text))
        return features
    image = images.image_reference(part.type, part.extra)
    if image is not None:
        _add(features, "image_block", 1)
        size = _size(image[0], images_cache) if image[0] else None
        if size:
            _add(features, "image", images.anthropic_tokens(*size))
        else:
            _add(features, "image", images.anthropic_tokens(1092, 1092))
            notes.add("image given by URL or file id (or unreadable): estimated at the largest size "
                      "Anthropic bills without resizing (~1,590 tokens)")
        return features
    if part.type in images.FILE_KINDS:
        source = part.extra.get("source") if isinstance(part.extra.get("source"), Mapping) else {}
        data = images.file_data(part.type, part.extra)
        if source.get("type") == "text" and isinstance(source.get("data"), str):
            _add(features, text, raw(source["data"]))
        elif data and (pages := images.pdf_pages(data)):
            _add(features, "pdf_page", pages)
            notes.add(f"PDF: estimated per page ({CONSTANTS['pdf_page']:.0f} tokens a page, fitted); "
                      "its text and page images are not read")
        else:
            notes.add("document given by URL or file id (or not a PDF): its content is not counted")
        return features
    if part.type in _THINKING:
        return features  # counted (or not) by its position: see item_features
    notes.add(f"{part.type} blocks: counted as the tokens of their JSON (Anthropic documents no rule)")
    _add(features, text, raw(json.dumps(images.without_payloads(part.extra), ensure_ascii=False)))
    return features


def _size(data: str, cache: dict[str, tuple[int, int] | None]) -> tuple[int, int] | None:
    if data not in cache:
        cache[data] = images.image_size(data)
    return cache[data]


def content_features(content: Content, raw: Callable[[str], int], text: str, notes: set[str],
                     images_cache: dict[str, tuple[int, int] | None]) -> Features:
    features: Features = {}
    if isinstance(content, str):
        _add(features, text, raw(content))
    elif isinstance(content, tuple):
        for part in content:
            for name, value in part_features(part, raw, text, notes, images_cache).items():
                _add(features, name, value)
    return features


def item_features(item: Item, raw: Callable[[str], int], model: str, *, continues: bool, billed_thinking: bool,
                  notes: set[str], images_cache: dict[str, tuple[int, int] | None]) -> Features:
    """The features one item adds. ``continues``: a block after the first of its wire message;
    ``billed_thinking``: thinking in the current assistant turn (earlier turns' thinking is
    stripped by the API and not billed: a recorded request replaying ~3,000 characters of
    thinking is billed 97 tokens)."""
    text = text_feature(model)
    features: Features = {} if continues else {"message": 1.0}
    if isinstance(item, ToolCall):
        _add(features, "tool_block", 1)
        _add(features, text, raw(item.name) + raw(item.arguments))
        _add(features, "tool_use_key", _keys(item.parsed_arguments()))
        return features
    content = item.content
    if isinstance(item, ToolResult):
        _add(features, "tool_block", 1)
    elif billed_thinking and isinstance(content, tuple):
        for part in content:
            if part.type == "thinking" and isinstance(part.extra.get("thinking"), str):
                _add(features, text, raw(part.extra["thinking"]))
            elif part.type == "redacted_thinking":
                notes.add("redacted thinking in the current turn: billed, but encrypted, so not counted")
    for name, value in content_features(content, raw, text, notes, images_cache).items():
        _add(features, name, value)
    return features


def _keys(value: Any) -> int:
    """Keys of a tool_use input, nested ones too: each costs its own markup around the value."""
    if isinstance(value, Mapping):
        return len(value) + sum(_keys(item) for item in value.values())
    if isinstance(value, list | tuple):
        return sum(_keys(item) for item in value)
    return 0


def tool_prompt(model: str, tool_choice: Any) -> int:
    """Anthropic's documented tool-use system prompt for ``model`` and ``tool_choice``."""
    prompts = next((value for prefix, value in TOOL_PROMPTS if model.startswith(prefix)), DEFAULT_TOOL_PROMPT)
    return prompts[0] if _choice(tool_choice) in ("auto", "none") else prompts[1]


def _choice(tool_choice: Any) -> str:
    return str(tool_choice.get("type", "auto")) if isinstance(tool_choice, Mapping) else "auto"


def tools_features(tools: Iterable[Tool], model: str, tool_choice: Any, raw: Callable[[str], int],
                   notes: set[str]) -> Features:
    features: Features = {}
    tools = tuple(tools)
    for tool in tools:
        if tool.kind not in ("function", "custom"):
            notes.add(f"server tool {tool.name!r}: its definition and what it adds are not counted")
            continue
        wire = {"name": tool.name, "description": tool.description, "input_schema": dict(tool.parameters or {})}
        _add(features, "tool", 1)
        _add(features, "tool_definition", raw(json.dumps(wire)))
    if tools:
        _add(features, "tool_prompt", tool_prompt(model, tool_choice))
        if _NEWER_TOOL_PROMPT.search(model):
            newer = "tool_prompt_newer_auto" if _choice(tool_choice) in ("auto", "none") else "tool_prompt_newer_any"
            _add(features, newer, 1)
    return features


def request_features(conversation: Conversation, model: str, raw: Callable[[str], int]) -> Features:
    """What the request's options add: the turn markers, structured output, budgets, thinking."""
    extra = conversation.extra
    features: Features = {"base": 1.0}
    config = extra.get("output_config") if isinstance(extra.get("output_config"), Mapping) else {}
    schema_format = config.get("format") or extra.get("output_format")
    if isinstance(schema_format, Mapping):
        _add(features, "schema_block", 1)
        _add(features, "schema", raw(json.dumps(schema_format.get("schema"))))
    if config.get("task_budget"):
        _add(features, "task_budget", 1)
    thinking = extra.get("thinking")
    if isinstance(thinking, Mapping) and thinking.get("type") == "enabled":
        _add(features, "thinking_enabled", 1)
    return features


def billed_thinking(items: tuple[Item, ...]) -> frozenset[int]:
    """Positions whose thinking blocks are billed: those after the last user message that is not
    only tool results (the current assistant turn of a tool-use loop)."""
    last_user = max((i for i, item in enumerate(items) if ends_turn(item)), default=-1)
    return frozenset(i for i, item in enumerate(items) if i > last_user and has_thinking(item))


def ends_turn(item: Item) -> bool:
    """A user message (tool results are items of their own): thinking before it is no longer billed."""
    return isinstance(item, Message) and item.role == "user"


def has_thinking(item: Item) -> bool:
    """A message holding thinking blocks: billed while it is in the current turn only."""
    return (isinstance(item, Message) and isinstance(item.content, tuple)
            and any(p.type in _THINKING for p in item.content))
