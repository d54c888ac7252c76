"""The sidebar: which conversation, and the settings compaction runs with."""

from __future__ import annotations

import streamlit as st

from .. import models
from . import state


def _sync_threshold_from_slider() -> None:
    state.set_threshold(st.session_state[state.THRESHOLD_SLIDER])


def conversation_picker() -> None:
    presets = state.all_presets()
    if not presets:
        st.caption(state.get(state.SOURCE))
        return
    st.selectbox(
        "Preset", list(presets), key=state.PRESET, format_func=lambda key: presets[key].title,
        on_change=state.apply_preset,
        help="Example conversations written for this playground. Each brings its own model, threshold and rules.",
    )
    preset = presets[state.get(state.PRESET)]
    st.caption(preset.description)
    st.button("Reset to preset", on_click=state.apply_preset, width="stretch",
              help="Bring back this preset's conversation, rules and settings, dropping your changes.")
    st.caption(f"Showing: {state.get(state.SOURCE)}")


def settings(before: int) -> None:
    """Model, threshold (slider and exact number) and keep_recent."""
    options = list(models.CATALOG)
    current = state.get(state.MODEL)
    if current not in options:
        options.append(current)
    st.selectbox("Model", options, key=state.MODEL,
                 help="Sets the tokenizer and accounting used to count, the context window drawn on the meters, "
                      "and the prices used for costs.")
    top, step = state.threshold_bounds(before)
    st.slider("Threshold (tokens)", 0, top, step=step, key=state.THRESHOLD_SLIDER,
              on_change=_sync_threshold_from_slider,
              help="Compaction runs only when the request has at least this many prompt tokens. Below it, nothing "
                   "changes. Drag, or focus and use the arrow keys.")
    st.number_input("Exact threshold", min_value=0, step=step, key=state.THRESHOLD,
                    on_change=lambda: st.session_state.update({state.THRESHOLD_SLIDER: min(
                        state.get(state.THRESHOLD), top)}),
                    help="Type an exact number of tokens. The book uses 50,000.")
    st.number_input("keep_recent", min_value=0, max_value=1000, step=1, key=state.KEEP_RECENT,
                    help="Leave the newest N tool uses (a call and its result) alone, whatever the rules say.")
    st.checkbox("Compact error results too", key=state.COMPACT_ERRORS,
                help="Off by default: a reference in place of 'File not found' would disguise a failure as content.")
