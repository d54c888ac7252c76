"""The Streamlit page. Layout and state only: every number and decision comes from the engine."""

from __future__ import annotations

import logging

import streamlit as st

from .. import exports, formats, models, render
from ..compaction import Settings
from ..errors import InputError
from ..pipeline import Optimized
from ..summarize import OfflineSummarizer
from . import (
    calibration_panel,
    compare_panel,
    conversation_panel,
    lessons_panel,
    results,
    rules_panel,
    run_panel,
    sidebar,
    state,
    stepper_panel,
    summary_panel,
    tokenview_panel,
)

EXPLAINER = """
**What is compaction?** An agent calls tools, and what they return piles up in its context: the full text of
a file it just wrote, a page it read, a list of search results. Once the model has used that data it mostly
takes up room. Compaction swaps each piece for a short, predictable reference — *"File content from
report.md. Re-read if needed."* — chosen by rules keyed on the tool's name. Nothing is lost for good: the
agent can call the tool again to get the original.

**Why only behind a threshold?** Every edit has a price. Fetching something again costs time and money (and a
repeated web search may come back different), and changing an early message breaks the provider's prompt
cache from that point on. So the optimizer counts first, leaves the request alone below the threshold,
compacts when it is over, and only if the request is still too large does it summarize older history — which
is lossy: a summary cannot be undone by calling a tool, a reference can.

**How to use this page.** Pick a preset on the left or bring your own conversation (*Conversation* tab),
edit the two rule tables (*Rules*), move the threshold, and watch the meters and the before/after rows.
*Where the tokens go* shows which tools deserve a rule; *Export* hands you the result and the rules.
"""


def _export_panel(original, result: Optimized, rules, summary_limit: int | None) -> None:
    stem = "conversation"
    choice = st.selectbox("Export format", list(formats.FORMATS), key="export_format",
                          index=list(formats.FORMATS).index(original.format), format_func=formats.TITLES.get,
                          help="The conversation's own format by default; another one converts it (keys only the "
                               "source format understands are dropped).")
    compacted = exports.conversation(result.conversation, f"{stem}.compacted", choice)
    as_is = exports.conversation(original, stem, choice)
    for note in compacted.notes:  # what the export converted, filled in or dropped to be sendable
        st.caption(note)
    report = exports.report(result, stem, summary_limit)
    rules_json, rules_python = exports.rules_json(rules), exports.rules_python(rules)
    one, two = st.columns(2)
    one.download_button("Compacted conversation", compacted.data, compacted.name, compacted.mime, width="stretch",
                        type="primary", help="The request after compaction (and summarization, if it ran), ready "
                                             "to send or to load again.")
    two.download_button("Original conversation", as_is.data, as_is.name, as_is.mime, width="stretch",
                        help="The request as it is now (after your edits), before compaction.")
    one.download_button("Report (JSON)", report.data, report.name, report.mime, width="stretch",
                        help="Stage, totals, every edit and skip with its reason, the prompt-cache prefix and what "
                             "summarization did.")
    two.download_button("Rules (JSON)", rules_json.data, rules_json.name, rules_json.mime, width="stretch",
                        help="Both rule tables, to import again or pass to the CLI with --rules.")
    one.download_button("Rules (Python)", rules_python.data, rules_python.name, rules_python.mime,
                        width="stretch", help="The book's two dicts.")


def main() -> None:
    st.set_page_config(page_title="Compaction Playground", page_icon=":material/compress:", layout="wide")
    st.html(render.STYLE)
    try:
        _page()
    except Exception as exc:  # a bug, not bad input: say so plainly, keep the session, log the details
        logging.getLogger("playground").exception("the page failed")
        st.error(f"Something went wrong drawing this page ({type(exc).__name__}). Your conversation and rules are "
                 "kept; *Reset to preset* or another change may get you going. Details are in the server log.",
                 icon=":material/bug_report:")


