"""The public API: ``import playground as pg`` gives every name a library user needs. The README's
and docs/library.md's examples run as written, their outputs checked, in tests/test_docs.py."""

from __future__ import annotations

from pathlib import Path

import playground as pg


def test_every_public_name_is_there_and_nothing_private_is_listed() -> None:
    assert all(hasattr(pg, name) for name in pg.__all__)
    assert not [name for name in pg.__all__ if name.startswith("_")]
    assert {"Engine", "Settings", "Rules", "compact", "optimize", "replay", "compare", "POLICIES", "InputError",
            "load", "loads", "dumps", "RULESETS"} <= set(pg.__all__)


def test_a_bad_input_raises_the_one_exception_type_with_its_place(tmp_path: Path) -> None:
    broken = tmp_path / "run.json"
    broken.write_text('{"messages": [{"role": "tool", "tool_call_id": "x", "content": "?"}]}')
    try:
        pg.load(broken)
    except pg.InputError as exc:
        assert "messages[0]" in str(exc)
    else:
        raise AssertionError("a result with no call was read without complaint")
