"""The log's own bills, a part of the Run view (not a tab of its own): what the provider billed for
each call beside our count (a line in the prompt-tokens chart), what that says about the meter,
and one click to calibrate from them. Every number comes from ``playground.run.billed``; this
module lays it out."""

from __future__ import annotations

import streamlit as st

from ..conversation import Conversation
from ..meter import Calibration
from ..run import LogFit, Price, log_fit
from . import state


def fit_of(conversation: Conversation, price: Price) -> LogFit | None:
    """The log's fit, kept for the same conversation object and price: it replays the log once, so
    it is fitted once per log, not on every rerun."""
    if not conversation.billed:
        return None
    last = st.session_state.get(state.BILLED_FIT)  # (the conversation, its price, the fit)
    if last is None or last[0] is not conversation or last[1] != price:
        st.session_state[state.BILLED_FIT] = (conversation, price, log_fit(conversation, price))
    return st.session_state[state.BILLED_FIT][2]


def draw(conversation: Conversation, model: str, found: LogFit) -> None:
    """The fit in words and the button that applies it for ``model`` (the sidebar's calibration
    panel shows it in effect and switches it off)."""
    st.caption(f"Green line: what the provider billed, as the log records it. {found.describe()}")
    calibration = found.calibration(model, conversation.source)
    if state.engine().calibrations.get(model) == calibration:
        st.caption(f"In effect: {calibration.note()} (*Settings → Calibrate from real usage* switches it off). "
                   "Thresholds now compare with what the agent really sent, its own prompt included: one below "
                   f"{found.offset:,} fires at every call.")
        return
    st.button(f"Calibrate the meter from this log (+{found.offset:,} tokens, ×{found.factor:.3f})",
              key=state.BILLED_CALIBRATE, on_click=_apply, args=(model, calibration),
              help="Every count for this model on the page — meters, thresholds, replay, cost — then adds the "
                   f"{found.offset:,} tokens per request this agent sends that its log does not hold, and scales "
                   "the rest by the fitted factor. Only logs of the same agent get the added tokens.")


def _apply(model: str, calibration: Calibration) -> None:
    state.engine().calibrations[model] = calibration
