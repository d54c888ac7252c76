"""The Streamlit page. Layout and state only: every number and decision comes from the engine.

How the page is built: this module composes the tabs, one ``*_panel.py`` each, and no panel
imports another; what panels share lives in modules named for it (``state``: every session-state
and widget key and the state logic; ``run_setup``: prices, the page's one ``PolicySettings``, the
chosen policy's replay and call; ``widgets``; ``llm_endpoint``; ``summary_settings``;
``item_tokens``; ``bills``; ``workspace_file``: a session read as the workspace file).

The door: the page reaches the library only through these modules (``tests/test_page_structure.py``
holds the list). Each room through its package, its public face (``playground.run``, not
``playground.run.replay``): ``playground.engine``, ``playground.compaction``,
``playground.conversation``, ``playground.errors``, ``playground.limits``, ``playground.words``,
``playground.formats``, ``playground.meter``, ``playground.rules``, ``playground.summarize``,
``playground.policies``, ``playground.run``, ``playground.tune``, ``playground.present``,
``playground.export``, ``playground.probe``, ``playground.quiz``, ``playground.corpus``. Besides, modules
that are each one thing the page alone uses: the step-through's and token view's values
(``playground.present.stepthrough``, ``playground.present.tokenview``), the views and
the HTML they are drawn in (``playground.present.view``, ``playground.present.render``), the
export files (``playground.export.exports``), the rule breakdown (``playground.rules.breakdown``), the page's material
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
from ..meter import TokenCount
from ..policies import held
from ..present import render, view
from ..summarize import OfflineSummarizer
from ..words import plural
from . import (
    agent_panel,
    ask_panel,
    before_after_panel,
    calibration_panel,
    compare_panel,
    conversation_panel,
    corpus_panel,
    export_panel,
    headline,
    keeps_panel,
    lessons_panel,
    probe_panel,
    rules_panel,
    run_panel,
    run_setup,
    sidebar,
    state,
    stepper_panel,
    summary_panel,
    summary_settings,
    tabs,
    tokens_panel,
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
edit the two rule tables (first tab), move the threshold, and watch the meters and the before/after rows.
*Rules* has rule presets, suggestions and *Where the tokens go*, which shows which tools deserve a rule;
*Conversation → Export* hands you the result and the rules.
"""


# Less room above the title than Streamlit's default (6rem): the first screen holds the meters, the
# rule tables and the first before / after rows together at 1400×900.
PAGE_STYLE = "<style>.stMainBlockContainer{padding-top:1.5rem}</style>"


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
    """The sidebar: which conversation and the threshold on the first screen; the rest of the settings
    (preset reset, the workspace, model, exact threshold, keep_recent, errors, calibration from the ``log``'s bills,
    summarization) one click away in *Settings*. Returns the model in use and the conversation's
    count, which the page reuses."""
    with st.sidebar:
        with st.container():  # however many lines the picker draws, Settings keeps its place: open stays open
            sidebar.conversation_picker()
        model_name = st.session_state[state.MODEL]
        before = state.engine().count(conversation, model_name)
        sidebar.threshold(before.total)
        with st.popover("Settings", icon=":material/tune:", width="stretch",
                        help="Reset the preset, save or open a workspace, the model, the exact threshold, "
                             "keep_recent, errors, calibration and summarization."):
            sidebar.preset_reset()
            with st.expander("Save or open a workspace", icon=":material/folder_open:"):
                workspace_panel.panel()
            sidebar.settings(before.total)
            calibration_panel.draw(log, model_name)
            st.subheader("Summarization")
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

    st.html(PAGE_STYLE)
    title = st.container(horizontal=True, vertical_alignment="center")
    title.markdown("### Compaction Playground")
    stage = title.container(width="content")  # the stage's badge, once the optimizer has run
    title.caption("New here? See *Learn*.")
    _notices(log, conversation)

    rules, checks = rules_panel.current_rules(conversation)
    try:
        settings = state.settings()
    except InputError as exc:  # the widgets bound these, so this is a guard, not a path
        st.error(str(exc))
        return
    summary, prefer = summary_settings.config()
    # st.spinner shows only after half a second: a quick rerun stays still, a 200k-token one says what it does
    with st.spinner(f"Counting and compacting {plural(len(conversation.items), 'item')}…", show_time=True):
        optimized = state.engine().optimize(conversation, rules, settings, summary, OfflineSummarizer(),
                                            model_name, st.session_state[state.LLM_SUMMARIES], prefer)
    headline.badges(stage, optimized)
    details = headline.headline(conversation, optimized, run_setup.price(model_name, conversation.started))
    rules_panel.no_match_notice(conversation, optimized, rules)
    done = optimized.summarization  # "not needed" is a detail; a summary that ran (or could not) is news
    with details if done is None or done.report.status == "not_needed" else st.container():
        summary_panel.panel(optimized, prefer)
    lessons_panel.banner(conversation, rules, settings, summary, optimized)

    drawn = tabs.draw()
    with drawn["Before / after"].place:
        _before_after(drawn["Before / after"].open, log, conversation, optimized, checks, rules, settings, summary,
                      model_name)
    with drawn["Presets and patterns"].place:
        rules_panel.panel(checks, rules)
    with drawn["Where the tokens go"].place:
        tokens_panel.panel(conversation, before, rules)
    with drawn["Bring one in"].place:
        _conversation_tab(log, conversation, before)
    with drawn["Export"].place:
        export_panel.panel(conversation, optimized, rules, settings, model_name, summary.limit if summary else None)
        agent_panel.panel(log, rules, settings, summary, model_name)
    _teach(drawn["Lessons"], drawn["Step-through"], conversation, rules, settings, optimized, model_name)
    _runs(drawn["Run"], drawn["What it keeps"], drawn["Compare"], log, rules, settings, summary, model_name)
    if drawn["Corpus"].open:  # many runs at once: only while its tab is open
        with drawn["Corpus"].place:
            corpus_panel.panel(rules, settings, summary)


