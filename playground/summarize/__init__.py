"""The last resort, when compaction was not enough: where to cut (``cut``), the summarization of
the span (``history``), the offline extractive summarizer (``offline``), an LLM as summarizer
(``online``, through the clients in ``playground.llm``), and which of the span's facts a summary
does not name (``dropped``). ``online`` is imported on its own: loading it loads the ``openai`` client."""

from .cut import CutStep, cut_steps, is_summary, span
from .dropped import dropped_facts
from .history import (
    DEFAULT_ITEM_BUDGET,
    DEFAULT_KEEP_STEPS,
    DEFAULT_PROMPT,
    DEFAULT_TRANSCRIPT_BUDGET,
    LOSS,
    STATUS_WORDS,
    Summarizer,
    SummaryReport,
    SummaryResult,
    SummarySettings,
    check_limit,
    run,
)
from .offline import OfflineSummarizer

__all__ = ["DEFAULT_ITEM_BUDGET", "DEFAULT_KEEP_STEPS", "DEFAULT_PROMPT", "DEFAULT_TRANSCRIPT_BUDGET", "LOSS",
           "STATUS_WORDS", "CutStep", "OfflineSummarizer", "Summarizer", "SummaryReport", "SummaryResult",
           "SummarySettings", "check_limit", "cut_steps", "dropped_facts", "is_summary", "run", "span"]
