"""The last resort, when compaction was not enough: where to cut (``cut``), the summarization of
the span (``history``), the offline extractive summarizer (``offline``), and an OpenAI-compatible
endpoint as summarizer (``endpoint``) with the rules for which key may go to which host
(``keys``). The endpoint is imported on its own: loading it loads the ``openai`` client."""

from .cut import CutStep, cut_steps, is_summary, span
from .history import (
    DEFAULT_ITEM_BUDGET,
    DEFAULT_KEEP_STEPS,
    DEFAULT_PROMPT,
    DEFAULT_TRANSCRIPT_BUDGET,
    LOSS,
    STATUS_WORDS,
    Summarization,
    Summarizer,
    SummarizerError,
    SummaryReport,
    SummarySettings,
    check_limit,
    run,
)
from .offline import OfflineSummarizer

__all__ = ["DEFAULT_ITEM_BUDGET", "DEFAULT_KEEP_STEPS", "DEFAULT_PROMPT", "DEFAULT_TRANSCRIPT_BUDGET", "LOSS",
           "STATUS_WORDS", "CutStep", "OfflineSummarizer", "Summarization", "Summarizer", "SummarizerError",
           "SummaryReport", "SummarySettings", "check_limit", "cut_steps", "is_summary", "run", "span"]