def _before_after(shown: bool, log, conversation, optimized: Optimized, checks, rules, settings: Settings, summary,
                  model_name: str) -> None:
    """The first tab: the rule tables, then the rows they produce (or one call of the run, chosen in the Run
    tab), so the rules and their effect share the first screen."""
    rules_panel.tables(checks)
    call = run_setup.chosen_call(log, rules, settings, summary, model_name) if shown else None
    if call is None:
        before_after_panel.before_after(conversation, optimized)
    else:
        before_after_panel.call_before_after(call, run_setup.show_whole)
    with st.expander("Tokens of one item, as the model sees them", icon=":material/token:"):
        tokenview_panel.panel(conversation, optimized.compaction.conversation, state.engine().meter(model_name))


def _runs(run_tab: tabs.Tab, keeps_tab: tabs.Tab, compare_tab: tabs.Tab, conversation, rules, settings: Settings,
          summary, model_name: str) -> None:
    """Run, What it keeps and Compare replay the whole run: only while their tab is open (the tabs rerun on change)."""
    state.keep_hidden()
    if run_tab.open:
        with run_tab.place:
            run_panel.panel(conversation, rules, settings, summary, model_name)
            probe_panel.panel(conversation, rules, settings, summary, model_name)
    if keeps_tab.open:
        with keeps_tab.place:
            keeps_panel.panel(conversation, rules, settings, summary, model_name)
            ask_panel.panel(conversation, rules, settings, summary, model_name)
    if compare_tab.open:
        with compare_tab.place:
            compare_panel.panel(conversation, rules, settings, summary, model_name)


def _teach(lessons_tab: tabs.Tab, steps_tab: tabs.Tab, conversation, rules, settings: Settings,
           optimized: Optimized, model_name: str) -> None:
    """Lessons and Step-through run only while their tab is open (the tabs rerun on change)."""
    if lessons_tab.open:
        with lessons_tab.place:  # the explainer that used to sit over the meters, before the first lesson
            with st.expander("What compaction is, and why it waits for a threshold", icon=":material/school:"):
                st.markdown(EXPLAINER)
            lessons_panel.panel()
    if steps_tab.open:
        with steps_tab.place:
            stepper_panel.panel(conversation, rules, settings, state.engine().meter(model_name),
                                optimized.compaction.report.stage == "below_threshold",
                                st.session_state[state.KEEP_STEPS])
