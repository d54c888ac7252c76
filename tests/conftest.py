"""Shared test setup: where the shared fixtures live, and a skip when a clone has none (a failure
in CI, where they are always present: ``.ci/run`` sets PLAYGROUND_REQUIRE_FIXTURES=1)."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "fixtures"
TRACES = SHARED / "traces"
TOKEN_COUNTS = SHARED / "token-counts"

settings.register_profile("default", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("long", deadline=None, max_examples=1500, suppress_health_check=[HealthCheck.too_slow])
# PLAYGROUND_HYPOTHESIS=long tries 1,500 examples per property (CI found a reused-call-id case at 100)
settings.load_profile(os.environ.get("PLAYGROUND_HYPOTHESIS", "default"))


REQUIRE_FIXTURES = "PLAYGROUND_REQUIRE_FIXTURES"


def missing_fixture(path: Path, environ: Mapping[str, str] = os.environ) -> tuple[str, str] | None:
    """What to do about a shared fixture: None when it is there; else ("skip", why) in a user's
    clone, which has none, or ("fail", why) in CI, which always has them, so a moved or renamed
    fixture cannot turn its tests into silent skips."""
    if path.exists():
        return None
    if environ.get(REQUIRE_FIXTURES) == "1":
        return "fail", f"shared fixture missing: {path} ({REQUIRE_FIXTURES}=1: CI always has ../shared/fixtures)"
    return "skip", f"shared fixtures not present: {path} (they come with the development checkout)"


def shared(path: Path) -> Path:
    """A file from ../shared/fixtures, or a skip that says why (a failure when CI requires them)."""
    verdict = missing_fixture(path)
    if verdict is not None:
        action, why = verdict
        (pytest.fail if action == "fail" else pytest.skip)(why)
    return path


def load_shared(path: Path) -> Any:
    return json.loads(shared(path).read_text())


@pytest.fixture(params=["sweagent_marshmallow-1867_function_calling.openai.json",
                        "invariant_explorer_webarena_trace2.openai.json",
                        "miniswe_pr_astropy-12907.openai.json"])
def trace(request: pytest.FixtureRequest) -> Any:
    """Each real agent trace, as parsed JSON."""
    return load_shared(TRACES / request.param)


@pytest.fixture
def book_file(tmp_path: Path) -> Path:
    """The book's scenario as a Chat Completions request file, for the command-line tests."""
    from .test_compaction import book_scenario  # here, not at the top: test_compaction imports conftest

    path = tmp_path / "book.json"
    path.write_text(json.dumps(book_scenario()))
    return path


@pytest.fixture
def run_file(tmp_path: Path) -> Path:
    """A long run with tool calls (test_summarize's), as a request file for the command-line tests."""
    from .test_summarize import long_run  # here, not at the top: conftest loads before the test modules

    path = tmp_path / "run.json"
    path.write_text(json.dumps(long_run()))
    return path


def show_tab(at, tab: str):
    """Open the page's tab called ``tab`` on the AppTest ``at``'s next run: a top tab, or an inner one
    with its top tab (the page's tabs nest: ``playground.ui.tabs.LAYOUT``)."""
    from playground.ui import tabs  # the page's modules import Streamlit: only for the tests that drive it

    for key, value in tabs.path(tab).items():
        at.session_state[key] = value
    return at


BROWSER_RERUNS = 2


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A browser test that fails runs again, up to twice: the page's server, Chromium and the test share
    the machine's two cores, and a wait of the harness that loses a race to a slow rerun is not the page's
    fault. A rerun is no silent pass: pytest names each in its summary (``R`` and "N rerun")."""
    for item in items:
        if item.get_closest_marker("browser") is not None and item.get_closest_marker("flaky") is None:
            item.add_marker(pytest.mark.flaky(reruns=BROWSER_RERUNS, reruns_delay=2))
