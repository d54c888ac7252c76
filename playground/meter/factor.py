"""A per-model correction factor, the value a calibration produces and a meter applies.

Apart from ``calibration.py`` (which fits factors from billed usage and so needs a meter) so that
the meter can hold one without importing what fits it: the two no longer import each other."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Calibration:
    """Multiply ``model``'s counts by ``factor``; ``samples`` usage objects gave it (0: typed in).

    ``offset``: tokens every request carries that the conversation does not hold — an agent's system
    prompt and tool definitions, which its log leaves out — added to the request's total for
    conversations read from the logs of ``source`` (an agent, ``Conversation.source``) only, so a
    calibration fitted on one agent's bills does not add its prompt to anything else."""

    model: str
    factor: float
    samples: int = 0
    offset: int = 0
    source: str = ""

    def note(self) -> str:
        source = (f"from {self.samples} usage sample{'s' if self.samples != 1 else ''}" if self.samples
                  else "as given")
        unlogged = f", +{self.offset:,} tokens per {self.source} request its log does not hold" if self.offset else ""
        return f"calibrated ×{self.factor:.2f} {source}{unlogged}"

    def unlogged(self, source: str) -> int:
        """The tokens to add to a request read from ``source``'s log (0 for any other)."""
        return self.offset if self.offset and source == self.source else 0

    def apply(self, tokens: int) -> int:
        return round(tokens * self.factor)
