"""Workspace files: what the page saves reads back as the same workspace, for every preset and
for generated requests in every format; a bad file is refused with its place named."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from playground import formats
from playground.errors import InputError
from playground.limits import MAX_PRICE
from playground.policies import POLICIES
from playground.run.prices import PRICE_FIELDS
from playground.run.promptcache import CACHE_MODELS
from playground.run.replay import MODES
from playground.tune import rulesets
from playground.workbench import presets, workspace
from playground.workbench.workspace import ReplaySettings, Workspace, WorkspaceSummarization

from .strategies import anthropic_requests, chat_requests, native_documents, responses_requests

PRESETS = presets.list_presets()


def round_trip(ws: Workspace) -> Workspace:
    """Through the bytes a person downloads and opens again."""
    return workspace.loads(json.dumps(workspace.to_json(ws)).encode())


@pytest.mark.parametrize("preset", PRESETS, ids=[p.key for p in PRESETS])
def test_every_preset_round_trips_with_its_settings(preset):
    ws = Workspace(preset.conversation, preset.rules, preset.threshold, preset.keep_recent, True, False, preset.model,
                   WorkspaceSummarization(enabled=False, limit=preset.threshold * 2, keep_steps=1, prompt="Be brief.",
                                 summarizer="openai", base_url="http://localhost:11434/v1", llm_model="llama3"),
                   label=f"{preset.title}, edited (10:32)")
    back = round_trip(ws)
    assert back == ws
    assert formats.write(back.conversation) == formats.write(preset.conversation)  # the request, key for key
    assert [item.origin for item in back.conversation.items] == [item.origin for item in preset.conversation.items]


settings = st.builds(
    WorkspaceSummarization, enabled=st.booleans(), limit=st.none() | st.integers(0, 10**7),
    keep_steps=st.integers(0, 50), item_budget=st.integers(20, 5000), prompt=st.text(),
    summarizer=st.sampled_from(workspace.SUMMARIZERS), base_url=st.text(), llm_model=st.text())


@given(request=chat_requests() | responses_requests() | anthropic_requests() | native_documents(),
       ruleset=st.sampled_from(sorted(rulesets.RULESETS)), threshold=st.integers(0, 10**7),
       keep_recent=st.integers(0, 1000), flags=st.tuples(st.booleans(), st.booleans()), model=st.text(min_size=1),
       summarization=settings, label=st.text())
def test_any_workspace_round_trips(request, ruleset, threshold, keep_recent, flags, model, summarization, label):
    conversation = formats.read(request)
    rules = rulesets.RULESETS[ruleset].make(conversation)
    ws = Workspace(conversation, rules, threshold, keep_recent, *flags, model, summarization, label)
    back = round_trip(ws)
    assert back == ws and back.notes == ()
    assert formats.write(back.conversation) == formats.write(conversation)


def test_a_workspace_holds_no_key_field():
    data = workspace.to_json(Workspace(PRESETS[0].conversation, PRESETS[0].rules, 5000))
    keys = set(data) | set(data["summarization"])
    assert not [key for key in keys if "key" in key.lower() or "secret" in key.lower()]


def _saved(**changes) -> dict:
    data = workspace.to_json(Workspace(PRESETS[0].conversation, PRESETS[0].rules, 5000))
    data.update(changes)
    return data


@pytest.mark.parametrize(("change", "message"), [
    ({"kind": "rules"}, "kind: not a workspace file"),
    ({"version": 2}, "version: unsupported version (this playground reads version 1): 2"),
    ({"threshold": -1}, "threshold: expected a whole number from 0 to 1,000,000,000: -1"),
    ({"threshold": True}, "threshold: expected int: True"),
    ({"compact_errors": "yes"}, "compact_errors: expected bool: 'yes'"),
    ({"conversation": {"format": "chat", "request": {"messages": [{"role": "tool", "tool_call_id": "x",
                                                                   "content": "y"}]}}},
     "conversation.request, messages[0]: tool result's call id matches no earlier tool call: 'x'"),
    ({"conversation": {"format": "klingon", "request": []}}, "conversation.format: unknown format"),
    ({"rules": {"tool_results": [{"tool": "x", "template": "{a[0]}"}]}},
     "rules, tool_results[0].template: unsafe template field"),
    ({"rules": []}, "rules: a rules file is an object"),
    ({"summarization": {"summarizer": "magic"}}, "summarization.summarizer: expected one of offline"),
    ({"summarization": {"limit": "5k"}}, "summarization.limit: expected int or null: '5k'"),
])
def test_a_bad_workspace_names_the_place(change, message):
    with pytest.raises(InputError) as error:
        workspace.from_json(_saved(**change))
    assert str(error.value).startswith(message)


def test_bad_json_names_the_file_and_line():
    with pytest.raises(InputError, match=r"^my\.workspace\.json, line 1, column 2: invalid JSON"):
        workspace.loads(b"{oops", "my.workspace.json")


def test_unknown_keys_are_ignored_with_a_note():
    data = _saved(calibration={"a": 1})
    data["summarization"]["temperature"] = 0.2
    ws = workspace.from_json(data)
    assert ws.threshold == 5000
    assert ws.notes == ("ignored the key 'calibration', which this version of the playground does not know",
                        "ignored the key 'summarization.temperature', which this version of the playground does "
                        "not know")


# The Run and Compare views' settings and the typed prices

caches = st.none() | st.sampled_from(CACHE_MODELS)
replays = st.builds(
    ReplaySettings, policy=st.sampled_from(list(POLICIES)), mode=st.sampled_from(MODES), cache=caches,
    window=st.integers(0, 1000), trigger=st.integers(0, 10**7), keep=st.integers(0, 1000),
    clear_at_least=st.integers(0, 10**7),
    prices=st.dictionaries(st.text(min_size=1), st.dictionaries(
        st.sampled_from(PRICE_FIELDS), st.floats(0, MAX_PRICE) | st.integers(0, int(MAX_PRICE)).map(float)),
        max_size=3),
    compare_mode=st.sampled_from(MODES), compare_cache=caches)


@given(chosen=replays)
def test_replay_settings_and_typed_prices_round_trip(chosen):
    ws = Workspace(PRESETS[0].conversation, PRESETS[0].rules, 5000, replay=chosen)
    back = round_trip(ws)
    assert back.replay == chosen and back.notes == ()


def test_a_file_without_replay_settings_opens_with_the_run_views_defaults():
    data = _saved()
    del data["replay"]
    assert workspace.from_json(data).replay == ReplaySettings()


@pytest.mark.parametrize(("change", "message"), [
    ({"strategy": "yolo"}, "replay.strategy: expected one of none, rules"),
    ({"mode": "sometimes"}, "replay.mode: expected one of stored, per-call: 'sometimes'"),
    ({"cache": "redis"}, "replay.cache: expected one of openai, anthropic, none: 'redis'"),
    ({"compare": {"cache": 3}}, "replay.compare.cache: expected one of openai"),
    ({"window": -1}, "replay.window: expected a whole number from 0 to 1,000: -1"),
    ({"prices": {"gpt-4o": {"input": -2}}},
     "replay.prices.gpt-4o.input: expected a price in US$ per million tokens from 0 to 10,000: -2"),
    ({"prices": {"gpt-4o": {"input": "2"}}}, "replay.prices.gpt-4o.input: expected a price"),
    ({"prices": {"gpt-4o": {"input": True}}}, "replay.prices.gpt-4o.input: expected a price"),
    ({"prices": {"gpt-4o": {"inputs": 2}}}, "replay.prices.gpt-4o.inputs: unknown price (one of input, cached_input"),
    ({"prices": {"gpt-4o": 2}}, "replay.prices.gpt-4o: expected an object"),
])
def test_bad_replay_settings_name_their_place(change, message):
    data = _saved()
    data["replay"].update(change)
    with pytest.raises(InputError) as error:
        workspace.from_json(data)
    assert str(error.value).startswith(message)


def test_unknown_replay_keys_are_ignored_with_a_note():
    data = _saved()
    data["replay"]["speed"] = 2
    assert workspace.from_json(data).notes == (
        "ignored the key 'replay.speed', which this version of the playground does not know",)
