"""Step-through: the compaction pass over the current conversation, one engine step at a time.

The frames come from ``stepthrough.walk`` (the engine's own ``compaction.walk``); this panel
only keeps the current step in session state and lays the frame out.
"""

from __future__ import annotations

import streamlit as st

from ..compaction import Settings
from ..conversation import Conversation
from ..meter import Meter
from ..present import stepthrough
from ..rules import Rules
from ..words import plural
from . import item_tokens, state

VERDICT = {True: ":green[:material/check_circle: passed]", False: ":red[:material/block: stopped]"}


def _move(to: int | None, last: int) -> None:
    if to is not None:
        st.session_state[state.STEP] = max(0, min(to, last))


def _jump(walk: stepthrough.Walk) -> None:
    _move(walk.first_at(int(st.session_state[state.STEP_JUMP])), len(walk.frames) - 1)


def _controls(walk: stepthrough.Walk, index: int, conversation: Conversation) -> None:
    last = len(walk.frames) - 1
    row = st.container(horizontal=True, vertical_alignment="bottom")
    row.button("Back", key=state.STEP_BACK, icon=":material/chevron_left:", disabled=index == 0,
               on_click=_move, args=(index - 1, last), help="One step back.")
    row.button("Forward", key=state.STEP_FORWARD, icon=":material/chevron_right:", disabled=index == last,
               on_click=_move, args=(index + 1, last), type="primary", help="One step of the pass forward.")
    following = walk.next_edit(index)
    row.button("Next edit", key=state.STEP_NEXT_EDIT, icon=":material/skip_next:", disabled=following is None,
               on_click=_move, args=(following, last), help="Forward to the next step that replaces an item.")
    positions = walk.positions()
    row.selectbox("Jump to item", positions, key=state.STEP_JUMP, index=None, placeholder="item, role, tool",
                  format_func=lambda position: stepthrough.item_words(conversation.items[position], position),
                  on_change=_jump, args=(walk,), help="The items the pass stops at: tool calls and results with a "
                                                     "rule to look up.")
    row.button("Start over", key=state.STEP_RESET, icon=":material/first_page:", disabled=index == 0,
               on_click=_move, args=(0, last))


def _frame(walk: stepthrough.Walk, frame: stepthrough.Frame) -> None:
    st.progress((frame.index + 1) / len(walk.frames), text=f"Step {frame.index + 1} of {len(walk.frames)}")
    left, right = st.columns(2, gap="large")
    with left:
        st.markdown(f"**{frame.title}**")
        if frame.kind == "template":
            st.code(frame.detail, language=None, wrap_lines=True)
        elif frame.kind == "verdict":
            (st.success if frame.edit else st.warning)(frame.detail)
        elif frame.detail:
            st.caption(frame.detail)
        if frame.guards:
            st.markdown("Guards checked for this item:\n" + "\n".join(
                f"- {VERDICT[guard.passed]} **{guard.name}**" + (f" — {guard.detail}" if guard.detail else "")
                for guard in frame.guards))
    with right:
        remembered = walk.remembered(frame)
        st.markdown(f"**Call arguments remembered, by call id** ({len(remembered)})")
        st.dataframe([{"": "→" if row.call_id == frame.call_id else "", "call id": row.call_id, "tool": row.tool,
                       "arguments": row.arguments} for row in remembered[-12:]], hide_index=True, width="stretch",
                     column_config={"": st.column_config.TextColumn(width=30),
                                    "arguments": st.column_config.TextColumn(width="large")})
        if frame.call_id:
            st.caption(f"→ the row for call id {frame.call_id}: the current item's call.")
        if len(remembered) > 12:
            st.caption(f"The newest 12 of {len(remembered)}: a result's template reads its own call's row.")


def _cut(conversation: Conversation, keep_steps: int) -> None:
    st.markdown("**Summarization's cut**")
    cuts = stepthrough.cut_frames(conversation, keep_steps)
    st.caption(f"Keeping the newest {plural(keep_steps, 'step')}, the cut moves back until no call is separated from "
               "its result: items before the final cut are summarized, items from it on are kept.")
    st.dataframe([{"step": cut.index + 1, "cut before item": cut.position, "why": cut.detail} for cut in cuts],
                 hide_index=True, width="stretch")


def panel(conversation: Conversation, rules: Rules, settings: Settings, meter: Meter, below_threshold: bool,
          keep_steps: int) -> None:
    """The Step-through view for the conversation, rules and settings on the page."""
    walk = stepthrough.walk(conversation, rules, settings, meter)
    if not walk.matched():
        st.info("No rule matches any item of this conversation: the pass has nothing to show. Add a rule in the "
                "rule tables on *Before / after*.", icon=":material/info:")
        return
    if below_threshold:
        st.caption("The request is below the threshold, so compact() would not run this pass at all; this is what "
                   "it would do if it did.")
    index = min(st.session_state.get(state.STEP, 0), len(walk.frames) - 1)
    st.session_state[state.STEP] = index
    _controls(walk, index, conversation)
    frame = walk.frames[index]
    _frame(walk, frame)
    st.markdown("**Before and after the pass** — the current item highlighted")
    st.html(stepthrough.ROWS_STYLE + stepthrough.rows_html(walk, conversation, frame.position))
    with st.expander(f"Tokens of item {frame.position}, before and after", icon=":material/token:"):
        item_tokens.draw(conversation.items[frame.position], walk.items[frame.position], meter,
                        f"step_{frame.position}")
    _cut(conversation, keep_steps)
