"""The public API: ``import playground as pg`` gives every name a library user needs. The README's
and docs/library.md's examples run as written, their outputs checked, in tests/test_docs.py."""

from __future__ import annotations

from pathlib import Path

import playground as pg


def test_every_public_name_is_there_and_nothing_private_is_listed() -> None:
    assert all(hasattr(pg, name) for name in pg.__all__)
    assert not [name for name in pg.__all__ if name.startswith("_")]
    assert {"Engine", "Settings", "Rules", "compact", "optimize", "replay", "compare", "POLICIES", "InputError",
            "load", "loads", "dumps", "RULESETS", "ruleset"} <= set(pg.__all__)


def test_a_bad_input_raises_the_one_exception_type_with_its_place(tmp_path: Path) -> None:
    broken = tmp_path / "run.json"
    broken.write_text('{"messages": [{"role": "tool", "tool_call_id": "x", "content": "?"}]}')
    try:
        pg.load(broken)
    except pg.InputError as exc:
        assert "messages[0]" in str(exc)
    else:
        raise AssertionError("a result with no call was read without complaint")


def test_a_rule_set_makes_its_rules_by_name_and_an_unknown_name_lists_the_known_ones() -> None:
    conversation = pg.load_preset(Path(__file__).resolve().parent.parent / "presets" / "coding-agent.json").conversation
    assert pg.ruleset("book", conversation) == pg.book_rules() == pg.RULESETS["book"].make(conversation)
    assert pg.ruleset("none", conversation) == pg.Rules()
    try:
        pg.ruleset("nope", conversation, where="rules")
    except pg.InputError as exc:
        assert exc.where == "rules" and all(name in str(exc) for name in pg.RULESETS)
    else:
        raise AssertionError("an unknown rule set made rules")
