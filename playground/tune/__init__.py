"""Help choosing rules: rows suggested for the tools a conversation actually uses, explained
row by row (``suggest``), and the named rule presets (``rulesets``)."""

from .rulesets import RULESETS
from .suggest import suggest_rules

__all__ = ["RULESETS", "suggest_rules"]
