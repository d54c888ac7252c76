"""Catalogue prices: prices and windows of the model that ran, from the genai-prices catalogue — never
another model's. Every model name in the real logs is priced under its own catalogue row or shown
as unknown; a made-up name costs ``null``; a logged call is priced on the log's date; looking a
price up makes no network request."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest

from playground import formats
from playground.conversation import Conversation, Message
from playground.meter.names import bare
from playground.meter.tokens import Meter
from playground.policies import NonePolicy, make
from playground.run.compare import compare, rows_to_json
from playground.run.prices import (
    UNKNOWN_NOTE,
    _find,
    _routes,
    catalogue_price,
    load_prices,
    min_cacheable,
    read_prices,
)
from playground.run.replay import replay, replay_to_json
from playground.workbench.presets import list_presets

from .conftest import ROOT, SHARED
from .test_cli import cli

PRICES = read_prices()
DATA = ROOT / "tests" / "data"


def _real_logs() -> list[Path]:
    """Every real log in tests/data and ../shared/fixtures that a reader reads (a user's clone has no ../shared)."""
    found = [path for path in sorted(DATA.iterdir()) if path.name != "README.md"]
    if SHARED.is_dir():
        found += sorted((SHARED / "sessions").glob("*.jsonl")) + sorted((SHARED / "traces").glob("*.json"))
    return found


def _models() -> list[tuple[str, str]]:
    named = []
    for path in _real_logs():
        model = formats.read_path(path).model
        if model:
            named.append((path.name, model))
    return named


MODELS = _models()


def test_the_real_logs_name_models_of_many_providers():
    """The walk below means something: the logs name Claude, GPT, Gemini, DeepSeek and Mistral models."""
    names = " ".join(model for _, model in MODELS)
    assert len(MODELS) >= 15 and all(part in names for part in ("claude", "gpt", "gemini", "deepseek", "voxtral"))


@pytest.mark.parametrize(("log", "model"), MODELS, ids=[f"{log}:{model}" for log, model in MODELS])
def test_every_logged_model_is_priced_as_itself_or_shown_as_unknown(log, model):
    """The catalogue row a logged name is priced at is one whose own matching claims that name (or
    the model a router's or cloud's name routes to): never a stand-in. A Claude name is a Claude row."""
    price = PRICES.get(model)
    if price.priced_as is None:
        assert not price.known and UNKNOWN_NOTE in price.source
        return
    _, info = _find(model)
    assert info.id == price.priced_as and any(info.is_match(name) for name, _ in _routes(model))
    assert price.known and f": {price.priced_as}" in price.source
    if bare(model).lower().startswith("claude"):
        assert "claude" in price.priced_as and price.cache == "anthropic"


def test_opus_4_5_is_priced_at_opus_prices():
    """Once priced as Sonnet 4.5 (about 40 % under)."""
    price = PRICES.get("claude-opus-4-5-20251101")
    assert price.priced_as == "claude-opus-4-5"
    assert (price.input, price.cached_input, price.cache_write, price.output) == (5.0, 0.5, 6.25, 25.0)
    assert price.context_window == 200_000 and price.cache == "anthropic" and price.min_cacheable == 4096


@pytest.mark.parametrize(("model", "row", "rates"), [
    ("gemini-3-pro-preview", "gemini-3-pro-preview", (2.0, 0.2, 12.0)),  # once priced as gpt-4o
    ("gemini-3-flash-preview", "gemini-3-flash-preview", (0.5, 0.05, 3.0)),
    ("x-ai/grok-code-fast-1", "grok-code-fast-1", (0.2, 0.02, 1.5)),
    ("openrouter/qwen/qwen3-coder", "qwen/qwen3-coder", None),
])
def test_gemini_grok_and_qwen_are_priced_as_themselves(model, row, rates):
    price = PRICES.get(model)
    assert price.priced_as == row and price.known
    if rates:
        assert (price.input, price.cached_input, price.output) == rates
    assert price.input != PRICES.get("gpt-4o").input


def test_a_long_prompt_pays_the_catalogues_long_context_tier():
    """Gemini 3 Pro bills a prompt over 200k tokens at its higher tier, every token of the call."""
    price = PRICES.get("gemini-3-pro-preview")
    assert price.at(200_000).input == 2.0 and price.at(200_001).input == 4.0 and price.at(200_001).output == 18.0


@pytest.mark.parametrize("model", ["aide-gpt-5", "gpt-9.9-ultra", "claude-opus-9-9", "my-local-llama"])
def test_an_invented_model_costs_null_and_is_priced_as_nothing(model):
    conversation = Conversation(items=(Message(role="user", content="Read the notes."),
                                       Message(role="assistant", content="Done: 3 notes."),
                                       Message(role="user", content="Thanks.")), format="chat", model=model)
    price = PRICES.get(model, "chat")
    assert price.priced_as is None and not price.known and math.isnan(price.input)
    run = replay(conversation, NonePolicy(), Meter(model), price)
    data = replay_to_json(run)
    assert data["priced_as"] is None and UNKNOWN_NOTE in data["price_note"]
    assert data["totals"]["tokens_without"] > 0  # tokens are counted all the same
    assert data["totals"]["cost_without"] is None and all(call["cost_without"] is None for call in data["calls"])
    json.dumps(data, allow_nan=False)  # no NaN reaches the JSON
    rows = rows_to_json(compare(conversation, [NonePolicy()], Meter(model), price))
    assert rows[0]["cost"] is None and rows[0]["priced_as"] is None and rows[0]["tokens_billed"] > 0


def test_the_cli_prices_an_unknown_model_as_nothing_and_says_so(tmp_path):
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"model": "aide-gpt-5", "messages": [
        {"role": "user", "content": "Read the notes."}, {"role": "assistant", "content": "Done: 3 notes."}]}))
    replayed = cli("replay", str(path), "--json")
    data = json.loads(replayed.stdout)
    assert data["priced_as"] is None and data["totals"]["cost_with"] is None and data["totals"]["tokens_with"] > 0
    assert "price unknown — enter it" in replayed.stderr
    text = cli("replay", str(path)).stdout
    assert UNKNOWN_NOTE in text and "nan" not in text.lower()
    assert json.loads(cli("count", str(path), "--json").stdout)["priced_as"] is None
    assert json.loads(cli("compare", str(path), "--json").stdout)[0]["cost"] is None


