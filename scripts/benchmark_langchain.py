"""Suggested rules on the real traces, alone and against LangChain's ClearToolUsesEdit.

    .venv/bin/python scripts/benchmark_langchain.py [--keep 3]

The first table is the issue's "done when": the suggested rules with no summarization,
threshold 0 and keep_recent 3 — tokens before and after, every call still paired with its result,
every error result kept — next to what blanking every result the guards allow would save (the
most any result rule could). The second compares with ClearToolUsesEdit.

LangChain is a benchmark-only dependency (requirements-dev.txt). Each conversation becomes
LangChain messages (an AIMessage with tool_calls per assistant turn, a ToolMessage per result);
the edit is applied as ContextEditingMiddleware applies it (``apply(messages, count_tokens=…)``,
trigger 0 like our threshold 0), and the cleared results are written back into the
conversation so both sides are counted by the same meter. Our ``keep_recent`` counts the tool
uses the model has read and LangChain's ``keep`` every tool use, so ClearToolUsesEdit gets the
``keep`` the playground exports for it (``framework_export.keep``: keep_recent plus the most calls
one turn makes), which keeps at least what keep_recent keeps. The table gives what each saves, their
ratio, and how many error results and unprocessed results (no assistant turn after them) each
hides. Session logs in ../shared/fixtures/sessions are included once ``formats`` can read them.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, replace
from pathlib import Path

from langchain.agents.middleware import ClearToolUsesEdit
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.messages.utils import count_tokens_approximately

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from playground import formats  # noqa: E402
from playground.compaction import Settings, compact  # noqa: E402
from playground.conversation import Conversation, ToolCall, ToolResult, content_text, pairs, role_of  # noqa: E402
from playground.errors import InputError  # noqa: E402
from playground.export.framework import keep as framework_keep  # noqa: E402
from playground.meter.tokens import Meter  # noqa: E402
from playground.rules.errorpatterns import error_detail  # noqa: E402
from playground.rules.ruleset import load_rules  # noqa: E402
from playground.tune.suggest import suggest_rules  # noqa: E402

FIXTURES = ROOT.parent / "shared" / "fixtures"


def to_langchain(conversation: Conversation) -> tuple[list[BaseMessage], dict[int, int]]:
    """LangChain messages, and for each ToolMessage's index the position of our result."""
    messages: list[BaseMessage] = []
    results: dict[int, int] = {}
    turn: AIMessage | None = None
    for position, item in enumerate(conversation.items):
        if isinstance(item, ToolCall):
            if turn is None:
                turn = AIMessage("")
                messages.append(turn)
            turn.tool_calls.append({"id": item.call_id, "name": item.name, "args": item.parsed_arguments() or {},
                                    "type": "tool_call"})
            continue
        if isinstance(item, ToolResult):
            results[len(messages)] = position
            messages.append(ToolMessage(content_text(item.content), tool_call_id=item.call_id, name=item.name))
            turn = None
            continue
        text = content_text(item.content)
        if item.role == "assistant":
            turn = AIMessage(text)
            messages.append(turn)
        else:
            messages.append(SystemMessage(text) if item.role in ("system", "developer") else HumanMessage(text))
            turn = None
    return messages, results


def clear_tool_uses(conversation: Conversation, keep: int) -> Conversation:
    """The conversation after ClearToolUsesEdit(trigger=0, keep=keep) cleared its results."""
    messages, results = to_langchain(conversation)
    edit = ClearToolUsesEdit(trigger=0, keep=keep)
    edit.apply(messages, count_tokens=count_tokens_approximately)
    items = list(conversation.items)
    for index, position in results.items():
        if messages[index].response_metadata.get("context_editing", {}).get("cleared"):
            items[position] = replace(items[position], content=edit.placeholder)
    return conversation.with_items(items)


def error_positions(conversation: Conversation) -> set[int]:
    """Error results as the engine recognises them: the format's flag or an error pattern."""
    return {p for p, item in enumerate(conversation.items) if isinstance(item, ToolResult) and error_detail(item)}


def unprocessed_positions(conversation: Conversation) -> set[int]:
    last = max((p for p, item in enumerate(conversation.items) if role_of(item) == "assistant"), default=-1)
    return {p for p, item in enumerate(conversation.items) if isinstance(item, ToolResult) and p >= last}


