"""What outlives a call is owned, not global: two engines (two browser sessions) share no state,
and the engine's modules keep no module-level caches of conversation data."""

from __future__ import annotations

import ast
from pathlib import Path

from playground.compaction import Settings
from playground.conversation import ToolCall
from playground.engine import Engine
from playground.rules.ruleset import book_rules

from .test_compaction import book_scenario

ENGINE = Path(__file__).resolve().parent.parent / "playground"


def test_two_engines_share_no_meter_and_no_decisions():
    from playground import formats

    conversation = formats.read(book_scenario())
    one, two = Engine(), Engine()
    one.compact(conversation, book_rules(), Settings(threshold=0))
    assert one.meter("gpt-4o") is not two.meter("gpt-4o")
    assert one.decisions is not two.decisions
    assert one.meter("gpt-4o") is one.meter("gpt-4o")  # an engine keeps its own across calls


def test_parsed_arguments_live_with_their_item():
    call = ToolCall(call_id="c1", name="read_file", arguments='{"path": "a.md"}')
    assert call.parsed_arguments() is call.parsed_arguments()  # parsed once per item
    other = ToolCall(call_id="c2", name="read_file", arguments='{"path": "a.md"}')
    assert other.parsed_arguments() == call.parsed_arguments()
    assert other.parsed_arguments() is not call.parsed_arguments()  # no cache shared between items


def test_no_module_level_cache_of_conversation_data():
    """A module-level lru_cache or dict filled at run time would be shared by every browser session of
    a server. Only what ships with the program and is the same for everyone may cache at module level:
    the vocabularies, the agents' policies catalogue, the price catalogue and the data files as shipped
    (read-only): the recall tool's definition, the native settings' words, the probe's question templates."""
    allowed = {("encodings.py", "get_encoding"), ("provenance.py", "read_provenance"), ("prices.py", "_snapshot"),
               ("prices.py", "_version"), ("prices.py", "_catalogue_table"), ("recalling.py", "_tool"),
               ("native.py", "_data"), ("questions.py", "templates")}
    found = []
    for path in ENGINE.rglob("*.py"):
        if "ui" in path.parts:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.FunctionDef):
                for decorator in node.decorator_list:
                    name = ast.unparse(decorator)
                    if "cache" in name and (path.name, node.name) not in allowed:
                        found.append(f"{path.name}:{node.name} @{name}")
    assert not found, found
