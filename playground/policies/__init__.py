"""Context policies behind one small interface: each takes a request and a meter and returns the
request to send with what it did (``PolicyResult``). Replay and compare iterate over them; the
page lists them; a new strategy is one new module and one line in ``POLICIES``."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from ..errors import InputError
from .base import Policy, PolicyResult, unchanged
from .clear_tool_uses import ClearToolUsesPolicy
from .hybrid import HybridPolicy
from .masking import MaskingPolicy
from .none import NonePolicy
from .rules import RulesPolicy
from .summarize import SummarizePolicy

POLICIES: dict[str, Callable[..., Policy]] = {
    policy.name: policy for policy in (NonePolicy, RulesPolicy, MaskingPolicy, ClearToolUsesPolicy,
                                       SummarizePolicy, HybridPolicy)
}


def make(name: str, **options: Any) -> Policy:
    """The policy ``name`` built from whichever of ``options`` it takes (the rest are another
    policy's), so one set of command-line options can build every strategy."""
    factory = POLICIES.get(name)
    if factory is None:
        raise InputError(f"unknown strategy (choose {', '.join(POLICIES)})", where="strategy", value=name)
    accepted = {f.name for f in dataclasses.fields(factory)}  # type: ignore[arg-type]
    return factory(**{key: value for key, value in options.items() if key in accepted and value is not None})


__all__ = ["POLICIES", "ClearToolUsesPolicy", "HybridPolicy", "MaskingPolicy", "NonePolicy", "Policy", "PolicyResult",
           "RulesPolicy", "SummarizePolicy", "make", "unchanged"]
