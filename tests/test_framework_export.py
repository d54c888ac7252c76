"""Framework settings: what the exported values mean to the real SDK and LangChain types, and
what the export says does not carry over."""

from __future__ import annotations

import json

import pydantic
import pytest
from anthropic.types.beta import BetaClearToolUses20250919EditParam, BetaContextManagementConfigParam
from langchain.agents.middleware import ClearToolUsesEdit
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from playground.compaction import Settings, compact
from playground.conversation import Conversation, Message, ToolCall, ToolResult, link
from playground.export import exports
from playground.export.framework import framework_settings
from playground.rules.ruleset import Rules, load_rules
from playground.tune.rulesets import observation_masking


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
    assert edit["keep"] == {"type": "tool_uses", "value": 3}  # keep_recent 2 + the one unread use a request ends in
    assert edit["exclude_tools"] == ["TodoWrite"]  # used, but no rule clears it
    assert edit["clear_tool_inputs"] is True
    langchain = ClearToolUsesEdit(**found.langchain)
    assert (langchain.trigger, langchain.keep, list(langchain.exclude_tools)) == (30_000, 3, ["TodoWrite"])
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
    assert cleared == ["[cleared by policy]"] * 2 + ["ok", "c" * 500]  # keep 2: keep_recent 1 and the unread one


def _langchain(items) -> tuple[list, dict[int, int]]:
    """LangChain messages for a request (one AIMessage per assistant turn), and for each
    ToolMessage's index the position of our result."""
    messages: list = []
    results: dict[int, int] = {}
    for position, item in enumerate(items):
        if isinstance(item, ToolCall):
            if not isinstance(messages[-1], AIMessage):
                messages.append(AIMessage(""))
            messages[-1].tool_calls.append({"id": item.call_id, "name": item.name, "args": json.loads(item.arguments),
                                            "type": "tool_call"})
        elif isinstance(item, ToolResult):
            results[len(messages)] = position
            messages.append(ToolMessage(item.content, tool_call_id=item.call_id, name=item.name))
        else:
            messages.append(AIMessage(item.content) if item.role == "assistant" else HumanMessage(item.content))
    return messages, results


def _parallel_run() -> Conversation:
    """Turns of one call and one of two calls (parallel), each result 500 characters."""
    items: list = [Message(role="user", content="go")]
    for turn, calls in enumerate([1, 2, 1, 1, 2, 1]):
        ids = [f"t{turn}c{n}" for n in range(calls)]
        items += [ToolCall(call_id=i, name="Read", arguments=json.dumps({"file_path": i})) for i in ids]
        items += [ToolResult(call_id=i, content=i * 100) for i in ids]
    items.append(Message(role="assistant", content="done"))
    return Conversation(items=link(items), format="anthropic", model="claude-sonnet-4-5")


@pytest.mark.parametrize("keep_recent", [0, 1, 2, 3])
def test_the_exported_keep_clears_no_result_that_keep_recent_keeps(keep_recent):
    """keep_recent counts only tool uses the model has read; the frameworks' keep counts every one,
    the unread results a request ends in too. On every request of a run, ClearToolUsesEdit with the
    exported keep leaves every result our rules leave, and exactly those when the request ends in
    the turn with the most calls."""
    conversation = _parallel_run()
    rules = load_rules({"tool_results": [{"tool": "*", "template": "[cleared]"}]})
    settings = Settings(threshold=0, keep_recent=keep_recent)
    found = framework_settings(conversation, rules, settings)
    assert found.langchain["keep"] == keep_recent + 2
    items = conversation.items
    starts = [p for p in range(1, len(items)) if isinstance(items[p], ToolCall | Message)
              and isinstance(items[p - 1], ToolResult)]  # each request ends in one turn's results
    for end in starts:
        request = conversation.with_items(items[:end])
        ours = compact(request, rules, settings)
        kept = {p for p, item in enumerate(request.items) if isinstance(item, ToolResult)
                and ours.conversation.items[p] == item}
        messages, results = _langchain(request.items)
        ClearToolUsesEdit(**found.langchain).apply(messages, count_tokens=lambda m: 10**6)
        theirs = {results[i] for i, m in enumerate(messages) if isinstance(m, ToolMessage) and m.content != "[cleared]"}
        assert kept <= theirs
        last_turn = sum(isinstance(item, ToolResult) for item in request.items[end - 2:end])
        if last_turn == 2:
            assert kept == theirs


@pytest.mark.parametrize("rules", [Rules(), load_rules({"tool_results": [{"tool": "Nope", "template": "x"}]})])
def test_nothing_to_express_when_no_result_is_cleared(rules):
    assert framework_settings(_run(), rules, Settings()) is None
    assert exports.framework_settings(_run(), rules, Settings()) is None


def test_downloads_and_snippets():
    conversation = _run()
    download = exports.framework_settings(conversation, observation_masking(conversation), Settings(keep_recent=3))
    data = json.loads(download.data)
    assert data["anthropic"]["betas"] == ["context-management-2025-06-27"]
    assert data["langchain"]["ClearToolUsesEdit"]["keep"] == 4 and "ClearToolUsesEdit(" in data["langchain"]["python"]
    found = framework_settings(conversation, observation_masking(conversation), Settings(keep_recent=3))
    namespace: dict = {}
    exec(found.langchain_snippet().replace("agent = create_agent(model, tools, middleware=[middleware])\n", ""),
         namespace)
    assert namespace["middleware"].edits[0].keep == 4
    assert "context_management=" in found.anthropic_snippet()
    compactor = exports.rules_compactor(observation_masking(conversation), Settings())
    assert compactor.name == "compactor.py" and "def compact(" in compactor.data
