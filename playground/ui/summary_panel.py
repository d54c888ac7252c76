"""Summarization on screen: its settings beside the thresholds, and what it did.

The offline summarizer is free and runs on every rerun. A paid endpoint is called only when the
person presses a button; its summary is kept by input, so reruns reuse it.

Streamlit forgets the value of a widget that is not drawn in a run, and these widgets are hidden
while summarization is off (or the endpoint fields while the offline summarizer is chosen). So
their values are also kept in ``KEPT``, a plain session-state dict: a widget drawn in the last
run gives its value to ``KEPT``, one that was not gets its value back from ``KEPT``. Toggling off
and on loses no edited prompt or setting. Code outside this panel sets these values with
``set_values`` (a workspace being opened, say). ``KEPT`` holds the typed API key too; like the
key itself it is never exported.
"""

from __future__ import annotations

import os

import streamlit as st

from ..engine import Optimized
from ..errors import InputError
from ..limits import MAX_COUNT, MAX_TOKENS
from ..llm import keys
from ..llm.endpoint import Endpoint
from ..llm.failure import LLMError
from ..present import render
from ..summarize import online
from ..summarize.history import (
    DEFAULT_ITEM_BUDGET,
    DEFAULT_KEEP_STEPS,
    DEFAULT_PROMPT,
    DEFAULT_TRANSCRIPT_BUDGET,
    LOSS,
    STATUS_WORDS,
    SummarySettings,
)
from ..summarize.online import OpenAISummarizer
from ..words import plural
from . import state

ON, FOLLOWS, LIMIT, KEEP_STEPS = "summarize_on", "limit_follows_threshold", "summarize_over", "keep_steps"
MODE, BASE_URL, LLM_MODEL, API_KEY = "summarizer", "base_url", "llm_model", "api_key"
PROMPT, BUDGET, TRANSCRIPT_BUDGET, CACHE = "summary_prompt", "item_budget", "transcript_budget", "llm_summaries"
KEPT, DRAWN, RAISED = "summary_settings_kept", "summary_widgets_drawn", "summary_limit_raised"
MODES = {"offline": "Offline (no LLM)", "openai": "OpenAI-compatible endpoint"}
DEFAULTS = {ON: True, FOLLOWS: True, KEEP_STEPS: DEFAULT_KEEP_STEPS, MODE: "offline", BASE_URL: "",
            LLM_MODEL: "gpt-4o-mini", API_KEY: "", PROMPT: DEFAULT_PROMPT, BUDGET: DEFAULT_ITEM_BUDGET,
            TRANSCRIPT_BUDGET: DEFAULT_TRANSCRIPT_BUDGET}
WIDGETS = (*DEFAULTS, LIMIT)
ENDPOINT_WIDGETS = (BASE_URL, LLM_MODEL, API_KEY)


def init() -> None:
    """Each widget's value: a widget drawn last run gives it to ``KEPT``; any other (hidden, so
    forgotten by Streamlit, or never drawn yet) gets it back from ``KEPT``."""
    kept = st.session_state.setdefault(KEPT, {**DEFAULTS, LIMIT: st.session_state[state.THRESHOLD]})
    drawn = st.session_state.get(DRAWN, ())
    for key in WIDGETS:
        if key in drawn:
            kept[key] = st.session_state.get(key, kept[key])
        else:
            st.session_state[key] = kept[key]
    st.session_state.setdefault(CACHE, {})


def set_values(values: dict[str, object]) -> None:
    """Set summarization settings from outside the panel (widget keys to values); call it from a
    callback, before the widgets are drawn."""
    st.session_state[KEPT].update(values)
    st.session_state.update(values)


def _drawn() -> tuple[str, ...]:
    """The widgets ``settings`` draws now, so the next run knows which values to trust."""
    if not st.session_state[ON]:
        return (ON,)
    return tuple(key for key in WIDGETS if st.session_state[MODE] == "openai" or key not in ENDPOINT_WIDGETS)


def _secrets() -> dict[str, str]:
    """The two settings an operator may keep in st.secrets, as plain strings."""
    try:
        return {name: str(st.secrets[name]) for name in (keys.KEY_NAME, keys.HOSTS_NAME) if name in st.secrets}
    except Exception:  # no secrets file at all: Streamlit raises rather than returning nothing
        return {}


def key_choice(provider: str = "openai") -> keys.KeyChoice:
    """The key for the Base URL shown: a typed one, or the operator's only for allowed hosts."""
    return keys.resolve_key(st.session_state[BASE_URL], st.session_state.get(API_KEY), os.environ, _secrets(),
                            provider)


def endpoint() -> Endpoint:
    return Endpoint(model=st.session_state[LLM_MODEL].strip(), base_url=st.session_state[BASE_URL].strip() or None,
                    api_key=key_choice().key)


