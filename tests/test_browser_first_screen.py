# ruff: noqa: F811
"""The first screen shows the idea: at 1400×900, on the default preset, the meters, a rule table and
the before / after table are in the first viewport together, with few enough controls and words that
a newcomer reads it at a glance (counted as a person sees them: the sidebar included)."""

from __future__ import annotations

import pytest

# The app and browser fixtures of test_browser.py, under their own names (pytest finds a fixture by name).
from .test_browser import app_url, browser, idle, shot  # noqa: F401

pytestmark = pytest.mark.browser

WIDTH, HEIGHT = 1400, 900
MAX_CONTROLS, MAX_WORDS = 15, 200
# What a person can operate: Streamlit's help icons and a select's "open" arrow are buttons too, and a
# table's toolbar counts while it is laid out, hover or not.
CONTROLS = ("input,button,textarea,select,[role=tab],[role=combobox],[role=slider],[role=switch],"
            "[role=checkbox]")
COUNT = """(selector) => { const inView = r => r.width > 0 && r.height > 0 && r.top < innerHeight && r.bottom > 0;
  let controls = 0;
  for (const e of document.querySelectorAll(selector)) if (inView(e.getBoundingClientRect())) controls++;
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT); let words = 0, node;
  while ((node = walker.nextNode())) { const text = node.textContent.trim(); if (!text) continue;
    const range = document.createRange(); range.selectNodeContents(node);
    if (inView(range.getBoundingClientRect()) && getComputedStyle(node.parentElement).visibility != 'hidden')
      words += text.split(/\\s+/).length; }
  return [controls, words]; }"""


@pytest.fixture
def first_screen(browser, app_url):
    context = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT})
    page = context.new_page()
    page.goto(app_url)
    idle(page)
    page.locator("table.cp-rows").wait_for()
    _settled(page)
    yield page
    context.close()


def _settled(page) -> None:
    """Wait until the rows stop moving: the rule tables take their height only once their grids are drawn,
    and until then more of the rows is in the first screen than a person ever sees there."""
    page.locator(".st-key-rule_tables [data-testid='stDataFrame'] canvas").first.wait_for()
    page.wait_for_function("""() => { const y = document.querySelector('table.cp-rows').getBoundingClientRect().top;
        const same = window.__rowsTop === y; window.__rowsTop = y; return same; }""", polling=500, timeout=30_000)


def _top_in_view(locator) -> float:
    box = locator.bounding_box()
    assert box is not None and box["width"] > 0, "drawn and laid out"
    assert 0 <= box["y"] < HEIGHT, f"its top ({box['y']:.0f}) is in the first {HEIGHT}px"
    return box["y"]


def test_the_meters_a_rule_table_and_before_after_share_the_first_screen(first_screen):
    page = first_screen
    meters = _top_in_view(page.locator(".cp-meter").first)
    _top_in_view(page.get_by_test_id("stMetric").first)
    tables = _top_in_view(page.locator(".st-key-rule_tables [data-testid='stDataFrame']").first)
    rows = _top_in_view(page.locator("table.cp-rows"))
    assert meters < tables < rows  # in the order the idea reads: numbers, rules, their effect
    shot(page, "first-screen")


def test_the_first_screen_holds_at_most_15_controls_and_200_words(first_screen):
    controls, words = first_screen.evaluate(COUNT, CONTROLS)
    assert controls <= MAX_CONTROLS, f"{controls} controls in the first screen"
    assert words <= MAX_WORDS, f"{words} words in the first screen"
