"""The OpenAI Agents SDK's ``ToolOutputTrimmer``, run offline: everything from the
``recent_turns``-th newest user message on is never touched; before it, a tool output longer than
``max_output_chars`` characters (of a tool in ``trimmable_tools``, every tool when None) becomes
a marker and its first ``preview_chars`` characters, when that is shorter. Calls stay. No trigger
and no LLM: it runs on every call. What the preview leaves out is lost.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from ..conversation import Conversation, Item, ToolResult, content_text
from ..errors import InputError
from ..meter.tokens import Meter
from .base import EditedBefore, PolicyResult, UserTurns, unchanged


def trimmed_text(name: str, text: str, preview_chars: int) -> str:
    """The SDK's marker and preview for one output."""
    return f"[Trimmed: {name} output — {len(text)} chars → {preview_chars} char preview]\n{text[:preview_chars]}..."


@dataclass(frozen=True)
class ToolOutputTrimmerPolicy:
    recent_turns: int = 2
    max_output_chars: int = 500
    preview_chars: int = 200
    trimmable_tools: tuple[str, ...] | None = None
    memo: dict[int, tuple[Item, Item | None, int]] = field(default_factory=dict, compare=False, repr=False)
    # the untouched tail begins at the recent_turns-th user message from the end (fewer: nothing is trimmed)
    turns: UserTurns = field(default_factory=UserTurns, compare=False, repr=False)
    done: EditedBefore = field(default_factory=EditedBefore, compare=False, repr=False)
    name: ClassVar[str] = "tool-output-trimmer"

    def __post_init__(self) -> None:
        for key in ("recent_turns", "max_output_chars", "preview_chars"):
            if getattr(self, key) < 0:
                raise InputError(f"{key} must be 0 or more", where=key, value=getattr(self, key))

    def params(self) -> dict[str, Any]:
        return {"recent_turns": self.recent_turns, "max_output_chars": self.max_output_chars,
                "preview_chars": self.preview_chars,
                "trimmable_tools": "all" if self.trimmable_tools is None else list(self.trimmable_tools)}

    def _trimmed(self, item: ToolResult, meter: Meter) -> tuple[Item | None, int]:
        text = content_text(item.content)
        if len(text) <= self.max_output_chars or (self.trimmable_tools is not None
                                                  and item.name not in self.trimmable_tools):
            return None, 0
        short = trimmed_text(item.name or "tool", text, self.preview_chars)
        saved = meter.text(text) - meter.text(short)
        if len(short) >= len(text) or saved <= 0:  # the SDK's test is shorter text; no request grows here either
            return None, 0
        return replace(item, content=short), saved

    def apply(self, conversation: Conversation, meter: Meter) -> PolicyResult:
        items = conversation.items
        boundary = self.turns.read(conversation).newest(self.recent_turns) if self.recent_turns else len(items)
        if boundary is None:
            return unchanged(conversation)
        start, edited, found = self.done.start(conversation, boundary)
        (saved, trimmed), settled = found or (0, 0), True
        for position in range(start, boundary):
            item = items[position]
            short = self._known(item, meter) if isinstance(item, ToolResult) else None
            edited.append(item if short is None else short[0])
            if short is not None:
                saved, trimmed = saved + short[1], trimmed + 1
                settled = settled and self._known(short[0], meter) is None  # (trimmed again, it stays)
        result = (PolicyResult(conversation.with_items((*edited, *items[boundary:])), "trimming", tokens_lost=saved,
                               report={"trimmed": trimmed}) if trimmed else unchanged(conversation))
        self.done.done(items, result.conversation.items, boundary, edited, (saved, trimmed), settled)
        return result

    def _known(self, item: ToolResult, meter: Meter) -> tuple[ToolResult, int] | None:
        """The output trimmed and what that saved (None: it stays), read once per output."""
        known = self.memo.get(id(item))
        if known is None or known[0] is not item:
            known = self.memo[id(item)] = (item, *self._trimmed(item, meter))
        return None if known[1] is None else (known[1], known[2])  # type: ignore[return-value]
