"""The Export tab: the compacted and the original conversation in an API format, the report, and
the rules — as data, as Python, and as a compactor module or context-editing settings that run."""

from __future__ import annotations

import streamlit as st

from .. import formats
from ..compaction import Settings
from ..engine import Optimized
from ..export import exports
from ..present import render
from . import state


def panel(original, result: Optimized, rules, settings: Settings, model_name: str,
                  summary_limit: int | None) -> None:
    stem = "conversation"
    choice = st.selectbox("Export format", list(formats.FORMATS), key=state.EXPORT_FORMAT,
                          format_func=formats.TITLES.get, on_change=_list_losses_if_converting, args=(original,),
                          help="The conversation's own API format by default (an agent's log: the format it was "
                               "sent in); another one converts it (keys only the source format understands are "
                               "dropped).")
    if st.toggle("List what this export converts, fills in or drops", key=state.EXPORT_NOTES,
                 help="On whenever the export converts the conversation (another format, or an agent's log made "
                      "into a request): every loss is listed. It writes the whole export, so on a very large "
                      "conversation it takes a moment."):
        notes = exports.conversation(result.conversation, f"{stem}.compacted", choice).notes
        for note in notes or ("Nothing: the export is the conversation as it is.",):
            st.caption(render.literal(note))
    # The large files are made only when their button is pressed (a callable), not on every rerun: for a
    # 1M-token conversation writing them took most of each rerun.
    rules_json, rules_python = exports.rules_json(rules), exports.rules_python(rules)
    one, two = st.columns(2)
    one.download_button("Compacted conversation",
                        lambda: exports.conversation(result.conversation, f"{stem}.compacted", choice).data,
                        exports.conversation_name(f"{stem}.compacted", choice), "application/json", width="stretch",
                        type="primary", on_click="ignore", help="The request after compaction (and summarization, if "
                                                                "it ran), ready to send or to load again.")
    two.download_button("Original conversation", lambda: exports.conversation(original, stem, choice).data,
                        exports.conversation_name(stem, choice), "application/json", width="stretch",
                        on_click="ignore", help="The request as it is now (after your edits), before compaction.")
    one.download_button("Report (JSON)", lambda: exports.report(result, stem, summary_limit).data,
                        exports.report_name(stem), "application/json", width="stretch", on_click="ignore",
                        help="Stage, totals, every edit and skip with its reason, the prompt-cache prefix and what "
                             "summarization did.")
    two.download_button("Rules (JSON)", rules_json.data, rules_json.name, rules_json.mime, width="stretch",
                        help="Both rule tables, to import again or pass to the CLI with --rules.")
    one.download_button("Rules (Python)", rules_python.data, rules_python.name, rules_python.mime,
                        width="stretch", help="The book's two dicts.")
    _runnable_exports(two, one, original, rules, settings, model_name)


def _list_losses_if_converting(original) -> None:
    """A newly chosen export format that converts turns the loss list on."""
    if state.export_converts(original, st.session_state[state.EXPORT_FORMAT]):
        st.session_state[state.EXPORT_NOTES] = True


def _runnable_exports(one, two, conversation, rules, settings: Settings, model_name: str) -> None:
    """The exports that run, in columns ``one`` and ``two``: a compactor module, and context-editing
    settings when the rules map onto them."""
    # Both are small (about 18 kB and 3 kB, made in a millisecond), unlike the conversation exports above.
    compactor = exports.rules_compactor(rules, settings, model_name)
    one.download_button("Rules + compactor (Python)", compactor.data, compactor.name, compactor.mime,
                        width="stretch", on_click="ignore",
                        help="One standard-library module with these rules, the error patterns, threshold, "
                             "keep_recent and min_tokens built in, and compact(request, format) for a Chat "
                             "Completions, Responses or Anthropic message list. Gives the page's result.")
    framework = exports.framework_settings(conversation, rules, settings)
    if framework is not None:
        two.download_button("Context editing settings (Anthropic, LangChain)", framework.data, framework.name,
                            framework.mime, width="stretch", on_click="ignore",
                            help="The same clearing as Anthropic's context_management clear_tool_uses and "
                                 "LangChain's ClearToolUsesEdit, with what does not carry over (per-tool "
                                 "templates, the error guard, …).")
