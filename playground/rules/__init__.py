"""The two rule tables, keyed by tool name (or a pattern): the rule model and its templates,
the error patterns that keep failed results, whether a tool can be called again, the editor's
table rows and where the tokens go per tool."""

from .errorpatterns import ErrorPatterns, error_detail
from .ruleset import Rules, Template, book_rules, load_rules, rules_to_json

__all__ = ["ErrorPatterns", "Rules", "Template", "book_rules", "error_detail", "load_rules", "rules_to_json"]
