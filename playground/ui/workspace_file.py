"""A session's tuning as a workspace: what the page's state holds, read into one ``Workspace`` value and
written as the file *Save workspace* gives (never the API key). Shared by the workspace panel, which saves
and opens it, and the agent panel, whose snippet reads the same file."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..run import PRICE_FIELDS, read_prices
from ..workbench import workspace
from ..workbench.workspace import ReplaySettings, Workspace, WorkspaceSummarization
from . import run_setup, state, summary_settings

# What snapshot() reads: copied on every rerun (cheap), turned into a workspace only on download.
KEYS = (state.CONVERSATION, state.SOURCE, state.CALL_BASE, state.RESULT_BASE, state.CALL_EDITOR, state.RESULT_EDITOR,
        state.PATTERN_BASE, state.PATTERN_EDITOR, state.PATTERNS_GOOD, state.VALUE_LIMIT,
        state.THRESHOLD, state.KEEP_RECENT, state.COMPACT_ERRORS, state.DETECT_ERRORS, state.MODEL, state.SUMMARIZE_ON,
        state.LIMIT_FOLLOWS, state.SUMMARY_LIMIT, state.KEEP_STEPS, state.ITEM_BUDGET, state.SUMMARY_PROMPT,
        state.SUMMARIZER, state.BASE_URL, state.LLM_MODEL, state.TRANSCRIPT_BUDGET, state.SUMMARY_KEPT, state.ENGINE,
        *run_setup.DEFAULTS, state.REPLAY_CACHE, state.COMPARE_MODE, state.COMPARE_CACHE,
        state.ORIGINS)  # and every typed price (``state.is_price_key``)


def _typed_prices(values: Mapping[str, Any]) -> dict[str, dict[str, float]]:
    """The prices typed in the Run view that differ from the catalogue's, per model and field."""
    typed: dict[str, dict[str, float]] = {}
    for key, value in values.items():
        rest = str(key).removeprefix(state.PRICE_PREFIX)
        name = next((name for name in PRICE_FIELDS if rest.startswith(f"{name}_")), None)
        if rest == key or name is None:
            continue
        model = rest.removeprefix(f"{name}_")
        if value is None:  # an empty box: the model's price is unknown and nothing was typed
            continue
        if float(value) != getattr(read_prices().get(model), name):
            typed.setdefault(model, {})[name] = float(value)
    return typed


def _chosen_cache(values: Mapping[str, Any], key: str) -> str | None:
    """A prompt-cache model the person chose, or None: it follows the model's provider."""
    return values.get(key) if values.get(state.ORIGINS, {}).get(key) else None


def _replay_settings(values: Mapping[str, Any]) -> ReplaySettings:
    """The Run and Compare views' settings; those never drawn keep their defaults."""
    start = ReplaySettings()
    return ReplaySettings(
        policy=values.get(state.REPLAY_POLICY, start.policy), mode=values.get(state.REPLAY_MODE, start.mode),
        cache=_chosen_cache(values, state.REPLAY_CACHE), window=int(values.get(state.REPLAY_WINDOW, start.window)),
        trigger=int(values.get(state.REPLAY_TRIGGER, start.trigger)),
        keep=int(values.get(state.REPLAY_KEEP, start.keep)),
        clear_at_least=int(values.get(state.REPLAY_CLEAR_AT_LEAST, start.clear_at_least)),
        prices=_typed_prices(values), compare_mode=values.get(state.COMPARE_MODE, start.compare_mode),
        compare_cache=_chosen_cache(values, state.COMPARE_CACHE))


def snapshot(values: Mapping[str, Any]) -> Workspace:
    """The workspace a session's state holds (``st.session_state``, or an AppTest's): the
    conversation showing, the rules the tables make, the settings. Widgets not drawn this run
    fall back to their defaults."""
    conversation = values[state.CONVERSATION]
    rules, _ = state.rules_from(values, conversation)
    # A hidden widget's value lives on in the summary panel's kept copy (which also holds a typed API
    # key: only the named settings are read from it, never the key).
    kept = {**summary_settings.DEFAULTS, **values.get(state.SUMMARY_KEPT, {})}

    def setting(key: str) -> Any:
        return values.get(key, kept[key])

    follows = setting(state.LIMIT_FOLLOWS)
    summarization = WorkspaceSummarization(
        enabled=bool(setting(state.SUMMARIZE_ON)),
        limit=None if follows else int(values.get(state.SUMMARY_LIMIT, values[state.THRESHOLD])),
        keep_steps=int(setting(state.KEEP_STEPS)), item_budget=int(setting(state.ITEM_BUDGET)),
        transcript_budget=int(setting(state.TRANSCRIPT_BUDGET)),
        prompt=setting(state.SUMMARY_PROMPT), summarizer=setting(state.SUMMARIZER),
        base_url=setting(state.BASE_URL), llm_model=setting(state.LLM_MODEL))
    return Workspace(conversation=conversation, rules=rules, threshold=int(values[state.THRESHOLD]),
                     keep_recent=int(values[state.KEEP_RECENT]), compact_errors=bool(values[state.COMPACT_ERRORS]),
                     detect_errors=bool(values.get(state.DETECT_ERRORS, True)), model=values[state.MODEL],
                     summarization=summarization, label=values[state.SOURCE],
                     calibrations=dict(values[state.ENGINE].calibrations) if state.ENGINE in values else {},
                     replay=_replay_settings(values))


def saved_values(session: Mapping[str, Any]) -> dict[str, Any]:
    """What of a session's state the workspace is made from: ``KEYS`` and every typed price."""
    return {key: session[key] for key in list(session) if key in KEYS or state.is_price_key(key)}




def saved(values: Mapping[str, Any]) -> str:
    """The workspace file's text for ``values`` (``saved_values`` of a session), as the download writes it."""
    return json.dumps(workspace.to_json(snapshot(values)), ensure_ascii=False, indent=1)