def test_evaluate_sums_with_an_unknown_part_are_unknown(tmp_path):
    """A corpus with one run nobody can price: its tokens count, the cost sums are null, and the
    medians are over the priced runs (said in the table)."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    messages = [{"role": "user", "content": "Read the notes."}, {"role": "assistant", "content": "Done: 3 notes."}]
    (corpus / "known.json").write_text(json.dumps({"model": "gpt-4o", "messages": messages}))
    (corpus / "unknown.json").write_text(json.dumps({"model": "aide-gpt-5", "messages": messages}))
    done = cli("evaluate", str(corpus), "--json", "--strategy", "none")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert {Path(run["source"]).name: run["priced_as"] for run in data["runs"]} == {"known.json": "gpt-4o",
                                                                                 "unknown.json": None}
    none = data["aggregate"]["strategies"][0]
    assert none["cost"] is None and none["runs_unpriced"] == 1 and none["median_cost"] > 0
    table = cli("evaluate", str(corpus), "--strategy", "none").stdout
    assert "1 run of a model whose price is unknown" in table and "nan" not in table.lower()


def test_break_even_invents_no_cache_miss_at_an_unknown_price():
    preset = next(preset for preset in list_presets() if preset.key == "coding-agent")
    conversation = preset.conversation
    price = PRICES.get("aide-gpt-5", conversation.format)
    run = replay(conversation, make("rules", rules=preset.rules, threshold=0), Meter("gpt-4o"), price)
    evens = run.break_even()
    assert evens and all(math.isnan(even.extra) and even.repaid_after is None for even in evens)


def test_price_by_date_picks_the_row_in_force_then():
    """OpenAI cut o3 from $10 to $2 per million input tokens on 2025-06-10: the catalogue dates both."""
    assert catalogue_price("o3", date(2025, 6, 1)).input == 10.0
    assert catalogue_price("o3", date(2025, 6, 10)).input == 2.0
    assert catalogue_price("o3", "2025-07-01T09:00:00Z").input == 2.0
    assert "prices in force on 2025-06-01" in catalogue_price("o3", date(2025, 6, 1)).source
    assert "today" in catalogue_price("o3").source  # no date: today's, stated


def test_a_logged_call_is_priced_on_the_logs_date():
    """The old Codex rollout is dated 2025-05-07: run as o3 it pays o3's price of that day ($10),
    not today's ($2)."""
    log = DATA / "codex-rollout-old.jsonl"
    assert formats.read_path(log).started.startswith("2025-05-07")
    data = json.loads(cli("replay", str(log), "--model", "o3", "--json", "--cache", "none").stdout)
    first = data["calls"][0]
    conversation = formats.read_path(log)
    meter = Meter("o3")
    then = replay(conversation, NonePolicy(), meter, PRICES.dated("2025-05-07").get("o3"), cache="none")
    today = replay(conversation, NonePolicy(), meter, PRICES.get("o3"), cache="none")
    assert first["cost_without"] == round(then.calls[0].cost_without, 8)
    assert then.calls[0].cost_without == pytest.approx(5 * today.calls[0].cost_without)


