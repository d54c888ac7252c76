"""No policy: every request is the whole history, the baseline every other policy is measured by."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from ..conversation import Conversation
from ..meter.tokens import Meter
from .base import PolicyResult, unchanged


@dataclass(frozen=True)
class NonePolicy:
    name: ClassVar[str] = "none"

    def params(self) -> dict[str, Any]:
        return {}

    def apply(self, conversation: Conversation, meter: Meter) -> PolicyResult:
        return unchanged(conversation)
