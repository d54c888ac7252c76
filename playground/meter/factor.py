"""A per-model correction factor, the value a calibration produces and a meter applies.

Apart from ``calibration.py`` (which fits factors from billed usage and so needs a meter) so that
the meter can hold one without importing what fits it: the two no longer import each other."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Calibration:
    """Multiply ``model``'s counts by ``factor``; ``samples`` usage objects gave it (0: typed in)."""

    model: str
    factor: float
    samples: int = 0

    def note(self) -> str:
        source = (f"from {self.samples} usage sample{'s' if self.samples != 1 else ''}" if self.samples
                  else "as given")
        return f"calibrated ×{self.factor:.2f} {source}"

    def apply(self, tokens: int) -> int:
        return round(tokens * self.factor)
