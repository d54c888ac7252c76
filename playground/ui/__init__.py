"""The Streamlit page. Layout and state only: every number and decision comes from the engine.

How the page is built: this module composes the tabs, one ``*_panel.py`` each, and no panel
imports another; what panels share lives in modules named for it (``state``: every session-state
and widget key and the state logic; ``run_setup``: prices, the page's one ``PolicySettings``, the
chosen strategy's replay and call; ``widgets``; ``llm_endpoint``; ``summary_settings``;
``item_tokens``; ``bills``).

The door: the page reaches the library only through these modules (``tests/test_page_structure.py``
holds the list). Each room through its package, its public face (``playground.run``, not
``playground.run.replay``): ``playground.engine``, ``playground.compaction``,
``playground.conversation``, ``playground.errors``, ``playground.limits``, ``playground.words``,
``playground.formats``, ``playground.meter``, ``playground.rules``, ``playground.summarize``,
``playground.policies``, ``playground.run``, ``playground.tune``, ``playground.present``,
``playground.export``, ``playground.probe``, ``playground.corpus``. Besides, modules that are
each one thing the page alone uses: the step-through's and token view's values
(``playground.present.stepthrough``, ``playground.present.tokenview``), the page's material
(``playground.workbench.builder``, ``playground.workbench.defaults``,
``playground.workbench.presets``, ``playground.workbench.workspace``,
``playground.workbench.lessons``) and the LLM clients, each imported on its own so the ``openai``
client loads only when one is called (``playground.llm`` for the endpoint and its error,
``playground.llm.keys``, ``playground.llm.anthropic``, ``playground.llm.openai_compatible``,
``playground.summarize.online``).
"""

from __future__ import annotations

import logging

import streamlit as st

