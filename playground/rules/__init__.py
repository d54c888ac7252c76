"""The two rule tables, keyed by tool name (or a pattern): the rule model and its templates,
the error patterns that keep failed results, whether a tool can be called again, the editor's
table rows and where the tokens go per tool."""

from .editor import (
    CALL_COLUMNS,
    NEW_CALL_ARGUMENT,
    NEW_CALL_REPLACEMENT,
    PATTERN_COLUMNS,
    RESULT_COLUMNS,
    RowCheck,
    edited_rows,
    error_patterns_from_rows,
    rules_from_tables,
    tables_from_rules,
)
from .errorpatterns import DEFAULT_ERROR_PATTERNS, ErrorPatterns, error_detail
from .ruleset import Rules, Template, book_rules, load_rules, rules_to_json

__all__ = ["CALL_COLUMNS", "DEFAULT_ERROR_PATTERNS", "NEW_CALL_ARGUMENT", "NEW_CALL_REPLACEMENT", "PATTERN_COLUMNS",
           "RESULT_COLUMNS", "ErrorPatterns", "RowCheck", "Rules", "Template", "book_rules", "edited_rows",
           "error_detail", "error_patterns_from_rows", "load_rules", "rules_from_tables", "rules_to_json",
           "tables_from_rules"]
