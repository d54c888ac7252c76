"""Counting, as the provider bills it: a ``Meter`` per model (tiktoken for OpenAI's formats,
Claude's accounting for Anthropic's), the cost of tool definitions and images, the shipped
vocabularies, and calibration from billed usage."""

from .accounting import Accounting, accounting_for
from .calibration import Pasted, billed_tokens, calibrate, load_calibrations, read_pasted
from .factor import Calibration
from .tokens import Layout, Meter, TokenCount, count

__all__ = ["Accounting", "Calibration", "Layout", "Meter", "Pasted", "TokenCount", "accounting_for", "billed_tokens",
           "calibrate", "count", "load_calibrations", "read_pasted"]
