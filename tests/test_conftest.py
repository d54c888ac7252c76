"""The shared-fixture rule: a user's clone skips with a reason, CI fails."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from .conftest import REQUIRE_FIXTURES, ROOT, SHARED, missing_fixture


def test_a_present_fixture_is_used(tmp_path: Path):
    present = tmp_path / "trace.json"
    present.write_text("{}")
    assert missing_fixture(present, {REQUIRE_FIXTURES: "1"}) is None


def test_a_missing_fixture_skips_in_a_clone_and_fails_in_ci(tmp_path: Path):
    absent = tmp_path / "nowhere.json"
    action, why = missing_fixture(absent, {})
    assert action == "skip" and str(absent) in why
    assert missing_fixture(absent, {REQUIRE_FIXTURES: "0"})[0] == "skip"
    action, why = missing_fixture(absent, {REQUIRE_FIXTURES: "1"})
    assert action == "fail" and str(absent) in why


def test_ci_requires_the_fixtures_and_runs_the_readme_command():
    lines = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()
             if line.strip() and not line.startswith("#")]
    assert f"export {REQUIRE_FIXTURES}=1" in lines and lines[-1] == "exec scripts/test"
    assert "python3 scripts/check_runtime.py" in lines  # the install a person gets, before the tests
    assert lines.index(f"export {REQUIRE_FIXTURES}=1") < lines.index("exec scripts/test")


def test_pytest_fails_on_a_missing_fixture_only_when_required(tmp_path: Path):
    """A real pytest run of a test that asks for a fixture that is not there."""
    (tmp_path / "test_probe.py").write_text(
        "from tests.conftest import SHARED, shared\n\n"
        "def test_probe():\n"
        "    shared(SHARED / 'no-such-fixture.json')\n")

    def run(environment: dict[str, str]) -> str:
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider",
                               str(tmp_path / "test_probe.py"), "--rootdir", str(ROOT)],
                              check=False, cwd=ROOT, capture_output=True, text=True,
                              env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), **environment})
        return done.stdout

    clone = run({})
    assert "1 skipped" in clone and "shared fixtures not present" in clone
    required = run({REQUIRE_FIXTURES: "1"})
    assert "1 failed" in required and "shared fixture missing" in required and str(SHARED) in required
