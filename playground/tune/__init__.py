"""Help choosing rules: rows suggested for the tools a conversation actually uses, explained
row by row (``suggest``), and the named rule presets (``rulesets``)."""

from .checked import checked_rules
from .rulesets import MASK_KEEP_RECENT, RULESETS, RuleSet, ruleset
from .suggest import Suggestion, add_rows, no_match_message, preview, suggest_rules

__all__ = ["MASK_KEEP_RECENT", "RULESETS", "RuleSet", "Suggestion", "add_rows", "checked_rules", "no_match_message",
           "preview", "ruleset", "suggest_rules"]