from .. import formats
from ..compaction import Settings
from ..engine import Optimized
from ..errors import InputError
from ..export import exports
from ..meter.tokens import TokenCount
from ..policies.as_it_ran import held
from ..present import render, view
from ..summarize.offline import OfflineSummarizer
from ..words import plural
from . import (
    calibration_panel,
    compare_panel,
    conversation_panel,
    corpus_panel,
    lessons_panel,
    probe_panel,
    results,
    rules_panel,
    run_panel,
    run_setup,
    sidebar,
    state,
    stepper_panel,
    summary_panel,
    summary_settings,
    tokenview_panel,
    workspace_panel,
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


def _export_panel(original, result: Optimized, rules, settings: Settings, model_name: str,
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


def main() -> None:
    st.set_page_config(page_title="Compaction Playground", page_icon="🗜️", layout="wide")
    st.html(render.STYLE)
    try:
        _page()
    except Exception as exc:  # a bug, not bad input: say so plainly, keep the session, log the details
        logging.getLogger("playground").exception("the page failed")
        st.error(f"Something went wrong drawing this page ({type(exc).__name__}). Your conversation and rules are "
                 "kept; *Reset to preset* or another change may get you going. Details are in the server log.",
                 icon=":material/bug_report:")


def _sidebar(conversation, log) -> tuple[str, TokenCount]:
    """The sidebar: which conversation, the workspace, settings, calibration (from the ``log``'s bills)
    and summarization. Returns the model in use and the conversation's count, which the page reuses."""
    with st.sidebar:
        st.header("Conversation")
        sidebar.conversation_picker()
        with st.expander("Save or open a workspace", icon=":material/folder_open:"):
            workspace_panel.panel()
        st.header("Settings")
        model_name = st.session_state[state.MODEL]
        before = state.engine().count(conversation, model_name)
        sidebar.settings(before.total)
        calibration_panel.draw(log, model_name)
        st.header("Summarization")
        summary_settings.init()
        summary_panel.settings()
    return model_name, before


def _notices(log, conversation) -> None:
    """What the reader noted, and where the page shows the agent's own context instead of its whole log."""
    notes = formats.notes(log)
    if notes:  # folded, so the meters, the rules and before / after stay in the first screen
        with st.expander(f"What the reader noted ({len(notes)})", icon=":material/info:"):
            for note in notes:
                st.info(render.literal(note), icon=":material/info:")
    if conversation is not log:
        st.info(f"The agent cut its own context ({plural(len(log.compactions), 'time')}): the meters and *Before / "
                f"after* show what it held at its last call, {len(conversation.items):,} of the log's "
                f"{len(log.items):,} items. The Run and Compare tabs replay the whole log, call by call.",
                icon=":material/content_cut:")


def _conversation_tab(log, conversation, before: TokenCount) -> None:
    """The Conversation tab: what is shown, and the two ways in (paste or upload, build)."""
    source = render.literal(st.session_state[state.SOURCE])
    held_by = "" if conversation is log else f" (the agent held {len(conversation.items):,} of them at the end)"
    st.caption(f"Now showing: {source} — {view.format_title(log)}, {len(log.items):,} items{held_by}, "
               f"{before.total:,} tokens.")
    paste, build = st.columns([1, 1], gap="large")
    with paste:
        st.subheader("Paste or upload")
        conversation_panel.paste_and_upload()
    with build:
        st.subheader("Build item by item")
        conversation_panel.build()


def _page() -> None:
    state.init()
    log = st.session_state[state.CONVERSATION]
    # the meters measure the context the agent held at the end; Run, Compare and the calibration replay the log
    conversation = held(log)
    model_name, before = _sidebar(conversation, log)

    st.title("Compaction Playground")
    st.caption("Replace tool data an agent has already used with short references — only when the request is "
               "over a token threshold — and see what it saves and what it costs.")
    with st.expander("New here? What compaction is, and why it waits for a threshold", icon=":material/school:"):
        st.markdown(EXPLAINER)
    _notices(log, conversation)

    rules, checks = rules_panel.current_rules(conversation)
    try:
        settings = state.settings()
    except InputError as exc:  # the widgets bound these, so this is a guard, not a path
        st.error(str(exc))
        return
    summary, prefer = summary_settings.config()
    optimized = state.engine().optimize(conversation, rules, settings, summary, OfflineSummarizer(), model_name,
                         st.session_state[state.LLM_SUMMARIES], prefer)
    results.headline(conversation, optimized, run_setup.price(model_name, conversation.started))  # typed ones too
    rules_panel.no_match_notice(conversation, optimized, rules)
    summary_panel.panel(optimized, prefer)
    lessons_panel.banner(conversation, rules, settings, summary, optimized)

    tabs = st.tabs(["Before / after", "Where the tokens go", "Rules", "Conversation", "Export", "Lessons",
                    "Step-through", "Run", "Compare", "Corpus"], key=state.TAB, on_change="rerun")
    with tabs[0]:
        call = run_setup.chosen_call(log, rules, settings, summary, model_name) if tabs[0].open else None
        if call is None:
            results.before_after(conversation, optimized)
        else:
            results.call_before_after(call, run_setup.show_whole)
        with st.expander("Tokens of one item, as the model sees them", icon=":material/token:"):
            tokenview_panel.panel(conversation, optimized.compaction.conversation, state.engine().meter(model_name))
    with tabs[1]:
        results.where_tokens_go(conversation, before, rules)
    with tabs[2]:
        rules_panel.panel(checks, rules)
    with tabs[3]:
        _conversation_tab(log, conversation, before)
    with tabs[4]:
        _export_panel(conversation, optimized, rules, settings, model_name, summary.limit if summary else None)
    _teach(tabs[5], tabs[6], conversation, rules, settings, optimized, model_name)
    _runs(tabs[7], tabs[8], log, rules, settings, summary, model_name)
    if tabs[9].open:  # many runs at once: only while its tab is open
        with tabs[9]:
            corpus_panel.panel(rules, settings, summary)


def _runs(run_tab, compare_tab, conversation, rules, settings: Settings, summary, model_name: str) -> None:
    """Run and Compare replay the whole run: only while their tab is open (the tabs rerun on change)."""
    state.keep_hidden()
    if run_tab.open:
        with run_tab:
            run_panel.panel(conversation, rules, settings, summary, model_name)
            probe_panel.panel(conversation, rules, settings, summary, model_name)
    if compare_tab.open:
        with compare_tab:
            compare_panel.panel(conversation, rules, settings, summary, model_name)


def _teach(lessons_tab, steps_tab, conversation, rules, settings: Settings, optimized: Optimized,
           model_name: str) -> None:
    """Lessons and Step-through run only while their tab is open (the tabs rerun on change)."""
    if lessons_tab.open:
        with lessons_tab:
            lessons_panel.panel()
    if steps_tab.open:
        with steps_tab:
            stepper_panel.panel(conversation, rules, settings, state.engine().meter(model_name),
                                optimized.compaction.report.stage == "below_threshold",
                                st.session_state[state.KEEP_STEPS])
