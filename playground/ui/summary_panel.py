"""Summarization on screen: its settings beside the thresholds, and what it did.

The offline summarizer is free and runs on every rerun. A paid endpoint is called only when the
person presses a button; its summary is kept by input, so reruns reuse it. The settings' values
outlive reruns in which their widgets are hidden through ``summary_settings``.
"""

from __future__ import annotations

import streamlit as st

from ..engine import Optimized
from ..limits import MAX_COUNT, MAX_TOKENS
from ..llm import LLMError
from ..present import dropped_line, literal
from ..summarize import DEFAULT_PROMPT, LOSS, STATUS_WORDS, dropped_facts
from ..summarize.online import OpenAISummarizer
from ..words import plural
from . import llm_endpoint, state, summary_settings

MODES = {"offline": "Offline (no LLM)", "openai": "OpenAI-compatible endpoint"}


def _limit_at_least_threshold() -> None:
    """The limit never sits below the threshold: it follows the threshold up, and says so."""
    threshold = st.session_state[state.THRESHOLD]
    if st.session_state[state.LIMIT_FOLLOWS]:
        st.session_state[state.SUMMARY_LIMIT] = threshold
    elif st.session_state[state.SUMMARY_LIMIT] < threshold:
        st.session_state[state.SUMMARY_RAISED] = (st.session_state[state.SUMMARY_LIMIT], threshold)
        st.session_state[state.SUMMARY_LIMIT] = threshold
    st.session_state[state.SUMMARY_KEPT][state.SUMMARY_LIMIT] = st.session_state[state.SUMMARY_LIMIT]


def settings() -> None:
    """The sidebar controls."""
    st.toggle("Summarize when still over", key=state.SUMMARIZE_ON,
              help="The last resort: if the compacted request is still at or over the limit, replace the oldest "
                   "history with one summary message. Lossy, unlike compaction.")
    st.session_state[state.SUMMARY_DRAWN] = summary_settings.drawn()
    if not st.session_state[state.SUMMARIZE_ON]:
        return
    st.checkbox("Limit = threshold", key=state.LIMIT_FOLLOWS,
                help="Summarize at the compaction threshold (the book's choice).")
    _limit_at_least_threshold()
    threshold = st.session_state[state.THRESHOLD]
    st.number_input("Summarization limit (tokens)", min_value=threshold, max_value=MAX_TOKENS, step=1000,
                    key=state.SUMMARY_LIMIT,                    disabled=st.session_state[state.LIMIT_FOLLOWS],
                    help="Summarize when the compacted request has at least this many tokens. Never below the "
                         "compaction threshold: summarization is the last resort after compaction.")
    raised = st.session_state.get(state.SUMMARY_RAISED)
    if raised and not st.session_state[state.LIMIT_FOLLOWS] and st.session_state[state.SUMMARY_LIMIT] == raised[1]:
        st.caption(f"The limit followed the threshold up from {raised[0]:,} to {raised[1]:,}: it cannot be below "
                   "the threshold.")
    st.number_input("Steps kept", min_value=0, max_value=MAX_COUNT, step=1, key=state.KEEP_STEPS,
                    help="The newest assistant turns, each with the tool results that answer it, stay verbatim. "
                         "The system messages and the first user message always stay. 0 keeps no turn, but what "
                         "follows the last assistant turn (results the model has not read yet) is never summarized.")
    st.radio("Summarizer", list(MODES), key=state.SUMMARIZER, format_func=MODES.get,
             help="Offline: an extractive digest, no model, free. An endpoint: any server that speaks OpenAI Chat "
                  "Completions — OpenAI, Azure, Ollama, vLLM, LM Studio. It is called only when you press its "
                  "button.")
    if st.session_state[state.SUMMARIZER] == "openai":
        llm_endpoint.endpoint_fields()
        if st.button("Test connection", width="stretch", help="Sends a one-word request to the endpoint."):
            with st.spinner(literal(f"Asking {llm_endpoint.endpoint().where}…")):
                try:
                    st.success(OpenAISummarizer(llm_endpoint.endpoint()).check(), icon=":material/check_circle:")
                except LLMError as exc:
                    st.error(literal(str(exc)), icon=":material/error:")
    with st.expander("Summary prompt and budget"):
        st.text_area("Prompt", key=state.SUMMARY_PROMPT, height=260,
                     help="What the LLM is asked for. The offline summarizer does not use it.")
        st.button("Restore the default prompt", on_click=_restore_prompt,
                  help="Put back the prompt this playground ships with.")
        st.number_input("Tokens read per item", min_value=20, max_value=MAX_TOKENS, step=100, key=state.ITEM_BUDGET,
                        help="Each original item is cut to this many tokens before the summarizer reads it.")
        st.number_input("Transcript budget (tokens)", min_value=0, max_value=MAX_TOKENS, step=1000,
                        key=state.TRANSCRIPT_BUDGET,
                        help="The most the summarizer reads in all, so a large span cannot exceed its own context "
                             "window. Over it, the per-item budget is lowered until it fits (not below 50 tokens), "
                             "then items in the middle of the span are left out, with a marker. 0: no total budget.")
        st.caption(f"The summarizer reads at most {st.session_state[state.TRANSCRIPT_BUDGET]:,} tokens of history "
                   "in all (plus the prompt)." if st.session_state[state.TRANSCRIPT_BUDGET] else
                   "No total budget: a large span may exceed the summarizer's context window.")


