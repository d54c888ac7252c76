"""Save workspace / Open workspace: the whole tuning session as one JSON file (never the API key)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import streamlit as st

from ..errors import InputError
from ..present import literal
from ..run import PRICE_FIELDS, read_prices
from ..workbench import defaults, workspace
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


def _apply_replay(chosen: ReplaySettings) -> None:
    """The file's Run and Compare settings and typed prices, in place of the session's (a cache
    left open starts on the model's own provider, as in a new session)."""
    for key in [key for key in st.session_state if state.is_price_key(key)]:
        del st.session_state[key]
    settings = {state.REPLAY_POLICY: chosen.policy, state.REPLAY_MODE: chosen.mode,
                state.REPLAY_WINDOW: chosen.window, state.REPLAY_TRIGGER: chosen.trigger,
                state.REPLAY_KEEP: chosen.keep,
                state.REPLAY_CLEAR_AT_LEAST: chosen.clear_at_least, state.REPLAY_CACHE: chosen.cache,
                state.COMPARE_MODE: chosen.compare_mode, state.COMPARE_CACHE: chosen.compare_cache}
    settings |= {state.price_key(name, model): value
                 for model, typed in chosen.prices.items() for name, value in typed.items()}
    for key, value in settings.items():
        if value is None:
            st.session_state.pop(key, None)
        else:
            st.session_state[key] = value
    state.set_origins([key for key in state.CACHE_CHOICES if settings[key] is not None], "the workspace")


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


def _apply(ws: Workspace, name: str) -> None:
    """Everything the file holds, in place of the session's; the conversation joins the picker."""
    state.keep_own(ws.conversation, f"{ws.label or name} (opened {state.now()})", fresh=False)
    st.session_state[state.MODEL] = ws.model
    state.set_message("model", None)
    state.set_origins(defaults.SETTINGS, f"the workspace {name}")
    state.set_threshold(ws.threshold)
    st.session_state[state.KEEP_RECENT] = ws.keep_recent
    st.session_state[state.COMPACT_ERRORS] = ws.compact_errors
    st.session_state[state.DETECT_ERRORS] = ws.detect_errors
    state.set_rules(ws.rules)
    calibrations = state.engine().calibrations  # the engine remakes a meter whose calibration changed
    calibrations.clear()
    calibrations.update(ws.calibrations)
    st.session_state[state.CALIBRATION_APPLY] = False  # a pasted usage's toggle must not override the file's
    chosen = ws.summarization
    summary_settings.set_values({
        state.SUMMARIZE_ON: chosen.enabled, state.LIMIT_FOLLOWS: chosen.limit is None,
        state.SUMMARY_LIMIT: ws.threshold if chosen.limit is None else chosen.limit,
        state.KEEP_STEPS: chosen.keep_steps, state.ITEM_BUDGET: chosen.item_budget,
        state.TRANSCRIPT_BUDGET: chosen.transcript_budget,
        state.SUMMARY_PROMPT: chosen.prompt, state.SUMMARIZER: chosen.summarizer,
        state.BASE_URL: chosen.base_url, state.LLM_MODEL: chosen.llm_model,
    })
    _apply_replay(ws.replay)


def _open() -> None:
    upload = st.session_state.get(state.WORKSPACE_UPLOAD)
    if upload is None:
        return
    try:
        ws = workspace.loads(upload.getvalue(), upload.name)
    except InputError as exc:
        state.set_message("workspace", f"{exc} — nothing was changed.")
        return
    _apply(ws, upload.name)
    state.set_message("workspace", None)
    state.set_message("workspace_notes", "\n".join(ws.notes) or None)


def saved_values(session: Mapping[str, Any]) -> dict[str, Any]:
    """What of a session's state the workspace is made from: ``KEYS`` and every typed price."""
    return {key: session[key] for key in list(session) if key in KEYS or state.is_price_key(key)}


def panel() -> None:
    """A download button (the file is built only when pressed) and an uploader."""
    values = saved_values(st.session_state)
    st.download_button("Save workspace",
                       lambda: json.dumps(workspace.to_json(snapshot(values)), ensure_ascii=False, indent=1),
                       "playground.workspace.json", "application/json", width="stretch", on_click="ignore",
                       help="One JSON file with the conversation showing, both rule tables, the thresholds, the model, "
                            "the summarization settings, the Run and Compare settings and the prices you typed, to "
                            "open later or share. Never the API key.")
    st.file_uploader("Open workspace", type=["json"], key=state.WORKSPACE_UPLOAD, on_change=_open,
                     max_upload_size=state.input_limit()[0],
                     help="A file saved with Save workspace. It replaces the rules and settings; its conversation "
                          "is added to the picker above. A bad file changes nothing.")
    if state.message("workspace"):
        st.error(literal(state.message("workspace")), icon=":material/error:")
    if state.message("workspace_notes"):
        st.info(literal(state.message("workspace_notes")), icon=":material/info:")
