"""Save workspace / Open workspace: the whole tuning session as one JSON file (never the API key)."""

from __future__ import annotations

import streamlit as st

from ..errors import InputError
from ..present import literal
from ..workbench import defaults, workspace
from ..workbench.workspace import ReplaySettings, Workspace
from . import state, summary_settings, workspace_file


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


def panel() -> None:
    """A download button (the file is built only when pressed) and an uploader."""
    values = workspace_file.saved_values(st.session_state)
    st.download_button("Save workspace",
                       lambda: workspace_file.saved(values),
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
