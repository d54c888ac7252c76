"""Rule presets to start from: the book's rules, observation masking, aggressive, suggested, none.

Rules are keyed by tool name, so the presets that cover "every tool" are built for the tools a
given conversation actually calls: a ``RuleSet`` is a title and how to make its rules, and
``ruleset(name, conversation)`` the one way the page, the command line and the corpus make them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..conversation import Conversation
from ..errors import InputError
from ..meter.tokens import Meter
from ..rules.breakdown import largest_argument, tools_in
from ..rules.ruleset import Rules, book_rules, load_rules
from ..run.prices import counted_as, read_prices
from .checked import checked_rules

MASK = "[Older {tool} output omitted: {lines} lines.]"
MASK_KEEP_RECENT = 5  # SWE-agent keeps the last five observations in full
LARGE = 400  # characters: a call argument worth replacing on average


def observation_masking(conversation: Conversation) -> Rules:
    """Every tool output replaced by a short note, as SWE-agent masks older observations
    (pair it with keep_recent to leave the newest ones in full)."""
    return load_rules({"tool_results": [{"tool": tool, "template": MASK} for tool in tools_in(conversation)]})


def aggressive(conversation: Conversation) -> Rules:
    """Everything that can be re-fetched goes: the book's references where they apply, a bare
    note for every other tool's output, and the largest text argument of every call."""
    book = book_rules()
    results = [{"tool": r.tool, "template": r.template.text} for r in book.tool_results]
    named = {row["tool"] for row in results}
    results += [{"tool": tool, "template": "[{tool} output removed. Call it again if needed.]"}
                for tool in tools_in(conversation) if tool not in named]
    calls = [{"tool": tool, "argument": argument, "replacement": "[{chars} characters omitted]"}
             for tool in tools_in(conversation)
             if (argument := largest_argument(conversation, tool, LARGE))]
    return load_rules({"tool_calls": calls, "tool_results": results})


def suggested(conversation: Conversation) -> Rules:
    """Rules built for this conversation's tools from their arguments and sizes (see suggest.py)
    and checked on it (checked.py), counted with a throwaway meter for the conversation's own model."""
    return checked_rules(conversation, Meter(counted_as(conversation, read_prices()))).rules()


def no_rules(_: Conversation) -> Rules:
    return Rules()


@dataclass(frozen=True)
class RuleSet:
    """A named starting point: its title on the page, and how it makes rules for a conversation."""

    title: str
    make: Callable[[Conversation], Rules]


RULESETS: dict[str, RuleSet] = {
    "book": RuleSet("The book's rules: create_file content, read_file and web search results",
                    lambda _: book_rules()),
    "masking": RuleSet("Observation masking: every tool output becomes a short note (after SWE-agent)",
                       observation_masking),
    "aggressive": RuleSet("Aggressive: every tool output and every call's largest argument", aggressive),
    "suggested": RuleSet("Suggested for this conversation: a rule per large tool, from its arguments and sizes",
                         suggested),
    "none": RuleSet("None: no rules (nothing is ever compacted)", no_rules),
}


def ruleset(name: str, conversation: Conversation, where: str = "--preset") -> Rules:
    """The rules the rule set ``name`` makes for ``conversation``; an unknown name is an error
    that lists the names there are (``where``: the option or field it came from)."""
    if name not in RULESETS:
        raise InputError(f"no such rule preset here (this installation has: {', '.join(RULESETS)})", where=where,
                         value=name)
    return RULESETS[name].make(conversation)
