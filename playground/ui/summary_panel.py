"""Summarization on screen: its settings beside the thresholds, and what it did.

The offline summarizer is free and runs on every rerun. A paid endpoint is called only when the
person presses a button; its summary is kept by input, so reruns reuse it.
"""

from __future__ import annotations

import streamlit as st

from ..errors import InputError
from ..llm import Endpoint, OpenAISummarizer, key_from_environment
from ..pipeline import Optimized
from ..summarize import (
    DEFAULT_ITEM_BUDGET,
    DEFAULT_KEEP_STEPS,
    DEFAULT_PROMPT,
    LOSS,
    STATUS_WORDS,
    SummarizerError,
    SummarySettings,
)
from . import state

ON, FOLLOWS, LIMIT, KEEP_STEPS = "summarize_on", "limit_follows_threshold", "summarize_over", "keep_steps"
MODE, BASE_URL, LLM_MODEL, API_KEY = "summarizer", "base_url", "llm_model", "api_key"
PROMPT, BUDGET, CACHE = "summary_prompt", "item_budget", "llm_summaries"
MODES = {"offline": "Offline (no LLM)", "openai": "OpenAI-compatible endpoint"}
DEFAULTS = {ON: True, FOLLOWS: True, KEEP_STEPS: DEFAULT_KEEP_STEPS, MODE: "offline", BASE_URL: "",
            LLM_MODEL: "gpt-4o-mini", API_KEY: "", PROMPT: DEFAULT_PROMPT, BUDGET: DEFAULT_ITEM_BUDGET, CACHE: {}}


def init() -> None:
    for key, value in DEFAULTS.items():
        st.session_state.setdefault(key, value)
    st.session_state.setdefault(LIMIT, st.session_state[state.THRESHOLD])


def _secret_key() -> str | None:
    try:
        return str(st.secrets["OPENAI_API_KEY"]) if "OPENAI_API_KEY" in st.secrets else None
    except Exception:  # no secrets file at all: Streamlit raises rather than returning nothing
        return None


def _api_key() -> tuple[str | None, str]:
    """The key to use and where it came from (never the key itself)."""
    typed = st.session_state.get(API_KEY) or None
    if typed:
        return typed, "the key typed here"
    if secret := _secret_key():
        return secret, "st.secrets (OPENAI_API_KEY)"
    if environment := key_from_environment():
        return environment, "the environment (OPENAI_API_KEY)"
    return None, "none (fine for local servers such as Ollama)"


def endpoint() -> Endpoint:
    key, _ = _api_key()
    return Endpoint(model=st.session_state[LLM_MODEL].strip(), base_url=st.session_state[BASE_URL].strip() or None,
                    api_key=key)


def settings() -> None:
    """The sidebar controls."""
    st.toggle("Summarize when still over", key=ON,
              help="The last resort: if the compacted request is still at or over the limit, replace the oldest "
                   "history with one summary message. Lossy, unlike compaction.")
    if not st.session_state[ON]:
        return
    st.checkbox("Limit = threshold", key=FOLLOWS, help="Summarize at the compaction threshold (the book's choice).")
    if st.session_state[FOLLOWS]:
        st.session_state[LIMIT] = st.session_state[state.THRESHOLD]
    st.number_input("Summarization limit (tokens)", min_value=0, step=1000, key=LIMIT,
                    disabled=st.session_state[FOLLOWS],
                    help="Summarize when the compacted request has at least this many tokens.")
    st.number_input("Steps kept", min_value=0, max_value=1000, step=1, key=KEEP_STEPS,
                    help="The newest assistant turns, each with the tool results that answer it, stay verbatim. "
                         "The system messages and the first user message always stay.")
    st.radio("Summarizer", list(MODES), key=MODE, format_func=MODES.get,
             help="Offline: an extractive digest, no model, free. An endpoint: any server that speaks OpenAI Chat "
                  "Completions — OpenAI, Azure, Ollama, vLLM, LM Studio. It is called only when you press its "
                  "button.")
    if st.session_state[MODE] == "openai":
        st.text_input("Base URL", key=BASE_URL, placeholder="https://api.openai.com/v1",
                      help="Leave empty for OpenAI. Ollama: http://localhost:11434/v1; LM Studio: "
                           "http://localhost:1234/v1; vLLM: http://localhost:8000/v1.")
        st.text_input("Model", key=LLM_MODEL, help="The model name the endpoint serves.")
        st.text_input("API key", key=API_KEY, type="password",
                      help="Kept in this browser session only; never logged, exported or shown. Leave empty to use "
                           "OPENAI_API_KEY from st.secrets or the environment.")
        st.caption(f"Key: {_api_key()[1]}.")
        if st.button("Test connection", width="stretch", help="Sends a one-word request to the endpoint."):
            with st.spinner(f"Asking {endpoint().where}…"):
                try:
                    st.success(OpenAISummarizer(endpoint()).check(), icon=":material/check_circle:")
                except SummarizerError as exc:
                    st.error(str(exc), icon=":material/error:")
    with st.expander("Summary prompt and budget"):
        st.text_area("Prompt", key=PROMPT, height=260, help="What the LLM is asked for. The offline summarizer "
                                                             "does not use it.")
        st.button("Restore the default prompt", on_click=lambda: st.session_state.update({PROMPT: DEFAULT_PROMPT}),
                  help="Put back the prompt this playground ships with.")
        st.number_input("Tokens read per item", min_value=20, step=100, key=BUDGET,
                        help="Each original item is cut to this many tokens before the summarizer reads it.")


def config() -> tuple[SummarySettings | None, str | None]:
    """The summarization settings, and the label of the LLM whose kept summaries to prefer."""
    if not st.session_state[ON]:
        return None, None
    try:
        chosen = SummarySettings(limit=int(st.session_state[LIMIT]), keep_steps=int(st.session_state[KEEP_STEPS]),
                                 item_budget=int(st.session_state[BUDGET]), prompt=st.session_state[PROMPT])
    except InputError:  # the widgets bound these
        return None, None
    return chosen, endpoint().label if st.session_state[MODE] == "openai" else None


def _summarize_with_llm(optimized: Optimized) -> None:
    plan = optimized.summarization.plan  # type: ignore[union-attr]
    summarizer = OpenAISummarizer(endpoint())
    with st.status(f"Summarizing {plan.end - plan.start} items with {summarizer.endpoint.model}…") as progress:
        try:
            text = summarizer.summarize(plan)
        except SummarizerError as exc:
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
        if report.status == "nothing_to_summarize":
            st.caption(report.detail)
        if report.start is not None:
            st.caption(f"Span: items {report.start}–{report.end - 1} ({report.end - report.start} items). "
                       f"Summarizer: {report.summarizer}. Request {report.tokens_before:,} → "
                       f"{report.tokens_after:,} tokens" + (f"; the summary is {report.summary_tokens:,}."
                                                            if report.status == "summarized" else "."))
        if report.status == "summarized":
            st.warning(LOSS, icon=":material/warning:")
        if report.error:
            st.error(f"{report.error}. Nothing was dropped: the request is as compaction left it.")
        if prefer and done.plan is not None and report.summarizer != prefer:
            st.info("Showing the offline summary. The endpoint is called only when you ask:", icon=":material/info:")
            if st.button(f"Summarize with {st.session_state[LLM_MODEL]}", type="primary",
                         help="One request to the endpoint; the result is kept for this exact input."):
                _summarize_with_llm(optimized)
        if state.message("llm"):
            st.error(state.message("llm"), icon=":material/error:")
