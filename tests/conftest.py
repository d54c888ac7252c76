"""Shared test setup: where the shared fixtures live, and a skip when a clone has none."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "fixtures"
TRACES = SHARED / "traces"
TOKEN_COUNTS = SHARED / "token-counts"

settings.register_profile("default", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("default")


def shared(path: Path) -> Path:
    """A file from ../shared/fixtures, or a skip that says why (a user's clone has none)."""
    if not path.exists():
        pytest.skip(f"shared fixtures not present: {path} (they come with the development checkout)")
    return path


def load_shared(path: Path) -> Any:
    return json.loads(shared(path).read_text())


@pytest.fixture(params=["sweagent_marshmallow-1867_function_calling.openai.json",
                        "invariant_explorer_webarena_trace2.openai.json",
                        "miniswe_pr_astropy-12907.openai.json"])
def trace(request: pytest.FixtureRequest) -> Any:
    """Each real agent trace, as parsed JSON."""
    return load_shared(TRACES / request.param)
