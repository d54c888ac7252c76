"""The Run view in a real browser: its chart is drawn (Vega-Lite renders a canvas or SVG), and a
screenshot of it goes to artifacts/ (ignored by git)."""

from __future__ import annotations

import pytest

from .test_browser import ARTIFACTS, app_url, browser, idle, open_tab, opened  # noqa: F401  (fixtures used by name)

pytestmark = pytest.mark.browser


@pytest.fixture
def page(browser, app_url):  # noqa: F811
    yield from opened(browser, app_url, height=1400)  # taller: the Run view's first chart below its controls


def test_run_view_draws_the_per_call_chart(page):
    from playwright.sync_api import expect

    open_tab(page, "Run")
    idle(page)
    chart = page.get_by_test_id("stVegaLiteChart").first
    expect(chart).to_be_visible(timeout=30_000)
    expect(chart.locator("canvas, svg").first).to_be_visible(timeout=30_000)
    expect(page.get_by_text("Prompt tokens of every call").first).to_be_visible()
    box = chart.bounding_box()
    assert box is not None and box["width"] > 300 and box["height"] > 150
    ARTIFACTS.mkdir(exist_ok=True)
    chart.scroll_into_view_if_needed()
    chart.screenshot(path=str(ARTIFACTS / "e2e-run-chart.png"))
    assert (ARTIFACTS / "e2e-run-chart.png").stat().st_size > 5_000


def test_a_call_chosen_in_the_run_view_shows_in_before_after(page):
    from playwright.sync_api import expect

    open_tab(page, "Run")
    idle(page)
    # by its name: the Run panel is drawn by the rerun the tab's click starts, which `idle` can miss
    slider = page.get_by_role("slider", name="Call shown in Before / after")
    expect(slider).to_be_visible(timeout=60_000)
    slider.scroll_into_view_if_needed()
    slider.focus()
    page.keyboard.press("ArrowLeft")  # from the last call to the one before it
    idle(page)
    expect(page.get_by_text("The Before / after tab shows this call's request.")).to_be_visible()
    open_tab(page, "Before / after")
    idle(page)
    heading = page.get_by_text("Showing call", exact=False).first
    expect(heading).to_be_visible()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "e2e-call-before-after.png"))
    rows = page.locator("table.cp-rows tbody tr")
    chosen = rows.count()
    page.get_by_role("button", name="Show the whole conversation").click()
    idle(page)
    expect(page.get_by_text("Showing call", exact=False)).to_have_count(0)
    assert 0 < chosen < rows.count()
