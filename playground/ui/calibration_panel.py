"""Calibrate the meter from real usage: paste what the provider billed, see it beside our count,
and apply the correction for this session (switchable off). Call ``draw`` from the sidebar.

All numbers come from ``playground.calibration``; this file only lays them out. The correction
lives in the session's ``Engine.calibrations``, so every meter on the page uses it, and every
count it touches carries the note "calibrated ×f …" shown with the other estimate reasons.
"""

from __future__ import annotations

import streamlit as st

from ..conversation import Conversation
from ..errors import InputError
from ..meter import Pasted, read_pasted
from ..words import plural
from . import state

PASTE_HELP = ("Paste the `usage` object the provider returned for this exact request (or the whole "
              "response). Chat Completions: `prompt_tokens`; Responses: `input_tokens`; Anthropic: "
              "`input_tokens` + `cache_creation_input_tokens` + `cache_read_input_tokens`. Or paste a JSON "
              "list of `{\"request\": …, \"usage\": …}` pairs to calibrate from several requests.")
APPLY_HELP = ("Multiply every count for this model by the factor for the rest of this session (and keep it "
              "in a saved workspace). Switch off to go back to the uncorrected meter.")


def _pasted(text: str, conversation: Conversation, model: str) -> Pasted:
    """``read_pasted``, kept for the same text, request and model so a rerun does not recount."""
    key = (text, id(conversation), model)
    last = st.session_state.get(state.CALIBRATION_LAST)
    if last is None or last[0] != key or last[1] is not conversation:
        st.session_state[state.CALIBRATION_LAST] = (key, conversation, read_pasted(text, conversation, model))
    return st.session_state[state.CALIBRATION_LAST][2]


def draw(conversation: Conversation, model: str) -> None:
    """The panel: paste box, our count beside the billed one, the apply toggle, what is in effect."""
    engine = state.engine()
    with st.expander("Calibrate from real usage", expanded=bool(engine.calibrations)):
        if conversation.billed:
            st.caption(f"This log records what the provider billed for {plural(len(conversation.billed), 'call')}: "
                       "the *Run* tab draws the bills beside our count and calibrates from them with one click.")
        text = st.text_area("Usage the provider returned", key=state.CALIBRATION_PASTE, height=120, help=PASTE_HELP,
                            placeholder='{"input_tokens": 1234, "output_tokens": 56}')
        if text.strip():
            try:
                pasted = _pasted(text, conversation, model)
            except InputError as error:
                st.error(str(error))
            else:
                _show(pasted, model)
        _in_effect()


def _show(pasted: Pasted, model: str) -> None:
    engine = state.engine()
    for comparison in pasted.comparisons:
        share = comparison.difference / comparison.billed * 100 if comparison.billed else 0.0
        st.markdown(f"`{comparison.model or 'no model'}`: our count **{comparison.counted:,}**, billed "
                    f"**{comparison.billed:,}**, difference **{comparison.difference:+,}** ({share:+.1f}%)")
    found = pasted.calibrations.get(model)
    if found is None:
        st.caption(f"None of this usage is for the model in use ({model}); pick that model to apply it.")
        return
    label = f"Apply ×{found.factor:.3f} for {model} this session"
    if st.toggle(label, key=state.CALIBRATION_APPLY, help=APPLY_HELP):
        if engine.calibrations.get(model) != found:  # an equal one keeps the meter and its cache
            engine.calibrations[model] = found
    elif engine.calibrations.get(model) == found:
        del engine.calibrations[model]


def _in_effect() -> None:
    engine = state.engine()
    for model, calibration in sorted(engine.calibrations.items()):
        st.info(f"In effect for `{model}`: {calibration.note()}.")
    if engine.calibrations:
        st.button("Switch calibration off", on_click=_switch_off,
                  help="Back to the uncorrected meters for every model (the pasted usage stays).")


def _switch_off() -> None:
    state.engine().calibrations.clear()
    st.session_state[state.CALIBRATION_APPLY] = False
