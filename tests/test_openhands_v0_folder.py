"""An OpenHands V0 session folder, as its file store lays it out (All-Hands-AI/OpenHands @ 156d0686,
``openhands/storage/locations.py``: ``sessions/<id>/metadata.json`` and ``sessions/<id>/events/<id>.json``, one
event a file; ``storage/data_models/conversation_metadata.py`` ``ConversationMetadata``), made here from the real
trajectory ``tests/data/openhands-v0-basic_gui_mode.json`` (the same events, one a file), read with its model and
its bills at their calls; newer V0 keeps, on each action, only ``llm_metrics.accumulated_token_usage``
(``agent_controller.py``, ``_prepare_metrics_for_frontend``), whose rise is each call's bill."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from playground import formats
from playground.conversation import turn_starts
from playground.errors import InputError

from .conftest import ROOT

TRAJECTORY = ROOT / "tests" / "data" / "openhands-v0-basic_gui_mode.json"
METADATA = {"conversation_id": "4f0e4b1c", "selected_repository": None, "user_id": None, "title": "Hello world",
            "trigger": "gui", "llm_model": "anthropic/claude-3-5-sonnet-20241022", "accumulated_cost": 0.07,
            "prompt_tokens": 17_297, "completion_tokens": 612, "total_tokens": 17_909,
            "created_at": "2025-01-05T10:00:00+00:00"}


def _session(root: Path, events: list[dict], metadata: dict | None = METADATA) -> Path:
    folder = root / "sessions" / METADATA["conversation_id"]
    (folder / "events").mkdir(parents=True)
    for event in events:
        (folder / "events" / f"{event['id']}.json").write_text(json.dumps(event))
    if metadata is not None:
        (folder / "metadata.json").write_text(json.dumps(metadata))
    return folder


def test_a_v0_session_folder_reads_as_its_trajectory_with_the_bills_at_their_calls(tmp_path):
    events = json.loads(TRAJECTORY.read_text())
    alone = formats.read_path(TRAJECTORY)
    conversation = formats.read_path(_session(tmp_path, events))
    assert (conversation.source, conversation.items) == ("openhands", alone.items)
    assert conversation.model == "claude-3-5-sonnet-20241022"
    usage = {e["tool_call_metadata"]["model_response"]["id"]: e["tool_call_metadata"]["model_response"]["usage"]
             for e in events if "model_response" in (e.get("tool_call_metadata") or {})}
    assert [tokens for _, tokens in conversation.billed] == [u["prompt_tokens"] for u in usage.values()]
    assert {position for position, _ in conversation.billed} <= set(turn_starts(conversation.items))
    assert any("metadata.json records the run's totals (prompt_tokens 17,297" in n for n in conversation.notes)


def test_its_events_in_id_order_not_name_order(tmp_path):
    events = json.loads(TRAJECTORY.read_text())
    conversation = formats.read_path(_session(tmp_path, list(reversed(events))))
    assert conversation.items == formats.read_path(TRAJECTORY).items, "10.json after 9.json"


def test_newer_v0_bills_are_the_rise_of_each_actions_accumulated_usage_and_the_model_is_metadatas(tmp_path):
    events = copy.deepcopy(json.loads(TRAJECTORY.read_text()))
    so_far, seen = 0, set()
    for event in events:
        meta = event.get("tool_call_metadata") or {}
        response = meta.get("model_response")
        if response is None:
            continue
        if event.get("action") and response["id"] not in seen:
            seen.add(response["id"])
            so_far += response["usage"]["prompt_tokens"]
        event["llm_metrics"] = {"accumulated_cost": 0.01, "accumulated_token_usage": {
            "model": "", "prompt_tokens": so_far, "completion_tokens": 100, "cache_read_tokens": 0,
            "cache_write_tokens": 0, "context_window": 200_000, "per_turn_token": 0, "response_id": ""}}
        response.pop("usage")
        response.pop("model")
    conversation = formats.read_path(_session(tmp_path, events))
    assert conversation.model == "anthropic/claude-3-5-sonnet-20241022"
    assert [tokens for _, tokens in conversation.billed] == [3439, 3601, 4769, 5488]


@pytest.mark.parametrize(("name", "data", "says"), [
    ("metadata.json", METADATA, "OpenHands V0 session's metadata.json"),
    ("base_state.json", {"id": "c1", "agent": {"llm": {"model": "gpt-4o-mini"}}, "stats": {}},
     "OpenHands V1 conversation's base_state.json")])
def test_a_part_of_an_openhands_folder_alone_names_the_agent_and_what_to_give(tmp_path, name, data, says):
    path = tmp_path / name
    path.write_text(json.dumps(data))
    with pytest.raises(InputError) as refused:
        formats.read_path(path)
    assert says in str(refused.value) and "folder" in str(refused.value) and len(str(refused.value)) < 300
