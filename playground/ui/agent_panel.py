"""*Use it in your agent*, at the foot of the Export tab: the policy tuned here as code around the agent's
own client (``pg.compacting`` reading the workspace file), or as each agent's and provider's own
setting it compiles into (``export.native``), with what each cannot express and, on a button, what
moving to each costs on this run (``export.native_gap``)."""

from __future__ import annotations

import streamlit as st

from ..compaction import Settings
from ..export import NativeComparison, exports, gap_table, native_compare, native_settings
from ..present import literal
from ..run import call_starts, money
from ..words import plural
from . import run_setup, state, widgets, workspace_file

NATIVE = "native"
TARGETS = {**exports.AGENT_CLIENTS,
           NATIVE: "Native settings (Anthropic, LangChain, Agents SDK, Claude Code, Codex, Gemini CLI)"}


def panel(conversation, rules, settings: Settings, summary, model_name: str) -> None:
    """``conversation``: the run as its log holds it (the native gap replays it, as Compare does)."""
    st.subheader("Use it in your agent")
    target = st.radio("Target", list(TARGETS), format_func=TARGETS.get, key=state.AGENT_TARGET, horizontal=True,
                      help="A client wrapper runs this policy itself, exactly as the Whole run tab replays it "
                           "(tests hold the requests sent to replay's, byte for byte). Native settings hand the "
                           "clearing to the provider or framework, which cannot do all the rules do.")
    if target == NATIVE:
        _native(conversation, rules, settings, summary, model_name)
        return
    st.caption(f"Save this workspace as `{exports.WORKSPACE_FILE}` beside your agent; the code reads every setting "
               "from it, so what runs there is what you tuned here. Each call's tokens, edits and cache prefix go "
               "to `compaction-run.jsonl`, which opens here as a run.")
    values = workspace_file.saved_values(st.session_state)
    snippet = exports.agent_snippet(target, model_name)
    one, two = st.columns(2)
    one.download_button("Workspace for the agent", lambda: workspace_file.saved(values), exports.WORKSPACE_FILE,
                        "application/json", width="stretch", on_click="ignore",
                        help="The same file as Settings → Save workspace: the rules, thresholds, error switches, "
                             "summarization, model and calibration. Never the API key.")
    two.download_button("Agent loop (Python)", snippet.data, snippet.name, snippet.mime, width="stretch",
                        on_click="ignore", help="The code below, as a file.")
    st.code(snippet.data, language="python")


def _native(conversation, rules, settings: Settings, summary, model_name: str) -> None:
    options = run_setup.policy_settings(rules, settings, summary, model_name)
    compiled = native_settings(conversation, options, options.context_window or 0)
    st.caption("Each agent's and provider's own setting, compiled from this policy: paste the text where it says. "
               "None can say all the rules say; under each, what it cannot express.")
    found = _gap(conversation, compiled, rules, settings, summary, model_name)
    gaps = {gap.setting.target: gap for gap in found.gaps} if found else {}
    for setting in compiled:
        with st.expander(setting.title):
            if setting.text:
                st.caption(literal(f"In {setting.where}. Emulated here by {setting.emulation} ({setting.mode})."))
                st.code(setting.text, language=setting.language)
            gap = gaps.get(setting.target)
            if gap is not None and gap.row is not None:
                st.caption(f"On this run, beside the tuned policy: {gap.tokens_billed:+,} tokens billed, "
                           f"{'−' if gap.cost < 0 else '+'}{money(abs(gap.cost))}, "
                           f"{gap.hidden_used_calls:+,} calls that used what their request had hidden.")
            st.markdown("**Cannot express**\n\n" + "\n".join(f"- {literal(item)}" for item in setting.cannot))
            st.caption(literal(f"Source: {setting.source}"))


def _gap(conversation, compiled, rules, settings: Settings, summary, model_name: str) -> NativeComparison | None:
    """The button that replays each emulation beside the tuned policy (the Run view's policy, mode
    and cache), and its table; the result is kept for the inputs it was made for."""
    calls = len(call_starts(conversation.items))
    if not calls:
        return None
    policy, _ = run_setup.chosen_policy(rules, settings, summary, model_name)
    state.start(state.REPLAY_MODE, run_setup.DEFAULTS[state.REPLAY_MODE])
    run_setup.follow_cache(state.REPLAY_CACHE, model_name)
    mode, cache = st.session_state[state.REPLAY_MODE], st.session_state[state.REPLAY_CACHE]
    key = (id(conversation), policy.name, repr(policy.params()), mode, cache, model_name, compiled)
    runs = 1 + sum(setting.emulation is not None for setting in compiled)
    if st.button(f"Compare each with the tuned policy on this run ({plural(runs, 'replay')} of "
                 f"{plural(calls, 'call')})", key=state.NATIVE_RUN,
                 help=f"Replays the run under {policy.name} (the Run view's policy, mode and cache) and under each "
                      "setting's emulation here, with the compiled numbers."):
        with st.spinner(f"Replaying {plural(calls, 'call')} {runs} times…", show_time=True):
            found = native_compare(conversation, policy, compiled, state.engine().meter(model_name),
                                   run_setup.price(model_name, conversation.started), mode=mode, cache=cache)
        st.session_state[state.NATIVE_GAP] = (key, found)
    kept = st.session_state.get(state.NATIVE_GAP)
    if not kept or kept[0] != key:
        return None
    st.dataframe(gap_table(kept[1]), hide_index=True, width="stretch",
                 column_config=widgets.counts("tokens billed", "vs tuned (tokens)"))
    st.caption("Each native setting run here by the named policy that emulates it, with the compiled numbers, in the "
               "feature's own mode (per-call: the client keeps the whole history and each request is edited). "
               "*vs tuned*: native less tuned; more hidden-then-used calls mean the agent lost what it went on using.")
    return kept[1]
