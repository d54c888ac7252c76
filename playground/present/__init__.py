"""What a person is shown, as values first: the reports the CLI prints, the before/after view,
its HTML, the compaction step-through, the token view and what a policy keeps of a run's facts.
Nothing here decides anything."""

from .keeps import TYPE_WORDS, Keeps, KeptFact, dropped_line, what_it_keeps
from .render import STYLE, literal
from .view import CallView, call_view, format_title, threshold_range

__all__ = ["STYLE", "TYPE_WORDS", "CallView", "Keeps", "KeptFact", "call_view", "dropped_line", "format_title",
           "literal", "threshold_range", "what_it_keeps"]
