"""The sidebar: which conversation, and the settings compaction runs with."""

from __future__ import annotations

import streamlit as st

from ..limits import MAX_COUNT, MAX_TOKENS
from ..present import render, view
from ..run import read_prices
from ..workbench import defaults
from . import state


def _sync_threshold_from_slider() -> None:
    state.set_threshold(st.session_state[state.THRESHOLD_SLIDER])
    state.changed("threshold")


def conversation_picker() -> None:
    """Which conversation shows: the person's own (newest first), then the presets."""
    own = state.own_conversations()
    labels = {key: own[key].label for key in reversed(own)} | {key: p.title for key, p in state.all_presets().items()}
    if not labels:
        st.caption(render.literal(state.get(state.SOURCE)))
        return
    st.selectbox(
        "Conversation", list(labels), key=state.PRESET, format_func=labels.get, on_change=state.pick,
        help=f"Your own conversations (pasted, uploaded, opened or built here; the newest {state.MAX_OWN} are kept "
             "for this session) and the example presets. A preset brings its own model, threshold and rules; your "
             "own conversation brings its model and keeps the current rules and settings.",
    )
    key = state.get(state.PRESET)
    if state.is_own(key):
        conversation = state.get(state.CONVERSATION)
        st.caption(f"Your own conversation — {view.format_title(conversation)}, {len(conversation.items):,} "
                   "items. Choosing a preset keeps it in this list.")
    # a preset's description (up to 60 words) is in *Settings*, beside *Reset to preset*: the first screen
    # is counted in words, and the meters and tables below say what the preset does
    if state.message("model"):
        st.warning(render.literal(state.message("model")), icon=":material/warning:")


def preset_reset() -> None:
    """The preset's whole description and *Reset to preset* (nothing for the person's own conversation)."""
    key = state.get(state.PRESET)
    if state.is_own(key) or key not in state.all_presets():
        return
    st.caption(render.literal(state.all_presets()[key].description))
    st.button("Reset to preset", on_click=state.apply_preset, width="stretch",
              help="Bring back this preset's conversation, rules and settings, dropping your changes.")


def threshold(before: int) -> None:
    """The threshold slider, on the first screen: the one setting the page is about."""
    top, step = state.threshold_bounds(before)
    # Both widgets are written from the value in use on every run: a slider whose range changed (a new
    # conversation) is a new widget to Streamlit and would otherwise fall back to 0.
    value = state.get(state.THRESHOLD)
    st.session_state[state.THRESHOLD] = value
    st.session_state[state.THRESHOLD_SLIDER] = min(value, top)
    st.slider("Threshold (tokens)", 0, top, step=step, key=state.THRESHOLD_SLIDER,
              on_change=_sync_threshold_from_slider,
              help="Compaction runs only when the request has at least this many prompt tokens. Below it, nothing "
                   "changes. Drag, or focus and use the arrow keys; *Settings* has the exact number.")


def settings(before: int) -> None:
    """Model, the exact threshold and keep_recent, the error switches, and where each came from."""
    options = read_prices().models()
    current = state.get(state.MODEL)
    if current not in options:
        options.append(current)
    st.selectbox("Model", options, key=state.MODEL, on_change=state.changed, args=("model",),
                 help="Sets the tokenizer and accounting used to count, the context window drawn on the meters, "
                      "and the prices used for costs (pydantic's genai-prices catalogue). A conversation brings its "
                      "own model; one whose price the catalogue does not list is counted all the same, and its cost "
                      "is unknown until you type its prices in the Run tab.")
    _, step = state.threshold_bounds(before)
    st.number_input("Exact threshold", min_value=0, max_value=MAX_TOKENS, step=step, key=state.THRESHOLD,
                    on_change=state.changed, args=("threshold",),
                    help="Type an exact number of tokens. The book uses 50,000.")
    st.number_input("keep_recent", min_value=0, max_value=MAX_COUNT, step=1, key=state.KEEP_RECENT,
                    on_change=state.changed, args=("keep_recent",),
                    help="Leave the newest N tool uses the model has read (a call and its result, with an assistant "
                         "turn after the result) alone, whatever the rules say. Tool uses it has not read yet stay "
                         "anyway, so each step keeps one more.")
    st.checkbox("Compact error results too", key=state.COMPACT_ERRORS, on_change=state.changed, args=("errors",),
                help="Off by default: a reference in place of 'File not found' would disguise a failure as content.")
    st.checkbox("Recognise errors by their text", key=state.DETECT_ERRORS, on_change=state.changed, args=("errors",),
                help="On by default. Formats without an error flag (Chat Completions, agent logs) mark no failed "
                     "result, so a result that plainly is one — a traceback, a non-zero exit code, 'No such file or "
                     "directory', 'command not found', 'Error:' at the start — is recognised by the error patterns "
                     "(Rules tab) and kept. The report says which pattern matched.")
    origins = st.session_state.get(state.ORIGINS, {})
    if origins:
        st.caption(f"Where these settings came from — {render.literal(defaults.provenance(origins))}.")