@pytest.mark.parametrize(("name", "day"), [
    ("claude-code-spotter-tool_heavy.jsonl", "2026-02-10"),  # each line's timestamp
    ("codex-rollout.jsonl", "2025-10-29"),
    ("aider-afi-core.aider.chat.history.md", "2025-07-15"),  # "# aider chat started at …"
    ("gemini-cli-yoavf-pomodoro-timer.json", "2025-10-21"),  # startTime
    ("openhands-v0-basic.json", "2025-01-27"),
    ("opencode-go-kashifkhan0771-utils.db", "2025-07-08"),  # time_created, milliseconds
])
def test_readers_date_the_run_as_the_agent_wrote_it(name, day):
    assert formats.read_path(DATA / name).started.startswith(day)


def test_a_request_with_no_date_is_priced_today():
    conversation = formats.read({"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]})
    assert conversation.started is None


def test_a_persons_own_prices_come_first_and_the_catalogue_prices_the_rest(tmp_path):
    own = {"as_of": "2026-12", "models": {"aide-gpt-5": {
        "provider": "openai", "context_window": 400_000, "input": 1.0, "cached_input": 0.1, "cache_write": 1.0,
        "output": 8.0, "min_cacheable": 1024, "source": "my contract"}}}
    table = load_prices(own)
    assert table.get("aide-gpt-5").input == 1.0 and table.get("aide-gpt-5").priced_as == "aide-gpt-5"
    assert table.get("gpt-4o").priced_as == "gpt-4o"  # the catalogue for the rest
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps(own))
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"model": "aide-gpt-5", "messages": [
        {"role": "user", "content": "Read the notes."}, {"role": "assistant", "content": "Done: 3 notes."}]}))
    data = json.loads(cli("replay", str(path), "--prices", str(prices), "--json").stdout)
    assert data["priced_as"] == "aide-gpt-5" and data["totals"]["cost_with"] > 0
    bad = cli("replay", str(path), "--prices", str(tmp_path / "run.json"))
    assert bad.returncode != 0 and "as_of" in bad.stderr and "Traceback" not in bad.stderr


def test_the_cache_minimums_are_the_playgrounds_own():
    assert [min_cacheable(model, "anthropic") for model in ("claude-sonnet-4-5", "claude-opus-4-5", "claude-3-haiku",
                                                          "claude-sonnet-4-6")] == [1024, 4096, 2048, 2048]
    assert min_cacheable("gpt-4o", "openai") == 1024


