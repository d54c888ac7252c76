# ruff: noqa: F811
"""Hostile input and many visitors, in headless Chromium: twenty simultaneous sessions on the ~200k
preset each change the threshold and each settles with its own numbers (the time per session and
the server's memory per session are printed), what closed sessions held is reused by the next
twenty, one visitor's catastrophic error pattern leaves another's page responsive, and a file with
a lone surrogate is refused while the uploader goes on working."""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from pathlib import Path

import pytest

from playground.engine import Engine
from playground.workbench import presets

from .test_app import Numbers

# The app, browser and page fixtures of test_browser.py, imported under their own names (pytest finds a
# fixture by name).
from .test_browser import (  # noqa: F401
    IDLE,
    app_url,
    browser,
    idle,
    metric_value,
    open_tab,
    page,
    running_app,
    settings,
    settings_button,
    shot,
)
from .test_hostile_input import SURROGATES

pytestmark = pytest.mark.browser

SESSIONS = 20
LARGE = next(p for p in presets.list_presets() if p.key == "large-200k")
LARGE_BEFORE = Engine().count(LARGE.conversation, LARGE.model).total
WAIT = 900_000  # ms: a guard for a saturated machine (the issue saw page loads of 42–51 s), not a measure
TTL = 5  # seconds a closed session is kept for a reconnect (Streamlit's default is 120)


