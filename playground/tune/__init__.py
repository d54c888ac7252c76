"""Help choosing rules: rows suggested for the tools a conversation actually uses, explained
row by row (``suggest``), and the named rule presets (``rulesets``)."""

from .rulesets import RULESETS, RuleSet, ruleset
from .suggest import suggest_rules

__all__ = ["RULESETS", "RuleSet", "ruleset", "suggest_rules"]
