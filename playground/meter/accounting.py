"""How each model family turns a request into prompt tokens: the constants a meter counts with.

Where OpenAI publishes the accounting (the Cookbook's "How to count tokens with tiktoken":
3 tokens per message, +1 for ``name``, 3 to prime the reply) it is used as published. Where it
does not — tool calls, tool definitions, parallel calls, the gpt-5 / o-series family, what only
Responses requests hold — the constants were fitted on real billed counts in
``shared/fixtures/token-counts/`` and are re-verified, leave-one-out, by ``python -m playground
accuracy``. Apart from ``tokens.Meter``, which applies them, so a refit changes this file alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


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

# OpenAI Responses: what its items and options add on top of the Chat accounting above, which
# the Responses API bills alike for messages, calls and outputs (plain messages: 0 off on the
# recorded cases). Fitted on shared/fixtures/token-counts/responses_recorded_cases.json
# (``python -m playground accuracy`` refits them leave-one-out).
RESPONSES: Mapping[str, float] = {
    "file": 7.019,  # each input_file (PDF): its text is extracted by the API; estimate per file
    "schema": 0.684,  # per token of text.format's JSON schema (5 recorded cases: a rough estimate)
    "schema_block": 1.176,  # the structured-output instructions around it
    "harmony_tools": -79.7,  # gpt-5 / o-series: Responses bills tools ~9 over their text, not Chat's 89
    # A ``custom`` tool: its name, description and grammar text, plus CUSTOM_TOOL (and CUSTOM_GRAMMAR when its
    # format is a lark or regex grammar). Fitted on gpt-5 recordings (tests/recorded-bills/responses.json).
    "custom_tool": 38.208,
    "custom_grammar": 33.924,
    # A reasoning item of the current turn (after the last user message) is billed as the reasoning it
    # carries; its encrypted content is the only trace of it in the body, and grows with it.
    "reasoning_item": -127.393,  # (with the next two: a long item's share is its length)
    "reasoning_char": 0.1540,  # per character of encrypted_content
    "reasoning_summary": 0.973,  # per token of the visible summary it carries
    # What a request was billed beyond today's rule until early April 2025 (``RESPONSES_DATED``).
    "gpt-4o_until_2025-04.request": 18.0,
    "gpt-4o_until_2025-04.strict_tools": 192.0,
    "o-series_until_2025-04.reasoning_effort": 59.0,
}


@dataclass(frozen=True)
class DatedOverhead:
    """Tokens a model family's requests were billed beyond today's rule, until the bill changed."""

    prefixes: tuple[str, ...]  # model names it applies to (lower case, by prefix)
    until: str  # ISO date: recordings from this day on no longer show it
    applies: str  # "request": every request; "strict_tools": a request with strict function tools;
    # "reasoning_effort": a request that sets reasoning.effort
    constant: str  # its tokens: the ``RESPONSES`` constant of that name (fitted with the others)
    evidence: str


# Fitted on recordings whose response dates them (tests/recorded-bills/responses.json, ``date``). The Responses
# API, launched 2025-03-11, billed these until between 2025-03-27 (last recording showing them) and 2025-04-07
# (first recording without): a request whose date is unknown is counted by today's rule and says so.
RESPONSES_DATED: tuple[DatedOverhead, ...] = (
    DatedOverhead(("gpt-4o",), "2025-04-01", "request", "gpt-4o_until_2025-04.request",
                  "gpt-4o 2025-03-27: 32 billed for 14, 42 for 24"),
    DatedOverhead(("gpt-4o",), "2025-04-01", "strict_tools", "gpt-4o_until_2025-04.strict_tools",
                  "gpt-4o 2025-03-27, one strict tool: 256 billed for 46, 255 for 45, 286 for 63"),
    DatedOverhead(("o1", "o3", "o4"), "2025-04-01", "reasoning_effort", "o-series_until_2025-04.reasoning_effort",
                  "o3-mini 2025-03-27: 88 billed for 29"),
)

# The fitted Chat constants by ``family.field``, as ``Meter.chat_features`` names them.
CHAT_FITTED: Mapping[str, float] = {
    **{f"chatml.{field}": float(getattr(CHATML, field)) for field in ("call", "parallel", "tools_alone",
                                                                      "tools_with_system")},
    **{f"harmony.{field}": float(getattr(HARMONY, field)) for field in ("call", "parallel", "priming")},
    "harmony.tools": float(HARMONY.tools_alone),  # one constant: harmony bills tools alike with or without system
}

# Anthropic models: a family label only; the accounting itself lives in claude.py.
CLAUDE = Accounting("Anthropic Claude (fitted, claude.py)")

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
