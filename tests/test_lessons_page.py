"""Every lesson on the page, end to end through its *Show me* button; lesson 1 also by hand."""

from __future__ import annotations

import re

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from playground.workbench import lessons
from playground.workbench.presets import list_presets

from .conftest import ROOT, show_tab

PRESETS = {preset.key: preset for preset in list_presets()}
LESSONS = lessons.load_lessons(presets=set(PRESETS))


def healthy(at: AppTest) -> AppTest:
    assert not at.exception, at.exception
    assert not [e.value for e in at.error if "Something went wrong" in e.value]
    return at


def open_lessons() -> AppTest:
    st.cache_data.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    show_tab(at, "Lessons")
    return healthy(at.run())


def start(lesson: lessons.Lesson) -> AppTest:
    at = open_lessons()
    at = healthy(at.selectbox(key="lesson_pick").set_value(lesson.key).run())
    return healthy(at.button(key="lesson_start").click().run())


def done(at: AppTest) -> bool:
    return any(s.value.startswith("Done:") for s in at.success)


SHARES = {"a quarter": 25.0, "a third": 33.3, "half": 50.0}


def quoted_shares(text: str) -> list[float]:
    """The shares a lesson's text quotes: "5%", "about a quarter"."""
    found = [float(number) for number in re.findall(r"(\d+(?:\.\d+)?)\s*%", text)]
    return found + [value for words, value in SHARES.items() if re.search(rf"\b{words}\b", text)]


def shown_shares(at: AppTest) -> list[float]:
    """The percentages the page shows in its metrics and captions (not the lesson's own text)."""
    texts = [m.value for m in at.metric] + [c.value for c in at.caption]
    return [float(number) for text in texts for number in re.findall(r"(\d+(?:\.\d+)?)%", text)]


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.key)
def test_every_lesson_through_show_me(lesson: lessons.Lesson):
    at = start(lesson)
    assert at.session_state["preset"] == lesson.preset
    assert [i.value for i in at.info if lesson.task in i.value] and not done(at)
    following = [b for b in at.button if b.key == "lesson_next"]
    assert all(button.disabled for button in following)
    shown = shown_shares(at)
    at = healthy(at.button(key="lesson_show_me").click().run())
    assert done(at), [i.value for i in at.info]
    assert all(not b.disabled for b in at.button if b.key == "lesson_next")
    assert lesson.key in at.session_state["lessons_done"]
    shown += shown_shares(at)
    for share in quoted_shares(lesson.body):  # a figure the text quotes is one the learner sees
        assert any(abs(share - figure) <= 1 for figure in shown), (share, sorted(set(shown)))


def test_lesson_one_by_hand_then_next():
    first, second = LESSONS[0], LESSONS[1]
    at = start(first)
    assert not done(at)
    at = healthy(at.number_input(key="threshold").set_value(7_000).run())
    assert done(at)
    at = healthy(at.number_input(key="threshold").set_value(9_000).run())
    # back above the request, as the lesson's last line asks: a passed check stays passed
    assert done(at) and not at.button(key="lesson_next").disabled
    assert [s for s in at.success if "it stays done" in s.value]
    at = healthy(at.button(key="lesson_next").click().run())
    assert at.session_state["lesson_pick"] == second.key and at.session_state["preset"] == second.preset
    assert not done(at)
    assert [p for p in at.get("progress") if "1 of" in p.proto.text]


def test_next_lesson_opens_the_lessons_tab_from_wherever_the_learner_was():
    """The banner's *Next lesson* is pressed on whatever tab the task was done in; the next lesson's
    explanation is on the Lessons tab, so that tab opens (its text is drawn only while it is open)."""
    first, second = LESSONS[0], LESSONS[1]
    at = healthy(show_tab(start(first), "Run").run())
    at = healthy(at.number_input(key="threshold").set_value(7_000).run())
    at = healthy(at.button(key="lesson_next").click().run())
    assert (at.session_state["tab"], at.session_state["tab_learn"]) == ("Learn", "Lessons")
    assert [m for m in at.markdown if m.value == second.body]  # the explanation, not only the banner


def test_lesson_four_stays_done_when_the_box_is_unticked_again():
    lesson = next(lesson for lesson in LESSONS if lesson.key.startswith("04-"))
    at = start(lesson)
    assert not done(at)
    at = healthy(at.sidebar.checkbox(key="compact_errors").check().run())
    assert done(at) and not at.button(key="lesson_next").disabled
    at = healthy(at.sidebar.checkbox(key="compact_errors").uncheck().run())  # "Then untick it: errors stay."
    assert done(at) and not at.button(key="lesson_next").disabled
    assert lesson.key in at.session_state["lessons_done"]


def test_the_prompt_cache_lesson_sends_the_learner_to_the_run_view_which_is_there():
    lesson = next(lesson for lesson in LESSONS if lesson.key.startswith("05-"))
    at = start(lesson)
    assert [m.value for m in at.markdown if "Open the **Run** view" in m.value]
    show_tab(at, "Run")
    at = healthy(at.run())
    assert [m for m in at.metric if m.label == "Calls"]  # the view the lesson names draws for its preset
    assert [s.key for s in at.slider if s.key == "replay_call"]
