"""Where a person's own conversation starts: the model it brings (priced by the catalogue as
itself, or of unknown price — never as another model) and the playground's defaults for that
model, on real agent logs."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from playground import formats
from playground.meter.names import bare
from playground.meter.tokens import Meter
from playground.rules.ruleset import book_rules
from playground.run.prices import DEFAULT_MODEL, _find, _routes, model_for, read_prices
from playground.workbench import defaults

from .conftest import ROOT, SHARED, shared

PRICES = read_prices()
CODEX = ROOT / "tests" / "data" / "codex-rollout.jsonl"
CLAUDE_CODE = SHARED / "sessions" / "claude-code-session-196820da.jsonl"


@pytest.mark.parametrize(("named", "row"), [
    ("gpt-5.5", "gpt-5.5"),  # Codex's model, measured: once priced as gpt-5, now its own row
    ("o4-mini", "o4-mini"),
    ("gpt-4.5-preview", "gpt-4.5-preview"),
    ("claude-opus-4-1", "claude-opus-4-1"),  # once priced as Sonnet 4.5
    ("claude-3-haiku-20240307", "claude-3-haiku"),
    ("claude-opus-4-5-20251101", "claude-opus-4-5"),
    ("gpt-4o-2024-08-06", "gpt-4o"),  # a dated snapshot is its model's row
    ("my-local-llama", None),  # nobody lists it: unknown, never gpt-4o
    ("aide-gpt-5", None),
])
def test_a_model_is_priced_as_its_own_row_or_not_at_all(named, row):
    price = PRICES.get(named)
    assert price.priced_as == row and price.known == (row is not None) and price.model == named


@pytest.mark.parametrize(("named", "row"), [
    ("openrouter/openai/gpt-4o-mini", "openai/gpt-4o-mini"),  # Aider through OpenRouter, at OpenRouter's row
    ("openai/gpt-4.1-mini", "gpt-4.1-mini"),  # LiteLLM
    ("azure/gpt-4o-2024-08-06", "gpt-4o"),
    ("anthropic/claude-sonnet-4.5", "claude-sonnet-4-5"),  # OpenRouter writes Claude's versions with dots
    ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", "regional.anthropic.claude-sonnet-4-5-20250929-v1:0"),  # Bedrock
    ("claude-sonnet-4-5@20250929", "claude-sonnet-4-5"),  # Vertex
    ("gemini/gemini-2.0-flash", "gemini-2.0-flash"),
    ("deepseek/deepseek-chat", "deepseek-chat"),
    ("x-ai/grok-code-fast-1", "grok-code-fast-1"),
    ("openrouter/qwen/qwen3-coder", "qwen/qwen3-coder"),
])
def test_a_routed_model_name_is_priced_at_the_catalogues_row_for_the_route(named, row):
    price = PRICES.get(named)
    assert price.priced_as == row and price.known


@given(st.text(alphabet="abcdeglmnoprstuv0123456789.-:@", min_size=1, max_size=24),
       st.sampled_from(["", "openrouter/", "openrouter/openai/", "azure/"]))
def test_a_route_is_all_that_is_taken_off(name, route):
    """A plain name that is not Claude's comes back as it is (the alphabet has no ``/`` and no
    vendor), a route in front of it changes nothing, and a bare name is its own bare name."""
    if not name.lower().startswith("claude"):
        assert bare(name) == name
    assert bare(route + name) == bare(name) and bare(bare(name)) == bare(name)


def test_a_routed_name_is_counted_as_the_model():
    conversation = formats.loads(CODEX.read_bytes())
    for route, model in (("openrouter/openai/gpt-4o-mini", "gpt-4o-mini"),
                         ("anthropic/claude-sonnet-4.5", "claude-sonnet-4-5")):
        assert Meter(route).count(conversation) == Meter(model).count(conversation)
    choice = model_for(formats.loads(CODEX.read_bytes().replace(b'"gpt-5-codex"', b'"openai/gpt-5-codex"')), PRICES)
    assert choice.model == "openai/gpt-5-codex" and choice.priced and choice.note is None


@given(st.text(alphabet="abcdeglmnoprstu0123456789.-/", max_size=24), st.sampled_from(["chat", "responses",
                                                                                      "anthropic", "native", None]))
def test_a_price_is_the_catalogues_row_for_the_name_or_unknown(named, api_format):
    """Whatever the name, its price is a catalogue row whose own matching claims the name (or the
    name a route gives it), or unknown — never a stand-in; a claude-* name is never a non-Claude row."""
    price = PRICES.get(named, api_format)
    if price.priced_as is None:
        assert not price.known and "price unknown — enter it" in price.source
        return
    _, info = _find(named)
    assert info.id == price.priced_as and any(info.is_match(name) for name, _ in _routes(named))
    if bare(named).startswith("claude"):
        assert "claude" in price.priced_as and price.cache == "anthropic"


def test_the_codex_rollout_brings_an_openai_model():
    conversation = formats.loads(CODEX.read_bytes())
    choice = model_for(conversation, PRICES)
    assert (conversation.model, choice.model, choice.provider, choice.note) == ("gpt-5-codex",) * 2 + ("openai", None)
    renamed = formats.loads(CODEX.read_bytes().replace(b'"gpt-5-codex"', b'"gpt-9.9"'))
    choice = model_for(renamed, PRICES)
    assert choice.model == "gpt-9.9" and not choice.priced and "'gpt-9.9'" in choice.note
    assert "does not list" in choice.note and "price unknown — enter it" in choice.note


def test_a_claude_code_log_brings_a_claude_model():
    conversation = formats.loads(shared(CLAUDE_CODE).read_bytes())
    choice = model_for(conversation, PRICES)
    assert (choice.model, choice.provider, choice.note) == ("claude-sonnet-4-5-20250929", "anthropic", None)
    renamed = formats.loads(shared(CLAUDE_CODE).read_bytes().replace(b"claude-sonnet-4-5-20250929",
                                                                     b"claude-opus-4-9"))
    choice = model_for(renamed, PRICES)  # counted as Claude (the meter knows the family), its price unknown
    assert choice.model == "claude-opus-4-9" and choice.provider == "anthropic" and not choice.priced


def test_a_log_that_names_no_model_is_its_formats_default():
    assert model_for(formats.read({"messages": [{"role": "user", "content": "hi"}]}), PRICES).model == DEFAULT_MODEL


@pytest.mark.parametrize(("model", "threshold"), [("gpt-4o", 50_000), ("claude-sonnet-4-5", 50_000),
                                                  ("gpt-4", 4_096), ("gpt-3.5-turbo", 8_192),
                                                  ("gemini-3-pro-preview", 50_000)])  # a window nobody lists
def test_the_defaults_are_the_books_threshold_capped_at_half_the_window(model, threshold):
    start = defaults.defaults_for(model, PRICES)
    window = PRICES.get(model).context_window
    assert start.threshold == threshold <= (window // 2 if window else threshold)
    assert (start.keep_recent, start.compact_errors, start.detect_errors, start.rules) == (0, False, True, book_rules())
    assert ("(the book's)" in start.describe()) == (threshold == defaults.BOOK_THRESHOLD)


def test_provenance_names_each_setting_once_grouped_by_origin():
    origins = {"rules": "the preset “Coding agent”", "model": "the preset “Coding agent”", "keep_recent": defaults.YOU,
               "threshold": "the preset “Coding agent”", "errors": defaults.YOU}
    assert defaults.provenance(origins) == ("model, threshold and rules: the preset “Coding agent”; "
                                            "keep_recent and errors: you changed it")
    assert defaults.provenance({}) == ""
