"""*Ask the model*, under What it keeps: can the model still say the facts the policy kept or lost?

Off until switched on (writing the questions replays the run up to the calls asked at). The
questions are written offline and listed with the estimate before anything is sent; they go out,
each after the full request and after the policy's, only when the person presses the button, to the
endpoint, provider, key and budget the Run tab's probe uses (``llm_endpoint``). Progress is shown
question by question; the answers are kept for the exact inputs they were asked with, so a rerun
shows them again without sending and any change hides them. Every row and line comes from
``quiz``; this module only lays them out.
"""

from __future__ import annotations

import streamlit as st

from .. import probe, quiz
from ..compaction import Settings
from ..conversation import Conversation
from ..errors import InputError
from ..limits import MAX_COUNT
from ..present import literal
from ..rules import Rules
from ..run import call_starts, read_prices
from ..summarize import SummarySettings
from ..words import plural
from . import llm_endpoint, run_setup, state


def _settings() -> tuple[str, int | None, int, bool]:
    """The questions' own controls and those shared with the probe: provider, budget, how many, judge."""
    state.start(state.ASK_QUESTIONS, quiz.DEFAULT_QUESTIONS)
    state.start(state.ASK_JUDGE, False)
    provider = llm_endpoint.provider_choice()
    one, two = st.columns(2)
    one.number_input("Questions at most", min_value=1, max_value=MAX_COUNT, step=1, key=state.ASK_QUESTIONS,
                     help="One per type of fact the ledger holds, at the calls where the policy fired, spread evenly "
                          "over the run, the last always among them.")
    budget = llm_endpoint.budget(two)
    st.toggle("Judge the answers no exact token can grade", key=state.ASK_JUDGE,
              help="A requirement without a path or a number, and the next step: one more request to the same model "
                   "per answer, which replies YES or NO. Its requests are in the estimate.")
    return provider, budget, int(st.session_state[state.ASK_QUESTIONS]), bool(st.session_state[state.ASK_JUDGE])


def _ask(planned: quiz.Quiz, send: probe.Send, where: str) -> quiz.Asking:
    """Send the questions with their progress shown: question i of n."""
    total = len(planned.asked)
    with st.status(f"Asking {plural(total, 'question')} at {where}…", expanded=True) as status:
        bar = st.progress(0.0, text=f"Question 0 of {total} answered")
        answered: list[quiz.Answer] = []

        def report(answer: quiz.Answer) -> None:
            answered.append(answer)
            bar.progress(len(answered) / total, text=f"Question {len(answered)} of {total} answered")

        result = quiz.ask(planned, send, report)
        failed = quiz.failures(result)
        status.update(label=f"Asked {plural(total, 'question')}" + (f"; {plural(len(failed), 'request')} failed"
                                                                     if failed else ""),
                      state="error" if failed else "complete", expanded=False)
    return result


def _show(result: quiz.Asking) -> None:
    st.markdown("**Right answers per type of fact**")
    st.dataframe(quiz.type_rows(result), hide_index=True)
    one, two = st.columns(2)
    one.metric("Requests sent", f"{result.sent_requests:,}")
    two.metric("Prompt tokens sent", f"{result.tokens_sent:,}")
    for line in quiz.failures(result):
        st.error(literal(line[:1].upper() + line[1:]), icon=":material/error:")
    st.dataframe(quiz.answer_rows(result), hide_index=True, width="stretch")
    st.caption("Each question after the full request and after the policy's, at the same call. *right* or *wrong* "
               "by the exact paths, numbers and identifiers a right answer repeats, or by the judge; — is not "
               "graded (a failed request, or a question only the judge grades with the judge off).")


def panel(conversation: Conversation, rules: Rules, settings: Settings, summary: SummarySettings | None,
          model: str) -> None:
    """The questions on the facts What it keeps shows, for the policy and mode it replays."""
    if not call_starts(conversation.items):  # no call to ask at (the view above says so)
        return
    st.subheader("Ask the model")
    st.toggle("Ask a live model what it kept", key=state.ASK_ON,
              help="Questions on the run's facts (files written, what the user required, a command's status, the "
                   "last error, the next step), each asked after the full request and after the policy's. Nothing "
                   "is sent until you press the button.")
    if not st.session_state.get(state.ASK_ON):
        return
    provider, budget, limit, judge = _settings()
    endpoint = llm_endpoint.endpoint_shown(provider)
    price = read_prices().get(endpoint.model or None, probe.PROVIDERS[provider])
    policy, _ = run_setup.chosen_policy(rules, settings, summary, model)
    mode = st.session_state[state.REPLAY_MODE]
    meter = state.engine().meter(model)
    try:
        with st.spinner(f"Writing the questions: replaying the calls where {policy.name} fired…"):
            planned = quiz.plan(conversation, quiz.questions(conversation, policy, meter, mode=mode, limit=limit),
                                meter, price, provider, budget=budget, judge=judge)
    except InputError as exc:  # a conversation the provider's format cannot carry: say what, send nothing
        st.error(literal(f"Cannot ask about this conversation: {exc}"), icon=":material/error:")
        return
    for line in quiz.estimate_lines(planned, endpoint.timeout, judge_named="the judge"):
        st.caption(literal(line[:1].upper() + line[1:] + "."))
    if not planned.asked:
        return
    key = (id(conversation), policy.name, repr(policy.params()), mode, provider, endpoint.model, endpoint.where,
           limit, budget, judge)
    kept = st.session_state.get(state.ASK_RESULT)
    kept = kept[1] if kept and kept[0] == key else None
    with st.expander(f"The {plural(len(planned.asked), 'question')}", expanded=kept is None):
        st.dataframe(quiz.question_rows(planned), hide_index=True, width="stretch")
    if st.button(llm_endpoint.send_label(planned.requests, planned.tokens, planned.cost, endpoint), type="primary",
                 disabled=not endpoint.model, help="Each question after the full request and after the policy's, "
                                                   "at temperature 0; tools stay defined but none may be called."):
        kept = _ask(planned, llm_endpoint.sender(provider, endpoint), endpoint.where)
        st.session_state[state.ASK_RESULT] = (key, kept)
    if kept is not None:
        _show(kept)