@dataclass(frozen=True)
class Row:
    name: str
    keep: int  # ClearToolUsesEdit's keep for our keep_recent
    before: int
    edits: int
    pairs_intact: bool
    errors_kept: int
    blank_saved: int  # every result the guards allow blanked to one character
    langchain_saved: int
    langchain_saved_on_non_errors: int  # what it saves when its error results are put back
    suggested_saved: int
    errors: int
    langchain_errors_hidden: int
    suggested_errors_hidden: int
    langchain_unprocessed_hidden: int
    suggested_unprocessed_hidden: int

    @property
    def ratio(self) -> float:
        return self.suggested_saved / self.langchain_saved if self.langchain_saved else float("inf")

    @property
    def ratio_without_errors(self) -> float:
        saved = self.langchain_saved_on_non_errors
        return self.suggested_saved / saved if saved else float("inf")


def measure(name: str, conversation: Conversation, keep: int) -> Row:
    meter = Meter(conversation.model)
    before = meter.count(conversation).total
    settings = Settings(threshold=0, keep_recent=keep)
    theirs = clear_tool_uses(conversation, framework_keep(settings, conversation))
    result = compact(conversation, suggest_rules(conversation, meter).rules(), settings, meter=meter)
    ours = result.conversation
    errors, unprocessed = error_positions(conversation), unprocessed_positions(conversation)

    def hidden(after: Conversation, positions: set[int]) -> int:
        return sum(after.items[p] != conversation.items[p] for p in positions)

    errors_back = theirs.with_items(conversation.items[p] if p in errors else item
                                    for p, item in enumerate(theirs.items))
    tools = dict.fromkeys(item.name for item in conversation.items if isinstance(item, ToolCall))
    blank = load_rules({"tool_results": [{"tool": tool, "template": "x"} for tool in tools]})
    return Row(name, framework_keep(settings, conversation), before, len(result.report.edits),
               pairs(ours.items) == pairs(conversation.items), len(errors) - hidden(ours, errors),
               compact(conversation, blank, settings, meter=meter).report.saved,
               before - meter.count(theirs).total, before - meter.count(errors_back).total,
               before - meter.count(ours).total, len(errors), hidden(theirs, errors), hidden(ours, errors),
               hidden(theirs, unprocessed), hidden(ours, unprocessed))


def conversations() -> tuple[list[tuple[str, Conversation]], list[str]]:
    """The traces, and the session logs ``formats`` can read (a note for each it cannot)."""
    found = [(path.name, formats.loads(path.read_bytes())) for path in sorted((FIXTURES / "traces").glob("*.json"))]
    notes = []
    for path in sorted((FIXTURES / "sessions").glob("*.jsonl")):
        try:
            found.append((path.name, formats.loads(path.read_bytes())))
        except InputError as exc:
            notes.append(f"{path.name}: not readable by formats on this branch ({exc})")
    return found, notes


def done_when(rows: list[Row]) -> str:
    head = ("| conversation | tokens before | after | saved | edits | pairs intact | error results kept | "
            "every allowed result blanked would save |\n" + "|---" * 8 + "|")
    lines = [f"| {r.name} | {r.before:,} | {r.before - r.suggested_saved:,} | {r.suggested_saved / r.before:.1%} | "
             f"{r.edits} | {'yes' if r.pairs_intact else 'NO'} | {r.errors_kept} of {r.errors} | "
             f"{r.blank_saved / r.before:.1%} |" for r in rows]
    return "\n".join([head, *lines])


def table(rows: list[Row]) -> str:
    head = ("| conversation | its keep | tokens before | ClearToolUsesEdit saved | suggested saved | ratio | "
            "ratio, its errors put back | error results | errors hidden (CTU / suggested) | "
            "unprocessed hidden (CTU / suggested) |\n" + "|---" * 10 + "|")
    lines = [f"| {r.name} | {r.keep} | {r.before:,} | {r.langchain_saved:,} ({r.langchain_saved / r.before:.1%}) | "
             f"{r.suggested_saved:,} ({r.suggested_saved / r.before:.1%}) | {r.ratio:.0%} | "
             f"{r.ratio_without_errors:.0%} | {r.errors} | "
             f"{r.langchain_errors_hidden} / {r.suggested_errors_hidden} | "
             f"{r.langchain_unprocessed_hidden} / {r.suggested_unprocessed_hidden} |" for r in rows]
    return "\n".join([head, *lines])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=int, default=3,
                        help="our keep_recent (default 3); ClearToolUsesEdit gets the keep exported for it")
    args = parser.parse_args()
    found, notes = conversations()
    if not found:
        print(f"no traces in {FIXTURES / 'traces'}", file=sys.stderr)
        return 2
    rows = [measure(name, conversation, args.keep) for name, conversation in found]
    print(done_when(rows), end="\n\n")
    print(table(rows))
    for note in notes:
        print(f"\n{note}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
