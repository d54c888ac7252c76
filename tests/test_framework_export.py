"""Framework settings: what the exported values mean to the real SDK and LangChain types, and
what the export says does not carry over."""

from __future__ import annotations

import json

import pydantic
import pytest
from anthropic.types.beta import BetaClearToolUses20250919EditParam, BetaContextManagementConfigParam
from langchain.agents.middleware import ClearToolUsesEdit
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from playground import exports
from playground.compaction import Settings
from playground.framework_export import framework_settings
from playground.model import Conversation, Message, ToolCall, ToolResult, link
from playground.rules import Rules, load_rules
from playground.rulesets import observation_masking


def _run() -> Conversation:
    items: list = [Message(role="user", content="go")]
    for n, (tool, output) in enumerate([("Read", "a" * 500), ("Bash", "b" * 500), ("TodoWrite", "ok"),
                                        ("Read", "c" * 500)]):
        items += [ToolCall(call_id=f"c{n}", name=tool, arguments=json.dumps({"file_path": f"f{n}"})),
                  ToolResult(call_id=f"c{n}", content=output), Message(role="assistant", content="next")]
    return Conversation(items=link(items), format="anthropic", model="claude-sonnet-4-5")


RULES = load_rules({"tool_calls": [{"tool": "Write", "argument": "content", "replacement": "[saved]"}],
                    "tool_results": [{"tool": "Read", "template": "File content from {file_path}.", "min_tokens": 50},
                                     {"tool": "Bash", "template": "[output cleared]"}]})


def test_settings_are_valid_for_the_anthropic_sdk_and_langchain():
    found = framework_settings(_run(), RULES, Settings(threshold=30_000, keep_recent=2))
    assert set(found.anthropic) <= set(BetaContextManagementConfigParam.__annotations__)
    (edit,) = found.anthropic["edits"]
    assert set(edit) <= set(BetaClearToolUses20250919EditParam.__annotations__)  # no key the SDK does not know
    edit = pydantic.TypeAdapter(BetaClearToolUses20250919EditParam).validate_python(edit)
    assert edit["type"] == "clear_tool_uses_20250919"
    assert edit["trigger"] == {"type": "input_tokens", "value": 30_000}
    assert edit["keep"] == {"type": "tool_uses", "value": 2}
    assert edit["exclude_tools"] == ["TodoWrite"]  # used, but no rule clears it
    assert edit["clear_tool_inputs"] is True
    langchain = ClearToolUsesEdit(**found.langchain)
    assert (langchain.trigger, langchain.keep, list(langchain.exclude_tools)) == (30_000, 2, ["TodoWrite"])
    assert langchain.placeholder == "[cleared]"  # two different templates: no one placeholder says both
    lost = " ".join(found.lost)
    for words in ("per-tool references", "error guard", "not-processed guard", "min_tokens", "not smaller",
                  "Write.content"):
        assert words in lost


def test_a_shared_placeholder_carries_over_to_langchain_and_the_edit_clears_what_masking_would():
    conversation = _run()
    rules = load_rules({"tool_results": [{"tool": t, "template": "[cleared by policy]"}
                                         for t in ("Read", "Bash", "TodoWrite")]})
    found = framework_settings(conversation, rules, Settings(threshold=0, keep_recent=1))
    assert found.langchain["placeholder"] == "[cleared by policy]" and found.langchain["exclude_tools"] == []
    assert "clear_tool_inputs" not in found.anthropic["edits"][0]
    messages: list = [HumanMessage("go")]
    for item in conversation.items[1:]:
        if isinstance(item, ToolCall):
            messages.append(AIMessage("", tool_calls=[{"id": item.call_id, "name": item.name,
                                                       "args": json.loads(item.arguments)}]))
        elif isinstance(item, ToolResult):
            messages.append(ToolMessage(item.content, tool_call_id=item.call_id, name=item.name))
    ClearToolUsesEdit(**found.langchain).apply(messages, count_tokens=lambda m: 10**6)
    cleared = [m.content for m in messages if isinstance(m, ToolMessage)]
    assert cleared == ["[cleared by policy]"] * 3 + ["c" * 500]


@pytest.mark.parametrize("rules", [Rules(), load_rules({"tool_results": [{"tool": "Nope", "template": "x"}]})])
def test_nothing_to_express_when_no_result_is_cleared(rules):
    assert framework_settings(_run(), rules, Settings()) is None
    assert exports.framework_settings(_run(), rules, Settings()) is None


def test_downloads_and_snippets():
    conversation = _run()
    download = exports.framework_settings(conversation, observation_masking(conversation), Settings(keep_recent=3))
    data = json.loads(download.data)
    assert data["anthropic"]["betas"] == ["context-management-2025-06-27"]
    assert data["langchain"]["ClearToolUsesEdit"]["keep"] == 3 and "ClearToolUsesEdit(" in data["langchain"]["python"]
    found = framework_settings(conversation, observation_masking(conversation), Settings(keep_recent=3))
    namespace: dict = {}
    exec(found.langchain_snippet().replace("agent = create_agent(model, tools, middleware=[middleware])\n", ""),
         namespace)
    assert namespace["middleware"].edits[0].keep == 3
    assert "context_management=" in found.anthropic_snippet()
    compactor = exports.rules_compactor(observation_masking(conversation), Settings())
    assert compactor.name == "compactor.py" and "def compact(" in compactor.data
