"""The live probe in the Run view: does the policy change what the agent does next?

Off until switched on (planning replays the run once more). The endpoint is summarization's: the
sidebar's fields when it draws them, else the same widgets drawn here (``llm_endpoint``). The
plan and its estimate are free and shown first; requests go out only when the person presses the
button, whose label carries the same figures. The result is kept for the exact plan it was made
for, so a rerun shows it again and any change of policy, endpoint or conversation hides it.
"""

from __future__ import annotations

import streamlit as st

from .. import probe
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


def _settings() -> tuple[str, int | None]:
    """The probe's own controls and those it shares with the questions; returns the provider and budget."""
    st.session_state.setdefault(state.PROBE_CALLS, probe.DEFAULT_CALLS)
    provider = llm_endpoint.provider_choice()
    one, two = st.columns(2)
    one.number_input("Calls to probe", min_value=1, max_value=MAX_COUNT, step=1, key=state.PROBE_CALLS,
                     help="Of the calls the policy changed, spread evenly over the run, the last always among them.")
    return provider, llm_endpoint.budget(two)


SAME_WORDS = {True: "yes", False: "no", None: "—"}  # None: not compared (a request failed)


def _rows(result: probe.Probe) -> list[dict[str, object]]:
    """The probed calls, one row each: both next steps side by side."""
    texts = any(o.similarity is not None for o in result.outcomes)
    failed = any(o.error for o in result.outcomes)
    return [{"call": o.number, "index": o.index, "same next step": SAME_WORDS[o.same],
             "as it was": str(o.before) if o.before else "", "as compacted": str(o.after) if o.after else "",
             **({"similarity": "" if o.similarity is None else f"{o.similarity:.2f}"} if texts else {}),
             **({"failed": o.error or ""} if failed else {})} for o in result.outcomes]


def _show(result: probe.Probe) -> None:
    agreement, compared = result.agreement, result.compared
    same = sum(outcome.same is True for outcome in compared)
    one, two, three = st.columns(3)
    one.metric("Same next step", "—" if agreement is None else f"{agreement:.0%}",
               help=f"{same} of {len(compared)} compared calls. Tool calls count as the same with the same tool and "
                    f"arguments (JSON compared as values); text replies at a similarity of "
                    f"{probe.TEXT_THRESHOLD:g} or more.")
    two.metric("Requests sent", f"{result.sent_requests:,}")
    three.metric("Prompt tokens sent", f"{result.tokens_sent:,}")
    failed = [outcome for outcome in result.outcomes if outcome.error]
    for outcome in failed:
        st.error(literal(f"Call {outcome.number} (index {outcome.index}), {outcome.error}"),
                 icon=":material/error:")
    st.dataframe(_rows(result), hide_index=True, width="stretch")


def panel(conversation: Conversation, rules: Rules, settings: Settings, summary: SummarySettings | None,
          model: str) -> None:
    """The probe under the Run view's charts, for the policy and mode the view replays."""
    if not call_starts(conversation.items):  # no call to probe (the Run view says so)
        return
    st.subheader("Does the next step change?")
    st.toggle("Probe a live model", key=state.PROBE_ON,
              help="Send calls the policy changed, as they were and as compacted, to a model you choose, and "
                   "compare what it would do next. Nothing is sent until you press the button.")
    if not st.session_state[state.PROBE_ON]:
        return
    provider, budget = _settings()
    endpoint = llm_endpoint.endpoint_shown(provider)
    price = read_prices().get(endpoint.model or None, probe.PROVIDERS[provider])
    policy, _ = run_setup.chosen_policy(rules, settings, summary, model)
    mode = st.session_state[state.REPLAY_MODE]
    try:
        with st.spinner(f"Planning the probe: replaying {plural(len(call_starts(conversation.items)), 'call')} "
                        f"under {policy.name}…"):
            plan = probe.plan(conversation, policy, state.engine().meter(model), price, provider, mode=mode,
                              calls=int(st.session_state[state.PROBE_CALLS]), budget=budget)
    except InputError as exc:  # a conversation the provider's format cannot carry: say what, send nothing
        st.error(literal(f"Cannot probe this conversation: {exc}"), icon=":material/error:")
        return
    for line in probe.estimate_lines(plan, endpoint.timeout):
        st.caption(literal(line[:1].upper() + line[1:] + "."))
    key = (id(conversation), policy.name, repr(policy.params()), mode, provider, endpoint.model, endpoint.where,
           int(st.session_state[state.PROBE_CALLS]), budget)
    if plan.pairs and st.button(llm_endpoint.send_label(plan.requests, plan.tokens, plan.cost, endpoint),
                                type="primary", disabled=not endpoint.model,
                                help="Each call's request as it was and as compacted, at temperature 0 with a small "
                                     "reply limit."):
        with st.status(f"Probing {len(plan.pairs)} calls at {endpoint.where}…") as progress:
            result = probe.run(plan, llm_endpoint.sender(provider, endpoint))
            progress.update(label="Probe done", state="complete")
        st.session_state[state.PROBE_RESULT] = (key, result)
    kept = st.session_state.get(state.PROBE_RESULT)
    if kept and kept[0] == key:
        _show(kept[1])