def _limit_at_least_threshold() -> None:
    """The limit never sits below the threshold: it follows the threshold up, and says so."""
    threshold = st.session_state[state.THRESHOLD]
    if st.session_state[FOLLOWS]:
        st.session_state[LIMIT] = threshold
    elif st.session_state[LIMIT] < threshold:
        st.session_state[RAISED] = (st.session_state[LIMIT], threshold)
        st.session_state[LIMIT] = threshold
    st.session_state[KEPT][LIMIT] = st.session_state[LIMIT]


def settings() -> None:
    """The sidebar controls."""
    st.toggle("Summarize when still over", key=ON,
              help="The last resort: if the compacted request is still at or over the limit, replace the oldest "
                   "history with one summary message. Lossy, unlike compaction.")
    st.session_state[DRAWN] = _drawn()
    if not st.session_state[ON]:
        return
    st.checkbox("Limit = threshold", key=FOLLOWS, help="Summarize at the compaction threshold (the book's choice).")
    _limit_at_least_threshold()
    threshold = st.session_state[state.THRESHOLD]
    st.number_input("Summarization limit (tokens)", min_value=threshold, max_value=MAX_TOKENS, step=1000, key=LIMIT,
                    disabled=st.session_state[FOLLOWS],
                    help="Summarize when the compacted request has at least this many tokens. Never below the "
                         "compaction threshold: summarization is the last resort after compaction.")
    raised = st.session_state.get(RAISED)
    if raised and not st.session_state[FOLLOWS] and st.session_state[LIMIT] == raised[1]:
        st.caption(f"The limit followed the threshold up from {raised[0]:,} to {raised[1]:,}: it cannot be below "
                   "the threshold.")
    st.number_input("Steps kept", min_value=0, max_value=MAX_COUNT, step=1, key=KEEP_STEPS,
                    help="The newest assistant turns, each with the tool results that answer it, stay verbatim. "
                         "The system messages and the first user message always stay. 0 keeps no turn, but what "
                         "follows the last assistant turn (results the model has not read yet) is never summarized.")
    st.radio("Summarizer", list(MODES), key=MODE, format_func=MODES.get,
             help="Offline: an extractive digest, no model, free. An endpoint: any server that speaks OpenAI Chat "
                  "Completions — OpenAI, Azure, Ollama, vLLM, LM Studio. It is called only when you press its "
                  "button.")
    if st.session_state[MODE] == "openai":
        endpoint_fields()
        if st.button("Test connection", width="stretch", help="Sends a one-word request to the endpoint."):
            with st.spinner(render.literal(f"Asking {endpoint().where}…")):
                try:
                    st.success(OpenAISummarizer(endpoint()).check(), icon=":material/check_circle:")
                except LLMError as exc:
                    st.error(render.literal(str(exc)), icon=":material/error:")
    with st.expander("Summary prompt and budget"):
        st.text_area("Prompt", key=PROMPT, height=260, help="What the LLM is asked for. The offline summarizer "
                                                             "does not use it.")
        st.button("Restore the default prompt", on_click=lambda: st.session_state.update({PROMPT: DEFAULT_PROMPT}),
                  help="Put back the prompt this playground ships with.")
        st.number_input("Tokens read per item", min_value=20, max_value=MAX_TOKENS, step=100, key=BUDGET,
                        help="Each original item is cut to this many tokens before the summarizer reads it.")
        st.number_input("Transcript budget (tokens)", min_value=0, max_value=MAX_TOKENS, step=1000,
                        key=TRANSCRIPT_BUDGET,
                        help="The most the summarizer reads in all, so a large span cannot exceed its own context "
                             "window. Over it, the per-item budget is lowered until it fits (not below 50 tokens), "
                             "then items in the middle of the span are left out, with a marker. 0: no total budget.")
        st.caption(f"The summarizer reads at most {st.session_state[TRANSCRIPT_BUDGET]:,} tokens of history "
                   "in all (plus the prompt)." if st.session_state[TRANSCRIPT_BUDGET] else
                   "No total budget: a large span may exceed the summarizer's context window.")


def endpoint_fields(provider: str = "openai") -> None:
    """Base URL, model and key: drawn here for summarization, or by the live probe when this panel
    does not draw them (the same widgets, so both use one endpoint)."""
    own = keys.PROVIDER_KEYS[provider][1]
    st.text_input("Base URL", key=BASE_URL, placeholder=f"https://{own}" + ("/v1" if provider == "openai" else ""),
                  help=f"Leave empty for {own}. Ollama: http://localhost:11434/v1; LM Studio: "
                       "http://localhost:1234/v1; vLLM: http://localhost:8000/v1.")
    st.text_input("Model", key=LLM_MODEL, help="The model name the endpoint serves.")
    st.text_input("API key", key=API_KEY, type="password",
                  help=f"Kept in this browser session only; never logged, exported or shown. A key the operator "
                       f"configured is used only for {own} and hosts the operator allows; any other "
                       "Base URL gets a key only if you type one here.")
    st.caption(f"Key: {key_choice(provider).label}.")


