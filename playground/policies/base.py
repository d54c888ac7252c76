"""The one small interface every context policy shares, and the result it returns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from ..model import Conversation
from ..tokens import Meter


@dataclass(frozen=True)
class PolicyResult:
    """A policy's request and what it did. ``fired`` names what ran (None: nothing changed);
    ``tokens_lost`` are gone for good (summarized, or masked with no way back);
    ``tokens_retrievable`` were replaced by a reference that calling a tool again undoes."""

    conversation: Conversation
    fired: str | None = None
    tokens_lost: int = 0
    tokens_retrievable: int = 0
    report: Any = None


class Policy(Protocol):
    """A way to keep an agent's context small. ``apply`` never returns a request with more
    prompt tokens than it was given (replay relies on it: no policy bills more than none)."""

    name: str

    def params(self) -> dict[str, Any]: ...

    def apply(self, conversation: Conversation, meter: Meter) -> PolicyResult: ...


def unchanged(conversation: Conversation, report: Any = None) -> PolicyResult:
    return PolicyResult(conversation, report=report)
