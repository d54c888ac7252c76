"""Controls more than one tab draws the same way: the replay mode, and the prompt-cache select
that follows the model's provider. One definition each, so Run and Compare cannot drift apart."""

from __future__ import annotations

import streamlit as st

from ..run import MODES
from . import run_setup, state

MODE_HELP = ("stored: edits are written into the history the agent keeps (the book's optimizer), so each edit "
             "breaks the cache once. per-call: edits are re-applied to a copy for every request and the history "
             "stays whole (LangChain middleware), so the cache breaks again whenever an item crosses into the "
             "edited region.")
CACHE_HELP = ("openai: automatic prefix caching, prompts of 1,024+ tokens, hits in 128-token steps. anthropic: one "
              "breakpoint on the last message, writes at 1.25× input, reads at 0.1×. none: no prompt cache. Only the "
              "model's own provider's cache (or none) is offered: another provider's rules would make a bill no one "
              "sends.")


def mode_choice(column, key: str) -> None:
    """How a replay applies the policy's edits (``MODE_HELP``), drawn in ``column``."""
    column.radio("Mode", MODES, key=key, horizontal=True, help=MODE_HELP)


def cache_choice(model: str, key: str) -> None:
    """A cache-model select on the model's own provider's cache (or none) until the person picks one."""
    options = run_setup.follow_cache(key, model)
    st.selectbox("Prompt cache", options, key=key, help=CACHE_HELP, on_change=state.changed, args=(key,))
    if state.origin(key) is None:
        st.caption(f"The model's own provider's cache ({st.session_state[key]}), until you choose one.")
