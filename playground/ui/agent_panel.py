"""*Use it in your agent*, at the foot of the Export tab: the policy tuned here as code around the agent's
own client (``pg.compacting`` reading the workspace file), or as the native context-editing settings it
maps onto, with what those cannot express."""

from __future__ import annotations

import streamlit as st

from ..compaction import Settings
from ..export import exports
from ..present import literal
from . import state, workspace_file

NATIVE = "native"
TARGETS = {**exports.AGENT_CLIENTS, NATIVE: "Native settings (Anthropic context editing, LangChain)"}


def panel(conversation, rules, settings: Settings, model_name: str) -> None:
    st.subheader("Use it in your agent")
    target = st.radio("Target", list(TARGETS), format_func=TARGETS.get, key=state.AGENT_TARGET, horizontal=True,
                      help="A client wrapper runs this policy itself, exactly as the Whole run tab replays it "
                           "(tests hold the requests sent to replay's, byte for byte). Native settings hand the "
                           "clearing to the provider or framework, which cannot do all the rules do.")
    if target == NATIVE:
        _native(conversation, rules, settings)
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


def _native(conversation, rules, settings: Settings) -> None:
    found = exports.native_settings(conversation, rules, settings)
    if found is None:
        st.info("These rules replace no tool result of this conversation, so there is no clearing to hand over.",
                icon=":material/info:")
        return
    st.caption("Anthropic's `clear_tool_uses` and LangChain's `ClearToolUsesEdit` clear the oldest results of "
               f"{', '.join(f'`{tool}`' for tool in found.cleared_tools)} past a trigger, with one placeholder.")
    st.code(found.anthropic_snippet(), language="python")
    st.code(found.langchain_snippet(), language="python")
    if found.lost:
        st.markdown("**What they do not carry over**\n\n" + "\n".join(f"- {literal(item)}" for item in found.lost))
