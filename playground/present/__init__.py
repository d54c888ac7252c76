"""What a person is shown, as values first: the reports the CLI prints, the before/after view,
its HTML, the compaction step-through and the token view. Nothing here decides anything."""

from .render import STYLE, literal
from .view import CallView, call_view, format_title, threshold_range

__all__ = ["STYLE", "CallView", "call_view", "format_title", "literal", "threshold_range"]