def _page() -> None:
    state.init()
    conversation = st.session_state[state.CONVERSATION]

    with st.sidebar:
        st.header("Conversation")
        sidebar.conversation_picker()
        st.header("Settings")
        model_name = st.session_state[state.MODEL]
        before = state.engine().count(conversation, model_name)
        sidebar.settings(before.total)
        calibration_panel.draw(conversation, model_name)
        st.header("Summarization")
        summary_panel.init()
        summary_panel.settings()

    st.title("Compaction Playground")
    st.caption("Replace tool data an agent has already used with short references — only when the request is "
               "over a token threshold — and see what it saves and what it costs.")
    with st.expander("New here? What compaction is, and why it waits for a threshold", icon=":material/school:"):
        st.markdown(EXPLAINER)
    for note in conversation.notes:
        st.info(note, icon=":material/info:")

    rules, checks = rules_panel.current_rules(conversation)
    try:
        settings = Settings(threshold=st.session_state[state.THRESHOLD],
                            keep_recent=st.session_state[state.KEEP_RECENT],
                            compact_errors=st.session_state[state.COMPACT_ERRORS])
    except InputError as exc:  # the widgets bound these, so this is a guard, not a path
        st.error(str(exc))
        return
    summary, prefer = summary_panel.config()
    optimized = state.engine().optimize(conversation, rules, settings, summary, OfflineSummarizer(), model_name,
                         st.session_state[summary_panel.CACHE], prefer)
    results.headline(conversation, optimized, models.info(model_name))
    rules_panel.no_match_notice(conversation, optimized, rules)
    summary_panel.panel(optimized, prefer)

    tabs = st.tabs(["Before / after", "Where the tokens go", "Rules", "Conversation", "Export", "Lessons",
                    "Step-through", "Run", "Compare"], key="tab", on_change="rerun")
    with tabs[0]:
        results.before_after(conversation, optimized)
        with st.expander("Tokens of one item, as the model sees them", icon=":material/token:"):
            tokenview_panel.panel(conversation, optimized.compaction.conversation, state.engine().meter(model_name))
    with tabs[1]:
        results.where_tokens_go(conversation, before, rules)
    with tabs[2]:
        rules_panel.panel(checks, rules)
    with tabs[3]:
        st.caption(f"Now showing: {st.session_state[state.SOURCE]} — {formats.TITLES[conversation.format]}, "
                   f"{len(conversation.items)} items, {before.total:,} tokens.")
        paste, build = st.columns([1, 1], gap="large")
        with paste:
            st.subheader("Paste or upload")
            conversation_panel.paste_and_upload()
        with build:
            st.subheader("Build item by item")
            conversation_panel.build()
    with tabs[4]:
        _export_panel(conversation, optimized, rules, summary.limit if summary else None)
    _teach(tabs[5], tabs[6], conversation, rules, settings, optimized, model_name)
    _runs(tabs[7], tabs[8], conversation, rules, settings, summary, model_name)


def _runs(run_tab, compare_tab, conversation, rules, settings: Settings, summary, model_name: str) -> None:
    """Run and Compare replay the whole run: only while their tab is open (the tabs rerun on change)."""
    run_panel.keep()
    if run_tab.open:
        with run_tab:
            run_panel.panel(conversation, rules, settings, summary, model_name)
    if compare_tab.open:
        with compare_tab:
            compare_panel.panel(conversation, rules, settings, summary, model_name)


def _teach(lessons_tab, steps_tab, conversation, rules, settings: Settings, optimized: Optimized,
           model_name: str) -> None:
    """Lessons and Step-through run only while their tab is open (the tabs rerun on change)."""
    if lessons_tab.open:
        with lessons_tab:
            lessons_panel.panel(conversation, rules, settings, optimized)
    if steps_tab.open:
        with steps_tab:
            stepper_panel.panel(conversation, rules, settings, state.engine().meter(model_name),
                                optimized.compaction.report.stage == "below_threshold",
                                st.session_state[summary_panel.KEEP_STEPS])
