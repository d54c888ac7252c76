"""The lessons on the page: a slim banner above the tabs with the lesson being taken — its task,
its live check, *Show me* and *Next lesson* — wherever the learner is, and the Lessons tab, which
opens on that lesson with its text, or on any other one to start.

The lessons are data (``presets/lessons/``); whether one is done is ``lessons.check`` on what
``lessons.observe`` reads from the page's result. The lesson being taken and the one the tab shows
live in session state, not in a widget of the tab: Streamlit forgets a widget's value in a run that
does not draw it, so a lesson used to fall back to lesson 1 when its task sent the learner to
another tab. Starting a lesson and *Show me* change the page's state in button callbacks, which run
before the widgets are drawn.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from ..compaction import Settings
from ..conversation import Conversation
from ..engine import Optimized
from ..errors import InputError
from ..rules import Rules
from ..summarize import SummarySettings
from ..workbench import lessons
from . import state, tabs

CHANGED = {"threshold": "threshold", "keep_recent": "keep_recent", "compact_errors": "errors", "rules": "rules"}


@st.cache_resource(show_spinner=False)
def _all() -> list[lessons.Lesson]:
    return lessons.load_lessons(presets=set(state.all_presets()))


def apply_changes(changes: dict[str, Any], origin: str) -> None:
    """A lesson's state changes (``lessons.applied``), written to the page's own session state;
    ``origin`` is what the settings caption says they came from."""
    current = lessons.LessonSetup(Rules(), state.settings(), bool(st.session_state.get(state.SUMMARIZE_ON, True)))
    key = state.get(state.PRESET)
    preset_rules = state.all_presets()[key].rules if key in state.all_presets() else Rules()
    done = lessons.applied(changes, current, st.session_state[state.CONVERSATION], preset_rules,
                           state.engine().meter(state.get(state.MODEL)))
    state.set_threshold(done.settings.threshold)
    st.session_state[state.KEEP_RECENT] = done.settings.keep_recent
    st.session_state[state.COMPACT_ERRORS] = done.settings.compact_errors
    st.session_state[state.SUMMARIZE_ON] = done.summarize
    if "rules" in changes:  # else the tables keep the learner's own edits
        state.set_rules(done.rules)
    state.set_origins([CHANGED[name] for name in changes if name in CHANGED], origin)


def _start(key: str) -> None:
    """Start a lesson and open its tab, so its explanation is in view (*Next lesson* is pressed in the
    banner, from whichever tab the last task was done in)."""
    lesson = _by_key(key)
    state.apply_preset(lesson.preset)
    apply_changes(dict(lesson.start), f"the lesson “{lesson.title}”")
    st.session_state[state.LESSON] = key
    st.session_state[state.LESSON_SHOWN] = key
    st.session_state.pop(state.LESSON_PASSED, None)  # a lesson started again is done when its check passes in this take
    tabs.open_tab("Lessons")


def _show_me(key: str) -> None:
    lesson = _by_key(key)
    apply_changes(lessons.show_me(lesson), f"*Show me* in the lesson “{lesson.title}”")


def _end() -> None:
    st.session_state.pop(state.LESSON, None)


def _picked() -> None:
    st.session_state[state.LESSON_SHOWN] = st.session_state[state.LESSON_PICK]


def _by_key(key: str) -> lessons.Lesson:
    return next(lesson for lesson in _all() if lesson.key == key)


def _label(lesson: lessons.Lesson, number: int) -> str:
    """A lesson's name in the picker; it never changes during a session (a picker whose labels
    change is a new widget to Streamlit, and would lose its place)."""
    return f"{number}. {lesson.title}"


def _lessons() -> list[lessons.Lesson] | None:
    """Every lesson, or None (with the reason on the page) when there are none to show."""
    try:
        every = _all()
    except InputError as exc:  # a broken lesson file: say which and where, keep the page
        st.error(f"The lessons could not be read: {exc}", icon=":material/error:")
        return None
    if not every:
        st.info("No lessons found in presets/lessons/.")
        return None
    return every


def banner(conversation: Conversation, rules: Rules, settings: Settings, summary: SummarySettings | None,
           optimized: Optimized) -> None:
    """The lesson being taken, above the tabs: its task and whether the page shows it done (checked
    on every run, so it completes from whichever tab the learner did it in), *Show me*, *Next lesson*."""
    key = st.session_state.get(state.LESSON)
    if key is None:
        return
    try:
        every = _all()
        lesson = _by_key(key)
    except (InputError, StopIteration):  # the lessons changed under a running session: nothing to show
        st.session_state.pop(state.LESSON, None)
        return
    keys = [each.key for each in every]
    number = keys.index(key) + 1
    observed = lessons.observe(conversation, rules, settings, optimized)
    if lessons.needs_run(lesson):
        observed |= lessons.observe_run(conversation, rules, settings, summary, state.engine().meter(state.get(
            state.MODEL)))
    holds = lessons.check(lesson, observed)
    if holds:
        st.session_state.setdefault(state.LESSONS_DONE, set()).add(key)
        st.session_state[state.LESSON_PASSED] = key
    passed = st.session_state.get(state.LESSON_PASSED) == key  # a passed check stays passed
    with st.container(border=True, key=state.LESSON_BANNER):
        text, show, following, close = st.columns([6, 1.2, 1.4, 0.9], vertical_alignment="center")
        where = f"Lesson {number} of {len(keys)}, “{lesson.title}”"
        if passed:
            now = "" if holds else " The page no longer shows it, as the lesson's last step asks: it stays done."
            text.success(f"Done: {lesson.task} ({where}.){now}", icon=":material/check_circle:")
        else:
            text.info(f"**{where}.** Your task: {lesson.task}", icon=":material/touch_app:")
        show.button("Show me", key=state.LESSON_SHOW_ME, on_click=_show_me, args=(key,), disabled=passed,
                    width="stretch", icon=":material/visibility:",
                    help="Does the task for you, so you can see what changes.")
        later = keys[number:]
        if later:
            following.button("Next lesson", key=state.LESSON_NEXT, type="primary", disabled=not passed, on_click=_start,
                             args=(later[0],), width="stretch", icon=":material/arrow_forward:",
                             help="Enabled once this lesson's task is done.")
        else:
            following.caption("That was the last lesson." if passed else "The last lesson.")
        close.button("End", key=state.LESSON_END, on_click=_end, width="stretch", icon=":material/close:",
                     help="Leave the lesson; the page keeps its settings. The Lessons tab starts any lesson again.")


def panel() -> None:
    """The Lessons tab: the picker (on the lesson being taken), its text, and the progress."""
    every = _lessons()
    if every is None:
        return
    keys = [lesson.key for lesson in every]
    st.session_state.setdefault(state.LESSON_SHOWN, st.session_state.get(state.LESSON, keys[0]))
    shown = st.session_state[state.LESSON_SHOWN]
    st.session_state[state.LESSON_PICK] = shown if shown in keys else keys[0]
    done: set[str] = st.session_state.setdefault(state.LESSONS_DONE, set())
    numbers = {key: index + 1 for index, key in enumerate(keys)}
    key = st.selectbox("Lesson", keys, key=state.LESSON_PICK, format_func=lambda k: _label(_by_key(k), numbers[k]),
                       on_change=_picked,
                       help="Each lesson takes about two minutes on its own preset and asks you to do one thing.")
    lesson = _by_key(key)
    st.subheader(lesson.title)
    if st.session_state.get(state.LESSON) == key:
        st.caption("Your task, its check, *Show me* and *Next lesson* stay in the banner above the tabs while you "
                   "work in the sidebar or another tab. Loading another conversation ends the lesson.")
        st.markdown(lesson.body)
    else:
        st.markdown(f"**Your task:** {lesson.task}")
        title = state.all_presets()[lesson.preset].title
        st.caption(f"About {lesson.minutes} minutes. Starting loads the preset “{title}” with this lesson's "
                   "settings: the conversation, rules and settings on the page are replaced.")
        st.button("Start this lesson", key=state.LESSON_START, type="primary", on_click=_start, args=(key,),
                  icon=":material/play_arrow:")
    finished = [numbers[k] for k in keys if k in done]
    st.progress(len(finished) / len(keys), text=f"{len(finished)} of {len(keys)} lessons done"
                + (f": {', '.join(map(str, finished))}" if finished else ""))