def _restore_prompt() -> None:
    st.session_state[state.SUMMARY_PROMPT] = DEFAULT_PROMPT


def _summarize_with_llm(optimized: Optimized) -> None:
    plan = optimized.summarization.plan  # type: ignore[union-attr]
    summarizer = OpenAISummarizer(llm_endpoint.endpoint())
    items = plural(plan.end - plan.start, "item")
    with st.status(f"Summarizing {items} with {summarizer.endpoint.model}…") as progress:
        try:
            text = summarizer.summarize(plan)
        except LLMError as exc:
            progress.update(label="The summarizer failed: nothing was dropped", state="error")
            state.set_message("llm", str(exc))
            return
        progress.update(label="Summary made", state="complete")
    made = (summarizer.label, plan.key)
    st.session_state[state.LLM_SUMMARIES] = {**st.session_state[state.LLM_SUMMARIES], made: text}
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
            st.caption(literal(report.detail[:1].upper() + report.detail[1:] + "."))
        if report.start is not None:
            st.caption(f"Span: items {report.start}–{report.end - 1} ({plural(report.end - report.start, 'item')}). "
                       f"Summarizer: {report.summarizer}. Request {report.tokens_before:,} → "
                       f"{report.tokens_after:,} tokens" + (f"; the summary is {report.summary_tokens:,}."
                                                            if report.status == "summarized" else "."))
        if report.status == "summarized":
            st.warning(LOSS, icon=":material/warning:")
            if prefer and report.summarizer == prefer and done.plan is not None:  # the endpoint's, kept by input
                made = st.session_state[state.LLM_SUMMARIES].get((prefer, done.plan.key))
                if made is not None:
                    st.caption(dropped_line(dropped_facts(done.plan.items, made)))
        if report.error:
            st.error(literal(f"{report.error}. Nothing was dropped: the request is as compaction left it."))
        if report.still_over:
            st.warning(report.still_over_words[:1].upper() + report.still_over_words[1:] + ".",
                       icon=":material/warning:")
        st.caption(stages_line(optimized))
        if prefer and done.plan is not None and report.summarizer != prefer:
            st.info("Showing the offline summary. The endpoint is called only when you ask:", icon=":material/info:")
            if st.button(literal(f"Summarize with {st.session_state[state.LLM_MODEL]}"), type="primary",
                         help="One request to the endpoint; the result is kept for this exact input."):
                _summarize_with_llm(optimized)
        if state.message("llm"):
            st.error(literal(state.message("llm")), icon=":material/error:")


def stages_line(optimized: Optimized) -> str:
    """Before → after compaction → after summarization, each saving apart: compaction's can be
    undone by calling a tool, a summary's cannot."""
    before, compacted, final = optimized.stages
    return (f"{before.label}: {before.tokens:,} → {compacted.label.lower()}: {compacted.tokens:,} "
            f"(−{compacted.saved:,}, reversible) → {final.label.lower()}: {final.tokens:,} "
            f"(−{final.saved:,}, lossy).")
