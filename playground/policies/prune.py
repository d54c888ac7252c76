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

from bisect import bisect_left
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from ..conversation import Conversation, Item, ToolResult, content_text, extends, role_of
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


class _Outputs:
    """The unpruned outputs before the protected turn of the last request read, in order, with
    their running token sums, and the last edit made: a policy walked every output of the history
    back at every call (and per call re-edited every old one), so a run's calls cost more and
    more. A request that extends the last one, or the last result, is read only in its new part.
    Owned by one policy."""

    def __init__(self) -> None:
        self.returned: tuple[Item, ...] = ()  # what the policy sent last
        self._reset()

    def _reset(self) -> None:
        self.items: tuple[Item, ...] = ()  # the request read
        self.read_to = 0  # its positions read, from 0
        self.positions: list[int] = []  # the unpruned outputs among them (after the newest pruned: opencode)
        self.sums: list[int] = [0]  # sums[n]: tokens before the n-th of them (from any base), then their total
        self.result: tuple[tuple[Item, ...], int] | None = None  # the last request's edit and how many it chose
        # the last edit: request, edited, how many chosen, the first and last chosen's positions, tokens saved
        self.edit: tuple[tuple[Item, ...], tuple[Item, ...], int, int, int, int] | None = None

    def read(self, conversation: Conversation, protected: int, policy: PrunePolicy, meter: Meter) -> None:
        """Bring the outputs up to ``protected`` in ``conversation``'s request."""
        items, grew = conversation.items, conversation.grew
        base = grew[0] if grew is not None and grew[1] is items else None
        result = self.result
        if result is not None and (base is result[0] or (base is not self.items and extends(items, result[0]))):
            self._settle(*result, policy, meter)
        elif not extends(items, self.items, grew):
            self._reset()
        if protected < self.read_to:
            self._reset()
        self.items, self.result = items, None
        positions, sums = self.positions, self.sums
        for position in range(self.read_to, protected):
            item = items[position]
            if not isinstance(item, ToolResult) or item.name in policy.exempt_tools:
                continue
            if policy._pruned(item):
                if policy.stop_at_pruned:
                    positions.clear()
                    del sums[:-1]
                continue
            positions.append(position)
            sums.append(sums[-1] + policy._measured(item, meter)[0])
        self.read_to = max(self.read_to, protected)

    def _settle(self, edited: tuple[Item, ...], chosen: int, policy: PrunePolicy, meter: Meter) -> None:
        """Make the outputs read those of ``edited``, the last request with (some of) its first
        ``chosen`` outputs replaced: a twin that reads as pruned drops out (and, for opencode,
        every output before it), one that does not stays with its own tokens."""
        positions, sums = [], []
        for number in range(chosen):
            position = self.positions[number]
            item = edited[position]
            if item is self.items[position]:
                tokens = self.sums[number + 1] - self.sums[number]
            elif policy._pruned(item):  # type: ignore[arg-type]
                if policy.stop_at_pruned:
                    positions, sums = [], []
                continue
            else:
                tokens = policy._measured(item, meter)[0]  # type: ignore[arg-type]
            positions.append(position)
            sums.append(tokens)
        running = self.sums[chosen]
        for number in range(len(sums) - 1, -1, -1):  # sums end where the outputs not chosen begin
            running -= sums[number]
            sums[number] = running
        self.positions[:chosen], self.sums[:chosen] = positions, sums
        self.items = edited

    def edited(self, items: tuple[Item, ...], grew: Any, chosen: int, policy: PrunePolicy,
               meter: Meter) -> tuple[list[Item], int, int]:
        """The request with its first ``chosen`` outputs pruned, the tokens that saves, and how
        many of its leading items are those of the request sent last, the very objects (0: not
        known). Per call the request is the last one grown, and its chosen outputs the last ones
        and more: the last edit is extended, not made again."""
        positions, last = self.positions, self.edit
        if (last is not None and last[2] <= chosen and positions[last[2] - 1] == last[4]
                and positions[0] == last[3] and extends(items, last[0], grew)):
            edited, done, saved = [*last[1], *items[len(last[0]):]], last[2], last[5]
            # (what was sent last, when it was that edit, up to the first output pruned now)
            follows = min(positions[done] if done < chosen else len(last[1]), len(last[1])) \
                if last[1] is self.returned else 0
        else:
            edited, done, saved, follows = list(items), 0, 0, 0
        for number in range(done, chosen):
            position = positions[number]
            _, twin, gain = policy._measured(items[position], meter)  # type: ignore[arg-type]
            if gain > 0:
                edited[position], saved = twin, saved + gain
        return edited, saved, follows


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
    outputs: _Outputs = field(default_factory=_Outputs, compare=False, repr=False)
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
        """Newest first, the outputs past ``protect_tokens`` are chosen: those whose newer
        outputs (themselves included) come to more, a prefix of the outputs in order, found by
        bisecting their running sums."""
        done = self._prune(conversation, meter)
        self.outputs.returned = done.conversation.items
        return done

    def _prune(self, conversation: Conversation, meter: Meter) -> PolicyResult:
        items, outputs = conversation.items, self.outputs
        outputs.read(conversation, self._protected_from(conversation), self, meter)
        positions, sums = outputs.positions, outputs.sums
        chosen = bisect_left(sums, sums[-1] - self.protect_tokens, 0, len(positions))
        prunable = sums[chosen] - sums[0]
        enough = prunable >= self.minimum if self.minimum_inclusive else prunable > self.minimum
        if not chosen or not enough:
            return unchanged(conversation)
        edited, saved, follows = outputs.edited(items, conversation.grew, chosen, self, meter)
        if not saved:
            return unchanged(conversation)
        result = conversation.with_items(edited)
        outputs.result = (result.items, chosen)
        outputs.edit = (items, result.items, chosen, positions[0], positions[chosen - 1], saved)
        lost, back = (0, saved) if self.retrievable else (saved, 0)
        return PolicyResult(result, "pruning", tokens_lost=lost, tokens_retrievable=back,
                            report={"pruned": chosen}, kept=positions[0], follows=follows)