def rss_mb(pid: int) -> float:
    """The server's resident memory now."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


async def _session(browser, url: str, threshold: int, after: int) -> tuple[float, object]:
    """One visitor: open the page, choose the 200k preset, set ``threshold``, and wait until the
    page shows this session's own figures: the engine's "After" for that threshold, and that
    threshold on the meters. Returns the seconds it took and the context."""
    from playwright.async_api import expect

    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    page = await context.new_page()
    page.set_default_timeout(WAIT)
    started = time.monotonic()
    await page.goto(url, timeout=WAIT)
    await page.wait_for_selector(IDLE, timeout=WAIT)
    sidebar = page.get_by_test_id("stSidebar")
    await sidebar.get_by_test_id("stSelectbox").filter(has_text="Conversation").click(timeout=WAIT)
    await page.get_by_role("option", name=LARGE.title, exact=True).click(timeout=WAIT)
    await expect(metric_value(page, "Before")).to_have_text(f"{LARGE_BEFORE:,}", timeout=WAIT)  # its rerun is in
    await page.wait_for_selector(IDLE, timeout=WAIT)
    await settings_button(page).click(timeout=WAIT)  # the exact threshold is in the sidebar's Settings
    field = page.get_by_role("spinbutton", name="Exact threshold")
    await field.fill(str(threshold))
    await field.press("Enter")
    await expect(field).to_have_value(str(threshold), timeout=WAIT)
    await expect(metric_value(page, "After")).to_have_text(f"{after:,}", timeout=WAIT)
    await expect(page.get_by_text(f"threshold {threshold:,}", exact=True)).to_be_visible(timeout=WAIT)  # its own
    return time.monotonic() - started, context


async def _wave(url: str, expected: dict[int, int]) -> list[float]:
    """All sessions at once in one Chromium; each settles with its own numbers, then all close."""
    from playwright.async_api import async_playwright

    from .test_browser import ARGS, CHROMIUM

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        done = await asyncio.gather(*(_session(browser, url, t, after) for t, after in expected.items()))
        for _, context in done:
            await context.close()
        await browser.close()
    return [seconds for seconds, _ in done]


@pytest.mark.load
def test_twenty_sessions_change_thresholds_and_each_settles_with_its_own_numbers():
    thresholds = [100_000 + 7_000 * n for n in range(SESSIONS)]  # below and above the run's ~200k tokens
    expected = {t: Numbers(LARGE.conversation, LARGE.rules, t, LARGE.keep_recent, LARGE.model).tokens_after
                for t in thresholds}
    assert len(set(expected.values())) == 2, "some sessions compact, the others stay below their threshold"
    with running_app("--server.disconnectedSessionTTL", str(TTL), log_name="load-server.log") as (url, pid):
        asyncio.run(_wave(url, dict(list(expected.items())[:1])))  # warm up: presets, vocabularies, caches
        alone = asyncio.run(_wave(url, dict(list(expected.items())[1:2])))[0]
        start = rss_mb(pid)
        first = asyncio.run(_wave(url, expected))
        after_first = rss_mb(pid)
        time.sleep(TTL + 1)
        asyncio.run(_wave(url, dict(list(expected.items())[:1])))  # a disconnect: closed sessions past the TTL go
        second = asyncio.run(_wave(url, expected))
        after_second = rss_mb(pid)
    per_session = (after_first - start) / SESSIONS
    print(f"\n{SESSIONS} simultaneous sessions, 200k preset, threshold changed: time per session to settle "
          f"median {statistics.median(first):.1f} s, slowest {max(first):.1f} s (second wave: median "
          f"{statistics.median(second):.1f} s, slowest {max(second):.1f} s; one session alone: {alone:.1f} s)")
    print(f"server memory: {start:.0f} MB before, +{after_first - start:.0f} MB for {SESSIONS} sessions "
          f"({per_session:.1f} MB each), +{after_second - after_first:.0f} MB for the next {SESSIONS} after the "
          f"first closed")
    # What closed sessions held is reused: the second wave, as large as the first, grows the server by
    # less than half of what the first did.
    assert after_second - after_first < max(0.5 * (after_first - start), 20), (start, after_first, after_second)


LINES = "\n".join(f"line {n}: more of the file" for n in range(60))
RUN = {"messages": [{"role": "user", "content": "Read the files."},
                    *[message for n in range(3) for message in (
                        {"role": "assistant", "content": None, "tool_calls": [
                            {"id": f"c{n}", "type": "function",
                             "function": {"name": "read_file", "arguments": json.dumps({"path": f"f{n}.txt"})}}]},
                        {"role": "tool", "tool_call_id": f"c{n}", "content": "a" * 45 + "!\n" + LINES})],
                    {"role": "assistant", "content": "Read them."}]}
# (a+)+$ on a line of 45 a's and a "!": with Python's re, days of backtracking, and the GIL it held
# stopped every session on the server.
EVIL_RULES = {"tool_results": [{"tool": "read_file", "template": "File {path}. Re-read if needed."}],
              "error_patterns": [{"name": "evil", "pattern": "(a+)+$"}]}


def test_a_catastrophic_pattern_in_one_session_leaves_another_responsive():
    from playwright.sync_api import expect, sync_playwright

    from playground import formats
    from playground.rules.ruleset import load_rules

    from .test_browser import ARGS, CHROMIUM

    model = presets.list_presets()[0].model  # a pasted run without a model keeps the page's
    conversation, rules = formats.read(RUN), load_rules(EVIL_RULES)
    threshold = Numbers(conversation, rules, 10**9, 0, model).tokens_before - 1
    wanted = Numbers(conversation, rules, threshold, 0, model)
    assert wanted.stage == "compacted"
    with running_app(log_name="pattern-server.log") as (url, _), sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        visitor, other = (browser.new_context(viewport={"width": 1400, "height": 1100}).new_page() for _ in "ab")
        for page in (visitor, other):
            page.goto(url)
            page.wait_for_selector(IDLE, timeout=60_000)
        open_tab(visitor, "Bring one in")
        visitor.get_by_role("textbox", name="Paste a conversation (JSON)").fill(json.dumps(RUN))
        visitor.get_by_role("button", name="Load pasted JSON").click()
        expect(visitor.get_by_text("Now showing: Your conversation (pasted")).to_be_visible(timeout=60_000)
        with settings(visitor) as body:
            field = body.get_by_role("spinbutton", name="Exact threshold")
            field.fill(str(threshold))
            field.press("Enter")
            expect(field).to_have_value(str(threshold), timeout=60_000)
        open_tab(visitor, "Presets and patterns")
        visitor.get_by_text("Import or export rules").click()
        visitor.get_by_role("textbox", name="…or paste rules JSON").fill(json.dumps(EVIL_RULES))
        visitor.get_by_role("button", name="Import pasted rules").click()  # the pattern runs on every result
        settings_button(other).click()
        field = other.get_by_role("spinbutton", name="Exact threshold")
        field.fill("9999999")
        field.press("Enter")
        # One rerun takes well under a second here: a generous guard, far below what re needed.
        expect(other.get_by_text("Below the threshold: nothing changes")).to_be_visible(timeout=60_000)
        expect(metric_value(visitor, "After")).to_have_text(f"{wanted.tokens_after:,}", timeout=60_000)
        expect(visitor.get_by_text("Compacted: now below the threshold")).to_be_visible()
        shot(visitor, "e2e-catastrophic-pattern")
        shot(other, "e2e-other-session-responsive")
        browser.close()


def test_a_file_with_a_lone_surrogate_is_refused_and_the_uploader_goes_on(page, tmp_path):
    """Before: "Something went wrong (UnicodeEncodeError)", the uploader gone, the next two uploads lost."""
    from playwright.sync_api import expect

    cut, good, better = tmp_path / "cut.json", tmp_path / "good.json", tmp_path / "better.json"
    cut.write_text(SURROGATES)
    for path, text in ((good, "first"), (better, "second")):
        path.write_text(json.dumps({"messages": [{"role": "user", "content": f"the {text} upload"}]}))
    open_tab(page, "Bring one in")
    uploader = page.get_by_test_id("stFileUploader").filter(has_text="upload a file").locator("input[type=file]")
    uploader.set_input_files(str(cut))
    refused = page.get_by_text("cut.json: messages[0].content: character 4 is half of a UTF-16 pair")
    expect(refused).to_be_visible(timeout=60_000)
    idle(page)
    refused.scroll_into_view_if_needed()
    shot(page, "e2e-surrogate-refused")
    assert not page.get_by_text("Something went wrong").count()
    for path in (good, better):
        uploader.set_input_files(str(path))
        expect(page.get_by_text(f"Now showing: {path.name}")).to_be_visible(timeout=60_000)
        idle(page)
