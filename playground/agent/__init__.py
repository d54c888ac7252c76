"""Into the agent: the tuned policy run where the agent runs, as replay's stored mode ran it.

``load_policy`` reads the workspace the page saves (or a rules file) into one ``PolicyFile``;
``compacting`` wraps an official ``openai`` or ``anthropic`` client so every ``chat.completions``,
``responses`` and ``messages`` request sends what replay would send at that call (``client``; its
core ``endpoint``; ``session``: the run's state; ``record``: each call's log line). The framework
adapters run the same core where a framework calls the model itself: ``langchain_middleware``
(LangChain v1's ``CompactingMiddleware``) and ``agents_sdk`` (the OpenAI Agents SDK's
``CompactingFilter``). Each loads its framework, which the app does not install, only when one is
made (``framework``), and is imported by its module path. ``seed_hook`` is the
book's own loop's (``CompactionHook``, called in the place of Listing 6.5's ``apply_compaction``),
which imports no framework (``pg.seed_hook`` makes one; the name stays the module's here).
"""

from .client import Compacting, compacting
from .policy_file import PolicyFile, load_policy
from .record import CallRecord, ItemEdit
from .seed_hook import CompactionHook
from .session import Session

__all__ = ["CallRecord", "Compacting", "CompactionHook", "ItemEdit", "PolicyFile", "Session", "compacting",
           "load_policy"]
