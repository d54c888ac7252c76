"""Controls more than one tab draws the same way: the replay's policy, the replay mode, the
prompt-cache select that follows the model's provider, and a long replay's progress. One definition
each, so Run, What it keeps and Compare cannot drift apart."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import streamlit as st

from ..policies import POLICIES
from ..run import MODES, Progress
from . import run_setup, state

MODE_HELP = ("stored: edits are written into the history the agent keeps (the book's optimizer), so each edit "
             "breaks the cache once. per-call: edits are re-applied to a copy for every request and the history "
             "stays whole (LangChain middleware), so the cache breaks again whenever an item crosses into the "
             "edited region.")
CACHE_HELP = ("openai: automatic prefix caching, prompts of 1,024+ tokens, hits in 128-token steps. anthropic: one "
              "breakpoint on the last message, writes at 1.25× input, reads at 0.1×. none: no prompt cache. Only the "
              "model's own provider's cache (or none) is offered: another provider's rules would make a bill no one "
              "sends.")


POLICY_HELP = ("rules: the two tables behind the threshold (the book); masking: old tool outputs become a placeholder; "
               "clear-tool-uses: Anthropic's context editing; summarize: older history becomes a summary; hybrid: "
               "masking, then a summary when still over; none: the baseline. The rest are the agents' and providers' "
               "own compaction, each with its source's parameters.")


def counts(*names: str) -> dict[str, Any]:
    """A table's ``column_config`` for these columns of token counts: 1,487,239,744, not 1487239744."""
    return {name: st.column_config.NumberColumn(format="localized") for name in names}


def dollars(*names: str) -> dict[str, Any]:
    """A table's ``column_config`` for these columns of US$ to a hundredth of a cent, as the metrics show
    them: 148.9760 beside 902.9204, not 148.976."""
    return {name: st.column_config.NumberColumn(format="%.4f") for name in names}


def policy_choice(column, key: str) -> None:
    """The policy a replay applies (one of ``POLICIES``), drawn in ``column``: the Run view and What it
    keeps draw the same select on the same key, so the one chosen in either is the other's."""
    state.start(key, run_setup.DEFAULTS[key])
    column.selectbox("Policy", list(POLICIES), key=key, help=POLICY_HELP)


def mode_choice(column, key: str) -> None:
    """How a replay applies the policy's edits (``MODE_HELP``), drawn in ``column``."""
    column.radio("Mode", MODES, key=key, horizontal=True, help=MODE_HELP)


def cache_choice(model: str, key: str) -> None:
    """A cache-model select on the model's own provider's cache (or none) until the person picks one."""
    options = run_setup.follow_cache(key, model)
    st.selectbox("Prompt cache", options, key=key, help=CACHE_HELP, on_change=state.changed, args=(key,))
    if state.origin(key) is None:
        st.caption(f"The model's own provider's cache ({st.session_state[key]}), until you choose one.")


@contextmanager
def replaying(label: str, calls: int) -> Iterator[Progress | None]:
    """What the page shows while a replay or compare of ``calls`` calls runs. Past
    ``run_setup.LIGHT_RUN`` calls (seconds of work): a status box whose bar says how many calls are
    done of how many, from the ``Progress`` this yields for ``replay`` or ``compare``; each redraw
    of the bar also lets a change of settings stop the run at once instead of after it. A short run
    keeps the spinner, which shows only after half a second (a small preset's rerun shows nothing)."""
    if calls <= run_setup.LIGHT_RUN:
        with st.spinner(label):
            yield None
        return
    with st.status(label, expanded=True) as box:
        bar = st.progress(0.0, text=f"0 of {calls:,} calls")
        shown = 0

        def told(done: int, total: int) -> None:
            nonlocal shown
            percent = done * 100 // max(total, 1)
            if percent != shown:  # once a percent: a message to the browser at every call would slow a long run
                shown = percent
                bar.progress(percent / 100, text=f"{done:,} of {total:,} calls")

        yield told
        box.update(label=label.removesuffix("…"), state="complete", expanded=False)
