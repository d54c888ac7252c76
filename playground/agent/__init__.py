"""Into the agent: the tuned policy run where the agent runs, as replay's stored mode ran it.

``load_policy`` reads the workspace the page saves (or a rules file) into one ``PolicyFile``;
``compacting`` wraps an official ``openai`` or ``anthropic`` client so every ``chat.completions``,
``responses`` and ``messages`` request sends what replay would send at that call (``client``; its
core ``endpoint``; ``session``: the run's state; ``record``: each call's log line).
"""

from .client import Compacting, compacting
from .policy_file import PolicyFile, load_policy
from .record import CallRecord, ItemEdit
from .session import Session

__all__ = ["CallRecord", "Compacting", "ItemEdit", "PolicyFile", "Session", "compacting", "load_policy"]
