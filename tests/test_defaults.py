"""Where a person's own conversation starts: the model it brings (or the nearest listed one of its
provider) and the playground's defaults for that model, on real agent logs."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from playground import formats
from playground.meter.names import bare
from playground.meter.tokens import Meter
from playground.rules.ruleset import book_rules
from playground.run.prices import DEFAULT_MODEL, model_for, read_prices
from playground.workbench import defaults

from .conftest import ROOT, SHARED, shared

PRICES = read_prices()
CODEX = ROOT / "tests" / "data" / "codex-rollout.jsonl"
CLAUDE_CODE = SHARED / "sessions" / "claude-code-session-196820da.jsonl"


@pytest.mark.parametrize(("named", "api_format", "row"), [
    ("gpt-5.5", "responses", "gpt-5"),  # Codex's model, measured priced as the previous conversation's Claude
    ("gpt-5.1-mini", None, "gpt-5-mini"),  # the shared end decides between the gpt-5 rows
    ("o4-mini", None, "o3-mini"),  # the same (harmony) prompt format before the name
    ("gpt-4.5-preview", None, "gpt-4.1"),
    ("claude-opus-4-1", "chat", "claude-sonnet-4-5"),  # a Claude model through an OpenAI-format proxy is Claude
    ("claude-3-haiku-20240307", None, "claude-sonnet-4-5"),
    ("my-local-llama", "anthropic", "claude-sonnet-4-5"),  # no provider in the name: the API format's
    ("my-local-llama", "chat", DEFAULT_MODEL),
    (None, "anthropic", "claude-sonnet-4-5"),
    (None, "responses", DEFAULT_MODEL),
    ("gpt-4o-2024-08-06", "anthropic", "gpt-4o"),  # a listed prefix is the model's own row
])
def test_an_unlisted_model_falls_back_to_the_nearest_of_its_provider(named, api_format, row):
    assert PRICES.nearest(named, api_format) == row


@pytest.mark.parametrize(("named", "row"), [
    ("openrouter/openai/gpt-4o-mini", "gpt-4o-mini"),  # Aider through OpenRouter, on a real log
    ("openai/gpt-4.1-mini", "gpt-4.1-mini"),  # LiteLLM
    ("azure/gpt-4o-2024-08-06", "gpt-4o"),
    ("anthropic/claude-sonnet-4.5", "claude-sonnet-4-5"),  # OpenRouter writes Claude's versions with dots
    ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5"),  # Bedrock
    ("claude-sonnet-4-5@20250929", "claude-sonnet-4-5"),  # Vertex
    ("gemini/gemini-2.0-flash", None),
    ("deepseek/deepseek-chat", None),
])
def test_a_routed_model_name_has_the_models_own_row(named, row):
    assert PRICES.listed(named) == row
    if row:
        assert PRICES.get(named) == PRICES.prices[row]


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
    assert choice.model == "gpt-5-codex" and "a route to gpt-5-codex" in choice.note


@given(st.text(alphabet="abcdeglmnoprstu0123456789.-", max_size=24), st.sampled_from(["chat", "responses",
                                                                                     "anthropic", "native", None]))
def test_the_stand_in_is_never_another_providers(named, api_format):
    """A gpt-* name is never counted as Claude, nor a claude-* name as an OpenAI model."""
    row = PRICES.nearest(named, api_format)
    assert row in PRICES.prices
    provider = PRICES.prices[row].provider
    if named.startswith("claude"):
        assert provider == "anthropic"
    elif named.startswith(("gpt", "o1", "o3", "o4")):
        assert provider == "openai"


def test_an_unlisted_model_is_priced_as_its_stand_in_and_says_so():
    price = PRICES.get("gpt-5.5", "responses")
    assert price.model == "gpt-5.5" and price.input == PRICES.prices["gpt-5"].input
    assert price.source.startswith("not listed: priced as gpt-5, the nearest listed model")


def test_the_codex_rollout_brings_an_openai_model():
    conversation = formats.loads(CODEX.read_bytes())
    choice = model_for(conversation, PRICES)
    assert (conversation.model, choice.model, choice.provider, choice.note) == ("gpt-5-codex",) * 2 + ("openai", None)
    renamed = formats.loads(CODEX.read_bytes().replace(b'"gpt-5-codex"', b'"gpt-5.5"'))
    choice = model_for(renamed, PRICES)
    assert choice.model == "gpt-5" and "'gpt-5.5'" in choice.note and "nearest OpenAI model" in choice.note


def test_a_claude_code_log_brings_a_claude_model():
    conversation = formats.loads(shared(CLAUDE_CODE).read_bytes())
    choice = model_for(conversation, PRICES)
    assert (choice.model, choice.provider, choice.note) == ("claude-sonnet-4-5-20250929", "anthropic", None)
    renamed = formats.loads(shared(CLAUDE_CODE).read_bytes().replace(b"claude-sonnet-4-5-20250929",
                                                                     b"claude-opus-4-9"))
    assert model_for(renamed, PRICES).model == "claude-sonnet-4-5"


@pytest.mark.parametrize(("model", "threshold"), [("gpt-4o", 50_000), ("claude-sonnet-4-5", 50_000),
                                                  ("gpt-4", 4_096), ("gpt-3.5-turbo", 8_192)])
def test_the_defaults_are_the_books_threshold_capped_at_half_the_window(model, threshold):
    start = defaults.defaults_for(model, PRICES)
    assert start.threshold == threshold <= PRICES.get(model).context_window // 2
    assert (start.keep_recent, start.compact_errors, start.detect_errors, start.rules) == (0, False, True, book_rules())
    assert ("(the book's)" in start.describe()) == (threshold == defaults.BOOK_THRESHOLD)


def test_provenance_names_each_setting_once_grouped_by_origin():
    origins = {"rules": "the preset “Coding agent”", "model": "the preset “Coding agent”", "keep_recent": defaults.YOU,
               "threshold": "the preset “Coding agent”", "errors": defaults.YOU}
    assert defaults.provenance(origins) == ("model, threshold and rules: the preset “Coding agent”; "
                                            "keep_recent and errors: you changed it")
    assert defaults.provenance({}) == ""