def test_a_tokenizer_we_do_not_ship_says_so():
    data = json.loads(cli("count", str(DATA / "gemini-cli-session.jsonl"), "--json").stdout)
    assert any("counted with o200k_base: gemini-3.1-pro-preview's own tokenizer is not shipped" in note
               for note in data["estimate_because"])
    assert data["priced_as"] == "gemini-3.1-pro-preview"
    assert data["estimate_because"][0].startswith("this log records what the provider billed for 10 calls")


def test_a_model_we_know_is_counted_as_before():
    """The vocabulary and accounting of a model the meter knows do not follow the price catalogue."""
    for model, accounting in (("gpt-4o", "gpt-4o / gpt-4 (Cookbook)"), ("claude-opus-4-5", "Anthropic Claude")):
        data = json.loads(cli("count", str(DATA / "codex-rollout.jsonl"), "--json", "--model", model).stdout)
        assert data["accounting"].startswith(accounting) and data["encoding"] == "o200k_base"


NO_NETWORK = """
import socket

def refuse(*args, **kwargs):
    raise AssertionError("network used")

socket.socket.connect = refuse
socket.socket.connect_ex = refuse
socket.create_connection = refuse
socket.getaddrinfo = refuse
from playground.run.prices import read_prices, catalogue_price
table = read_prices()
for name in ("claude-opus-4-5", "openrouter/qwen/qwen3-coder", "gemini-3-pro-preview", "no-such-model"):
    table.get(name)
catalogue_price("o3", "2025-06-01")
from genai_prices import data_snapshot, update_prices
assert not data_snapshot.get_snapshot().from_auto_update  # the data shipped in the package
assert update_prices._shared_updater.ref_count == 0  # and its auto-update never started
print("offline")
"""


def test_prices_make_no_network_request_on_import_or_lookup():
    done = subprocess.run([sys.executable, "-c", NO_NETWORK], check=False, capture_output=True, text=True, cwd=ROOT,
                          timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "offline", done.stderr


def test_the_page_shows_an_unknown_price_as_enter_it_and_takes_a_typed_one():
    """On the page a model nobody prices has no cost (never another model's): the Run tab's cost
    says to enter it and its prices box is empty; four typed prices give the cost."""
    from playground.ui import state

    from .test_app_follow import open_tab, start, upload

    renamed = (DATA / "codex-rollout.jsonl").read_bytes().replace(b'"gpt-5-codex"', b'"aide-gpt-5"')
    at = open_tab(upload(start(), "rollout.jsonl", renamed), "Run")
    assert at.session_state["model"] == "aide-gpt-5"  # its own name, not a stand-in's
    assert any("aide-gpt-5" in warning.value and UNKNOWN_NOTE in warning.value for warning in at.sidebar.warning)
    cost = next(metric.value for metric in at.metric if metric.label == "Cost")
    assert cost == UNKNOWN_NOTE
    assert any(UNKNOWN_NOTE in warning.value for warning in at.warning)
    assert "$nan" not in " ".join(caption.value for caption in at.caption).lower()
    for name, value in (("input", 1.0), ("cached_input", 0.1), ("cache_write", 1.0), ("output", 8.0)):
        at.number_input(key=state.price_key(name, "aide-gpt-5")).set_value(value)
    at.run()
    assert not at.exception, at.exception
    assert next(metric.value for metric in at.metric if metric.label == "Cost").startswith("$")
    at = open_tab(at, "Compare")
    sidebar = {warning.value for warning in at.sidebar.warning}  # (the sidebar says the catalogue lacks it)
    assert not any(UNKNOWN_NOTE in warning.value for warning in at.warning if warning.value not in sidebar)
    assert UNKNOWN_NOTE not in " ".join(caption.value for caption in at.caption)  # the typed prices reach it all
