"""One value for everything a policy can be given: the page, the command line, a workspace and a
corpus each make one ``PolicySettings`` and every policy is built from it (``policies.make``).

Before this value each caller built its own options dict, and a setting one of them forgot never
reached the policy: the error switches were on the page's Before / after but never in Run, Compare
or Corpus. The option names are this value's fields, flat (``options``), and ``make`` refuses any
other name, so a misspelt or forgotten option fails loudly instead of being dropped.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any

from ..compaction import Settings
from ..errors import InputError
from ..rules.ruleset import Rules
from ..summarize.history import DEFAULT_KEEP_STEPS
from .masking import DEFAULT_WINDOW


@dataclass(frozen=True)
class PolicySettings:
    """Every policy's settings: ``compaction`` is the rules' pass (threshold, keep_recent, the error
    switches), the rest each belong to one or a few policies (their names say which). ``rules``
    None: the book's. ``limit`` None: summarize at the threshold. ``context_window``: the model's,
    for the agents' triggers stated as a share of it (None: their source's own figure)."""

    rules: Rules | None = None
    label: str = "book"  # where the rules came from, for tables
    compaction: Settings = field(default_factory=Settings)
    summarize: bool = True  # rules: summarize when still over the threshold after the rules
    limit: int | None = None  # summarize, hybrid, rules: summarize at or above this many tokens
    keep_steps: int = DEFAULT_KEEP_STEPS  # summarize, hybrid, rules: newest steps kept verbatim
    window: int = DEFAULT_WINDOW  # masking, hybrid: tool outputs kept in full, newest first
    trigger: int = 100_000  # clear-tool-uses: clear once the prompt exceeds this many tokens
    keep: int = 3  # clear-tool-uses: newest tool uses kept
    clear_at_least: int = 0  # clear-tool-uses: clear nothing unless at least this many tokens go
    exclude_tools: tuple[str, ...] = ()  # clear-tool-uses: tools never cleared
    clear_tool_inputs: bool = False  # clear-tool-uses: clear the calls' arguments too
    context_window: int | None = None

    def __post_init__(self) -> None:
        for name in ("limit", "keep_steps", "window", "trigger", "keep", "clear_at_least", "context_window"):
            value = getattr(self, name)
            if value is not None and value < 0:
                raise InputError(f"{name} must be 0 or more", where=name, value=value)

    def options(self) -> dict[str, Any]:
        """The settings as ``make`` takes them, flat: the compaction settings' fields beside the
        others, and the summarization limit resolved (the threshold when it follows it)."""
        flat = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "compaction"}
        flat |= {f.name: getattr(self.compaction, f.name) for f in fields(Settings)}
        flat["limit"] = self.compaction.threshold if self.limit is None else self.limit
        return flat

    def with_options(self, **options: Any) -> PolicySettings:
        """These settings with some options changed by their flat names (a sweep's point, a
        command line's override); a name that is no option is refused."""
        unknown = sorted(set(options) - OPTIONS)
        if unknown:
            raise InputError(f"no strategy takes this option (the options: {', '.join(sorted(OPTIONS))})",
                             where="option", value=unknown[0])
        compaction = {key: value for key, value in options.items() if key in _COMPACTION}
        rest = {key: value for key, value in options.items() if key not in _COMPACTION}
        return replace(self, compaction=replace(self.compaction, **compaction), **rest)


_COMPACTION = frozenset(f.name for f in fields(Settings))
# Every option a policy can be given, by name: what ``make`` accepts.
OPTIONS = frozenset(PolicySettings().options())
