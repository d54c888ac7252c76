"""The Lessons view: pick a lesson, read it, do its one thing (or press *Show me*), go on.

The lessons are data (``presets/lessons/``); whether one is done is ``lessons.check`` on what
``lessons.observe`` reads from the page's result. Starting a lesson and *Show me* change the
page's state in button callbacks, which run before the widgets are drawn.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from .. import lessons
from ..compaction import Settings
from ..errors import InputError
from ..model import Conversation
from ..pipeline import Optimized
from ..rules import Rules
from . import state, summary_panel

PICK = "lesson_pick"
ACTIVE = "lesson_active"  # the lesson whose preset is loaded, or None
DONE = "lessons_done"  # keys of the lessons the learner completed


@st.cache_resource(show_spinner=False)
def _all() -> list[lessons.Lesson]:
    return lessons.load_lessons(presets=set(state.all_presets()))


def apply_changes(changes: dict[str, Any]) -> None:
    """A lesson's state changes (``lessons.applied``), written to the page's own session state."""
    current = lessons.Setup(Rules(), state.settings(), bool(st.session_state.get(summary_panel.ON, True)))
    key = state.get(state.PRESET)
    preset_rules = state.all_presets()[key].rules if key else Rules()
    done = lessons.applied(changes, current, st.session_state[state.CONVERSATION], preset_rules,
                           state.engine().meter(state.get(state.MODEL)))
    state.set_threshold(done.settings.threshold)
    st.session_state[state.KEEP_RECENT] = done.settings.keep_recent
    st.session_state[state.COMPACT_ERRORS] = done.settings.compact_errors
    st.session_state[summary_panel.ON] = done.summarize
    if "rules" in changes:  # else the tables keep the learner's own edits
        state.set_rules(done.rules)


def _start(key: str) -> None:
    lesson = _by_key(key)
    state.apply_preset(lesson.preset)
    apply_changes(dict(lesson.start))
    st.session_state[ACTIVE] = key
    st.session_state[PICK] = key


def _show_me(key: str) -> None:
    apply_changes(lessons.show_me(_by_key(key)))


def _by_key(key: str) -> lessons.Lesson:
    return next(lesson for lesson in _all() if lesson.key == key)


def _label(lesson: lessons.Lesson, number: int) -> str:
    """A lesson's name in the picker; it never changes during a session (a picker whose labels
    change is a new widget to Streamlit, and would lose its place)."""
    return f"{number}. {lesson.title}"


def panel(conversation: Conversation, rules: Rules, settings: Settings, optimized: Optimized) -> None:
    """The Lessons view; reads the page's current result to check the active lesson."""
    try:
        every = _all()
    except InputError as exc:  # a broken lesson file: say which and where, keep the page
        st.error(f"The lessons could not be read: {exc}", icon=":material/error:")
        return
    if not every:
        st.info("No lessons found in presets/lessons/.")
        return
    keys = [lesson.key for lesson in every]
    st.session_state.setdefault(PICK, keys[0])
    done: set[str] = st.session_state.setdefault(DONE, set())
    numbers = {key: index + 1 for index, key in enumerate(keys)}
    progress = st.empty()  # filled last, once this run's check has counted
    _lesson(keys, numbers, done, conversation, rules, settings, optimized)
    finished = [numbers[k] for k in keys if k in done]
    progress.progress(len(finished) / len(keys), text=f"{len(finished)} of {len(keys)} lessons done"
                      + (f": {', '.join(map(str, finished))}" if finished else ""))


def _lesson(keys: list[str], numbers: dict[str, int], done: set[str], conversation: Conversation, rules: Rules,
            settings: Settings, optimized: Optimized) -> None:
    """The picked lesson: its task and a Start button, or, once started, its text and its check."""
    key = st.selectbox("Lesson", keys, key=PICK, format_func=lambda k: _label(_by_key(k), numbers[k]),
                       help="Each lesson takes about two minutes on its own preset and asks you to do one thing.")
    lesson = _by_key(key)
    st.subheader(lesson.title)
    if st.session_state.get(ACTIVE) != key:
        st.markdown(f"**Your task:** {lesson.task}")
        title = state.all_presets()[lesson.preset].title
        st.caption(f"About {lesson.minutes} minutes. Starting loads the preset “{title}” with this lesson's "
                   "settings: the conversation, rules and settings on the page are replaced.")
        st.button("Start this lesson", key="lesson_start", type="primary", on_click=_start, args=(key,),
                  icon=":material/play_arrow:")
        return
    # The task, its check and the buttons first: they stay in view while the learner works the sidebar.
    passed = lessons.check(lesson, lessons.observe(conversation, rules, settings, optimized))
    if passed:
        done.add(key)
        st.success(f"Done: {lesson.task}", icon=":material/check_circle:")
    else:
        st.info(f"**Your task:** {lesson.task}", icon=":material/touch_app:")
    show, following = st.columns(2)
    show.button("Show me", key="lesson_show_me", on_click=_show_me, args=(key,), disabled=passed, width="stretch",
                icon=":material/visibility:", help="Does the task for you, so you can see what changes.")
    later = keys[keys.index(key) + 1:]
    if later:
        following.button("Next lesson", key="lesson_next", type="primary", disabled=not passed, on_click=_start,
                         args=(later[0],), width="stretch", icon=":material/arrow_forward:",
                         help="Enabled once this lesson's task is done.")
    elif passed:
        following.caption("That was the last lesson.")
    st.markdown(lesson.body)
