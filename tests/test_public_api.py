"""The public API: ``import playground as pg`` gives every name a library user needs, and the
README's library examples run as written."""

from __future__ import annotations

import contextlib
import io
import os
import re
from pathlib import Path

import playground as pg

ROOT = Path(__file__).resolve().parent.parent


def _library_examples() -> list[str]:
    """The Python blocks of the README's library section, in order."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## As a library\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, flags=re.S)


def test_every_public_name_is_there_and_nothing_private_is_listed() -> None:
    assert all(hasattr(pg, name) for name in pg.__all__)
    assert not [name for name in pg.__all__ if name.startswith("_")]
    assert {"Engine", "Settings", "Rules", "compact", "optimize", "replay", "compare", "POLICIES", "InputError",
            "load", "loads", "dumps", "RULESETS"} <= set(pg.__all__)


def test_the_readme_library_examples_run_as_written() -> None:
    examples = _library_examples()
    assert len(examples) == 2, "the section's two examples"
    namespace: dict = {}
    out = io.StringIO()
    cwd = os.getcwd()
    os.chdir(ROOT)  # the example names a preset by its path in the project
    try:
        with contextlib.redirect_stdout(out):
            for example in examples:
                exec(compile(example, "README.md", "exec"), namespace)
    finally:
        os.chdir(cwd)
    stages = dict(eval(out.getvalue().splitlines()[0]))
    assert list(stages) == ["Before", "After compaction", "After summarization"]
    assert stages["Before"] > stages["After compaction"] >= stages["After summarization"]
    totals = namespace["run"].totals  # masking sends fewer tokens (on this small run it costs more: a broken cache)
    assert totals.tokens_with < totals.tokens_without and totals.cached_tokens_with < totals.cached_tokens_without


def test_a_bad_input_raises_the_one_exception_type_with_its_place(tmp_path: Path) -> None:
    broken = tmp_path / "run.json"
    broken.write_text('{"messages": [{"role": "tool", "tool_call_id": "x", "content": "?"}]}')
    try:
        pg.load(broken)
    except pg.InputError as exc:
        assert "messages[0]" in str(exc)
    else:
        raise AssertionError("a result with no call was read without complaint")
