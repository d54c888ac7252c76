"""Tool-output pruning as Gemini CLI and opencode do it: walk back over the tool outputs, newest
first; the newest ``protect_tokens`` tokens of them stay; every older output (the one that crosses
the line included) is prunable, and they are replaced only when together they come to
``minimum`` tokens, so the cache is broken for a batch worth it, never for one small output.

Both protect the newest turn outright and spare some tools (opencode its ``skill`` tool, Gemini
its skill, ask-user and plan-mode tools). They differ in what stands in for an output: Gemini
writes it to a file and leaves a preview and the file's path (``{preview}``/``{path}`` in the
placeholder), so what it hid is retrievable; opencode leaves ``[Old tool result content
cleared]``, gone for good. opencode stops walking at the first output it pruned before (what is
older was settled then); Gemini walks past one it masked. Counts are our meter's, standing for
the sources' own estimates (``data/policies.json`` names them). No LLM: nothing is billed.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from ..conversation import Conversation, Item, ToolResult, content_text, role_of
from ..meter.tokens import Meter
from .base import PolicyResult, UserTurns, at_least_zero, unchanged

# what Gemini's preview keeps: the first and last 250 characters of a general tool's output, the
# first and last 10 lines of a shell tool's (toolOutputMaskingService.ts)
PREVIEW_CHARS = 250
PREVIEW_LINES = 10


def preview(text: str, lines_tool: bool) -> str:
    """Gemini's preview of a masked output: head and tail, the middle said to be cut."""
    if lines_tool:
        rows = text.split("\n")
        if len(rows) <= 2 * PREVIEW_LINES:
            return text
        omitted = len(rows) - 2 * PREVIEW_LINES
        return "\n".join([*rows[:PREVIEW_LINES], "", f"... [{omitted} lines omitted] ...", "",
                          *rows[-PREVIEW_LINES:]])
    if len(text) <= 2 * PREVIEW_CHARS:
        return text
    return f"{text[:PREVIEW_CHARS]}\n... [TRUNCATED] ...\n{text[-PREVIEW_CHARS:]}"


@dataclass(frozen=True)
class PrunePolicy:
    protect_tokens: int = 40_000  # the newest tool-output tokens never pruned
    minimum: int = 20_000  # prune only when the prunable outputs come to this many tokens
    minimum_inclusive: bool = False  # Gemini fires at ``minimum`` itself; opencode only above it
    protect_user_turns: int = 0  # outputs from the n-th newest user message on stay (0: the latest turn only)
    exempt_tools: tuple[str, ...] = ()  # never pruned
    stop_at_pruned: bool = False  # the walk ends at the first output pruned before (opencode)
    placeholder: str = "[Old tool result content cleared]"  # may name {preview}, {path}, {tool}
    line_preview_tools: tuple[str, ...] = ()  # tools whose preview is by lines (Gemini's shell)
    retrievable: bool = False  # the output was saved where a tool call can read it back
    memo: dict[int, tuple[Item, int, Item, int]] = field(default_factory=dict, compare=False, repr=False)
    turns: UserTurns = field(default_factory=UserTurns, compare=False, repr=False)
    name: ClassVar[str] = "prune"

    def __post_init__(self) -> None:
        at_least_zero(self, "protect_tokens", "minimum", "protect_user_turns")

    def params(self) -> dict[str, Any]:
        return {"protect_tokens": self.protect_tokens, "minimum": self.minimum,
                "protect_user_turns": self.protect_user_turns, "exempt_tools": list(self.exempt_tools)}

    def _protected_from(self, conversation: Conversation) -> int:
        """Where the protected newest turn begins: the ``protect_user_turns``-th newest user
        message, or (0) the newest assistant message, which with the results answering it is the
        turn Gemini leaves whole."""
        items = conversation.items
        if self.protect_user_turns:
            found = self.turns.read(conversation).newest(self.protect_user_turns)
            return 0 if found is None else found
        position = len(items) - 1
        while position >= 0 and role_of(items[position]) != "assistant":
            position -= 1
        while position > 0 and role_of(items[position - 1]) == "assistant":
            position -= 1
        return max(position, 0)

    def _measured(self, item: ToolResult, meter: Meter) -> tuple[int, Item, int]:
        """The output's tokens, its pruned twin and what pruning it saves (measured once)."""
        known = self.memo.get(id(item))
        if known is None or known[0] is not item:
            text = content_text(item.content)
            tool = item.name or "tool"
            stand_in = self.placeholder.format(
                tool=tool, path=f"tool-outputs/{tool.lower()}_{item.call_id.lower()}.txt",
                preview=preview(text, tool in self.line_preview_tools) if "{preview}" in self.placeholder else "")
            tokens = meter.text(text)
            known = self.memo[id(item)] = (item, tokens, replace(item, content=stand_in),
                                           tokens - meter.text(stand_in))
        return known[1], known[2], known[3]

    def _pruned(self, item: ToolResult) -> bool:
        text = content_text(item.content)
        head = self.placeholder.split("{", 1)[0]
        return text == self.placeholder or (head != self.placeholder and bool(head) and text.startswith(head))

    def apply(self, conversation: Conversation, meter: Meter) -> PolicyResult:
        items = conversation.items
        seen = prunable = 0
        chosen: list[int] = []
        for position in range(self._protected_from(conversation) - 1, -1, -1):
            item = items[position]
            if not isinstance(item, ToolResult) or item.name in self.exempt_tools:
                continue
            if self._pruned(item):
                if self.stop_at_pruned:
                    break
                continue
            tokens = self._measured(item, meter)[0]
            seen += tokens
            if seen > self.protect_tokens:
                prunable += tokens
                chosen.append(position)
        enough = prunable >= self.minimum if self.minimum_inclusive else prunable > self.minimum
        if not chosen or not enough:
            return unchanged(conversation)
        edited, saved = list(items), 0
        for position in chosen:
            _, twin, gain = self._measured(items[position], meter)  # type: ignore[arg-type]
            if gain > 0:
                edited[position], saved = twin, saved + gain
        if not saved:
            return unchanged(conversation)
        lost, back = (0, saved) if self.retrievable else (saved, 0)
        return PolicyResult(conversation.with_items(edited), "pruning", tokens_lost=lost, tokens_retrievable=back,
                            report={"pruned": len(chosen)}, kept=min(chosen))