def endpoint_drawn() -> bool:
    """Whether the sidebar drew the endpoint fields in this run (summarization on, with an endpoint)."""
    return BASE_URL in st.session_state.get(DRAWN, ())


def draw_endpoint_elsewhere(provider: str) -> None:
    """Draw the endpoint fields outside the sidebar and record them as drawn, so the next run keeps
    what was typed there (see ``init``)."""
    endpoint_fields(provider)
    st.session_state[DRAWN] = (*st.session_state.get(DRAWN, ()), *ENDPOINT_WIDGETS)


def config() -> tuple[SummarySettings | None, str | None]:
    """The summarization settings, and the label of the LLM whose kept summaries to prefer."""
    if not st.session_state[ON]:
        return None, None
    try:
        chosen = SummarySettings(limit=int(st.session_state[LIMIT]), keep_steps=int(st.session_state[KEEP_STEPS]),
                                 item_budget=int(st.session_state[BUDGET]), prompt=st.session_state[PROMPT],
                                 transcript_budget=int(st.session_state[TRANSCRIPT_BUDGET]))
    except InputError:  # the widgets bound these
        return None, None
    return chosen, online.label(endpoint()) if st.session_state[MODE] == "openai" else None


def _summarize_with_llm(optimized: Optimized) -> None:
    plan = optimized.summarization.plan  # type: ignore[union-attr]
    summarizer = OpenAISummarizer(endpoint())
    items = plural(plan.end - plan.start, 'item')
    with st.status(f"Summarizing {items} with {summarizer.endpoint.model}…") as progress:
        try:
            text = summarizer.summarize(plan)
        except LLMError as exc:
            progress.update(label="The summarizer failed: nothing was dropped", state="error")
            state.set_message("llm", str(exc))
            return
        progress.update(label="Summary made", state="complete")
    st.session_state[CACHE] = {**st.session_state[CACHE], (summarizer.label, plan.key): text}
    state.set_message("llm", None)
    st.rerun()


def panel(optimized: Optimized, prefer: str | None) -> None:
    """What summarization did (or would do), under the meters."""
    done = optimized.summarization
    if done is None:
        return
    report = done.report
    if report.status == "not_needed":
        st.caption(f"Summarization: {STATUS_WORDS['not_needed']} ({report.limit:,}).")
        return
    with st.container(border=True):
        st.markdown(f"**Summarization** — {STATUS_WORDS[report.status]}")
        if report.status in ("nothing_to_summarize", "not_smaller"):
            st.caption(render.literal(report.detail[:1].upper() + report.detail[1:] + "."))
        if report.start is not None:
            st.caption(f"Span: items {report.start}–{report.end - 1} ({plural(report.end - report.start, 'item')}). "
                       f"Summarizer: {report.summarizer}. Request {report.tokens_before:,} → "
                       f"{report.tokens_after:,} tokens" + (f"; the summary is {report.summary_tokens:,}."
                                                            if report.status == "summarized" else "."))
        if report.status == "summarized":
            st.warning(LOSS, icon=":material/warning:")
        if report.error:
            st.error(render.literal(f"{report.error}. Nothing was dropped: the request is as compaction left it."))
        if report.still_over:
            st.warning(report.still_over_words[:1].upper() + report.still_over_words[1:] + ".",
                       icon=":material/warning:")
        st.caption(stages_line(optimized))
        if prefer and done.plan is not None and report.summarizer != prefer:
            st.info("Showing the offline summary. The endpoint is called only when you ask:", icon=":material/info:")
            if st.button(render.literal(f"Summarize with {st.session_state[LLM_MODEL]}"), type="primary",
                         help="One request to the endpoint; the result is kept for this exact input."):
                _summarize_with_llm(optimized)
        if state.message("llm"):
            st.error(render.literal(state.message("llm")), icon=":material/error:")


def stages_line(optimized: Optimized) -> str:
    """Before → after compaction → after summarization, each saving apart: compaction's can be
    undone by calling a tool, a summary's cannot."""
    before, compacted, final = optimized.stages
    return (f"{before.label}: {before.tokens:,} → {compacted.label.lower()}: {compacted.tokens:,} "
            f"(−{compacted.saved:,}, reversible) → {final.label.lower()}: {final.tokens:,} "
            f"(−{final.saved:,}, lossy).")
