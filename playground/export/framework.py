"""Framework settings: the current policy as Anthropic's ``context_management`` edit
``clear_tool_uses_20250919`` and as LangChain's ``ClearToolUsesEdit``, where it maps onto them.

Both clear the oldest tool results (optionally their calls' inputs) once the request passes a
token trigger, keeping the newest few and any excluded tool, with one placeholder for all. Our
rules are finer — a reference per tool, guards for errors and unread results, ``min_tokens``,
"not smaller" — so the export says exactly what does not carry over instead of pretending.
"""

from __future__ import annotations

from dataclasses import dataclass
from pprint import pformat
from typing import Any

from ..compaction import Settings
from ..conversation import Conversation, ToolCall, role_of, turn_end, turn_starts
from ..rules.ruleset import Rules

ANTHROPIC_BETA = "context-management-2025-06-27"
LANGCHAIN_PLACEHOLDER = "[cleared]"  # ClearToolUsesEdit's default


@dataclass(frozen=True)
class FrameworkSettings:
    """The policy in both frameworks' terms, and what is lost on the way."""

    cleared_tools: tuple[str, ...]  # this conversation's tools whose results the policy replaces
    anthropic: dict[str, Any]  # the request's ``context_management`` value
    langchain: dict[str, Any]  # keyword arguments of ClearToolUsesEdit
    lost: tuple[str, ...]  # what the frameworks do not do that our rules do (or the other way)

    def anthropic_snippet(self) -> str:
        """The request with the edit, as Python (a JSON ``true`` would not run)."""
        return (f"# pip install anthropic — context editing is a beta ({ANTHROPIC_BETA})\n"
                "response = client.beta.messages.create(\n"
                "    model=MODEL, max_tokens=4096, messages=messages, tools=tools,\n"
                f"    betas=[{ANTHROPIC_BETA!r}],\n"
                f"    context_management={pformat(self.anthropic, sort_dicts=False)},\n"
                ")\n")

    def langchain_snippet(self) -> str:
        arguments = ",\n".join(f"        {key}={value!r}" for key, value in self.langchain.items())
        return ("from langchain.agents import create_agent\n"
                "from langchain.agents.middleware import ClearToolUsesEdit, ContextEditingMiddleware\n\n"
                "middleware = ContextEditingMiddleware(edits=[\n"
                f"    ClearToolUsesEdit(\n{arguments},\n    ),\n])\n"
                "agent = create_agent(model, tools, middleware=[middleware])\n")


def _placeholder(rules: Rules, tools: list[str]) -> tuple[str, bool]:
    """One placeholder for every cleared tool: the rules' own text when they all share one with
    no fields, else LangChain's default (and the per-tool templates are lost)."""
    texts = {rule.template.text for tool in tools if (rule := rules.for_result(tool)) is not None}
    rule_fields = any(rule.template.fields for tool in tools if (rule := rules.for_result(tool)) is not None)
    if len(texts) == 1 and not rule_fields:
        return texts.pop(), True
    return LANGCHAIN_PLACEHOLDER, False


def turn_calls(conversation: Conversation) -> int:
    """The most tool calls one assistant turn of ``conversation`` makes (at least 1): how many tool
    uses a request of this agent can end with, results in but not read yet."""
    items = conversation.items
    return max([1, *(sum(role_of(item) == "assistant" and isinstance(item, ToolCall)
                         for item in items[start:turn_end(items, start)]) for start in turn_starts(items))])


def keep(settings: Settings, conversation: Conversation) -> int:
    """Both frameworks' ``keep`` for our ``keep_recent``. Theirs counts every tool use; ours counts
    only those the model has read, since the not-processed guard keeps the others anyway. An
    agent's request ends in the results of its last turn, not read yet: so ``keep`` is
    ``keep_recent`` plus the most calls one turn of this conversation makes (``turn_calls``),
    which keeps at least what ours keeps on every request of the run."""
    return settings.keep_recent + turn_calls(conversation)


def _lost(rules: Rules, settings: Settings, cleared: list[str], same_text: bool) -> list[str]:
    if same_text:
        lost = ["your placeholder text: Anthropic writes its own (it carries over to LangChain's `placeholder`)"]
    else:
        lost = ["per-tool references: both frameworks put one fixed placeholder in every cleared result "
                "(Anthropic's own text; LangChain's `placeholder`), so no path, query or command is named"]
    if not settings.compact_errors:
        lost.append("the error guard: both clear error results too, so a failure can look like any other output")
    lost.append("the not-processed guard: only `keep` protects the newest results; a result the model has not "
                "read yet is cleared if it is older than those. `keep` is keep_recent plus the most calls one turn "
                "makes here, since keep_recent counts only tool uses the model has read and the frameworks count "
                "the unread ones at the end of the request too")
    if any(rule.min_tokens for tool in cleared if (rule := rules.for_result(tool)) is not None):
        lost.append("min_tokens: small results are cleared too (`clear_at_least` is a total for the whole edit, "
                    "not a size per item)")
    lost.append("'not smaller': a placeholder replaces even a result shorter than itself")
    if rules.tool_calls:
        names = ", ".join(sorted({f"{r.tool}.{r.argument}" for r in rules.tool_calls if r.enabled}))
        lost.append(f"argument rules ({names}): `clear_tool_inputs` empties every input of a cleared call, "
                    "not one argument, and only together with its result")
    lost.append("the threshold is measured by the provider (Anthropic) or LangChain's counter, not this meter; "
                "`keep` counts tool results in LangChain and tool uses in Anthropic")
    return lost


def framework_settings(conversation: Conversation, rules: Rules, settings: Settings) -> FrameworkSettings | None:
    """The policy as clear-tool-uses settings, or None when it clears no tool result at all
    (then there is nothing the frameworks' single policy could express)."""
    tools = list(dict.fromkeys(item.name for item in conversation.items if isinstance(item, ToolCall)))
    cleared = [tool for tool in tools if (rule := rules.for_result(tool)) is not None and rule.enabled]
    if not cleared:
        return None
    excluded = [tool for tool in tools if tool not in cleared]
    placeholder, same_text = _placeholder(rules, cleared)
    clear_inputs = any(rule.enabled for rule in rules.tool_calls)
    kept = keep(settings, conversation)
    edit: dict[str, Any] = {"type": "clear_tool_uses_20250919",
                            "trigger": {"type": "input_tokens", "value": settings.threshold},
                            "keep": {"type": "tool_uses", "value": kept}}
    if excluded:
        edit["exclude_tools"] = excluded
    if clear_inputs:
        edit["clear_tool_inputs"] = True
    langchain = {"trigger": settings.threshold, "keep": kept, "clear_at_least": 0,
                 "exclude_tools": excluded, "placeholder": placeholder, "clear_tool_inputs": clear_inputs}
    return FrameworkSettings(tuple(cleared), {"edits": [edit]}, langchain,
                             tuple(_lost(rules, settings, cleared, same_text)))


def to_json(found: FrameworkSettings) -> dict[str, Any]:
    """The export file: both frameworks' settings with a Python snippet each, the tools they
    clear and what is lost."""
    return {"anthropic": {"betas": [ANTHROPIC_BETA], "context_management": found.anthropic,
                          "python": found.anthropic_snippet()},
            "langchain": {"ClearToolUsesEdit": found.langchain, "python": found.langchain_snippet()},
            "cleared_tools": list(found.cleared_tools),
            "does_not_carry_over": list(found.lost)}
