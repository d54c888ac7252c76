"""A policy class under a source's name, with that source's parameters from ``data/policies.json``.

Several agents run one mechanism with other numbers (Claude Code's clearing of old tool results is
Anthropic's clear-tool-uses with other settings; SWE-agent's and OpenHands' masking are our
masking with another window and placeholder): one class, several named parameter sets, no copies.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..conversation import Conversation
from ..meter.tokens import Meter
from .base import Policy, PolicyResult
from .provenance import read_provenance


@dataclass(frozen=True)
class NamedPolicy:
    """``inner`` reported as ``name``: replay, compare and the page show the source's name."""

    name: str
    inner: Policy

    def params(self) -> dict[str, Any]:
        return self.inner.params()

    def apply(self, conversation: Conversation, meter: Meter) -> PolicyResult:
        return self.inner.apply(conversation, meter)


@dataclass(frozen=True)
class Named:
    """The ``POLICIES`` entry of a named policy: builds ``build`` with the data file's
    parameters and, of the options every policy is offered, only those in ``takes`` (the
    model's context window, for triggers the source states as a share of it). The source's own
    numbers are not overridden by another policy's command-line options."""

    name: str
    build: Callable[..., Policy]
    takes: tuple[str, ...] = ()

    def __call__(self, **options: Any) -> NamedPolicy:
        return self.with_params(**{key: options[key] for key in self.takes if options.get(key) is not None})

    def with_params(self, **params: Any) -> NamedPolicy:
        """The source's mechanism with ``params`` over the data file's, any of ``build``'s: a setting of
        the agent's own compiled from a tuned policy (``export.native``), run as the agent runs it."""
        given = {key: tuple(value) if isinstance(value, list) else value
                 for key, value in read_provenance()[self.name].params.items()}
        return NamedPolicy(self.name, self.build(**{**given, **params}))
