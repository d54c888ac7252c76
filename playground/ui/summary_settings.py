"""Summarization's settings kept across reruns, and read as ``SummarySettings``.

Streamlit forgets the value of a widget that is not drawn in a run, and summarization's widgets
are hidden while it is off (or the endpoint fields while the offline summarizer is chosen). So
their values are also kept in ``state.SUMMARY_KEPT``, a plain session-state dict: a widget drawn
in the last run gives its value to it, one that was not gets its value back from it. Toggling off
and on loses no edited prompt or setting. Code outside the sidebar sets these values with
``set_values`` (a workspace being opened, say). The kept dict holds the typed API key too; like
the key itself it is never exported.
"""

from __future__ import annotations

import streamlit as st

from ..errors import InputError
from ..summarize import (
    DEFAULT_ITEM_BUDGET,
    DEFAULT_KEEP_STEPS,
    DEFAULT_PROMPT,
    DEFAULT_TRANSCRIPT_BUDGET,
    SummarySettings,
    online,
)
from . import llm_endpoint, state

DEFAULTS = {state.SUMMARIZE_ON: True, state.LIMIT_FOLLOWS: True, state.KEEP_STEPS: DEFAULT_KEEP_STEPS,
            state.SUMMARIZER: "offline", state.BASE_URL: "", state.LLM_MODEL: "gpt-4o-mini", state.API_KEY: "",
            state.SUMMARY_PROMPT: DEFAULT_PROMPT, state.ITEM_BUDGET: DEFAULT_ITEM_BUDGET,
            state.TRANSCRIPT_BUDGET: DEFAULT_TRANSCRIPT_BUDGET}
WIDGETS = (*DEFAULTS, state.SUMMARY_LIMIT)


def init() -> None:
    """Each widget's value: a widget drawn last run gives it to the kept dict; any other (hidden, so
    forgotten by Streamlit, or never drawn yet) gets it back from the kept dict."""
    first = {**DEFAULTS, state.SUMMARY_LIMIT: st.session_state[state.THRESHOLD]}
    kept = st.session_state.setdefault(state.SUMMARY_KEPT, first)
    drawn = st.session_state.get(state.SUMMARY_DRAWN, ())
    for key in WIDGETS:
        if key in drawn:
            kept[key] = st.session_state.get(key, kept[key])
        else:
            st.session_state[key] = kept[key]
    st.session_state.setdefault(state.LLM_SUMMARIES, {})


def set_values(values: dict[str, object]) -> None:
    """Set summarization settings from outside the panel (widget keys to values); call it from a
    callback, before the widgets are drawn."""
    st.session_state[state.SUMMARY_KEPT].update(values)
    st.session_state.update(values)


def drawn() -> tuple[str, ...]:
    """The widgets the sidebar draws now, so the next run knows which values to trust."""
    if not st.session_state[state.SUMMARIZE_ON]:
        return (state.SUMMARIZE_ON,)
    endpoint = st.session_state[state.SUMMARIZER] == "openai"
    return tuple(key for key in WIDGETS if endpoint or key not in llm_endpoint.ENDPOINT_WIDGETS)


def config() -> tuple[SummarySettings | None, str | None]:
    """The summarization settings, and the label of the LLM whose kept summaries to prefer."""
    if not st.session_state[state.SUMMARIZE_ON]:
        return None, None
    try:
        get = st.session_state.__getitem__
        chosen = SummarySettings(limit=int(get(state.SUMMARY_LIMIT)), keep_steps=int(get(state.KEEP_STEPS)),
                                 item_budget=int(get(state.ITEM_BUDGET)), prompt=get(state.SUMMARY_PROMPT),
                                 transcript_budget=int(get(state.TRANSCRIPT_BUDGET)))
    except InputError:  # the widgets bound these
        return None, None
    return chosen, online.label(llm_endpoint.endpoint()) if st.session_state[state.SUMMARIZER] == "openai" else None
