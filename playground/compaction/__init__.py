"""Rule-based compaction behind a token threshold.

Count first: below the threshold nothing changes (every edit costs a possible re-fetch and
breaks the provider's prompt-cache prefix). At or above it, one pass over the items applies the
rules, remembering each call's arguments by position so its result's reference can name the
path or query. Guards the book's listing lacks: tool uses the model has not read yet (a result
with no assistant turn after it, and its call; a call whose result is not in yet), the newest
``keep_recent`` tool uses it has read, and error results (flagged by the format or recognised by
the rules' error patterns) are left alone; so is what is below a rule's
``min_tokens`` (a result's item tokens; for a call rule, the tokens of the argument it replaces, so
one large argument never lifts a small one over the bar); a replacement that is not smaller is
skipped; a second pass changes nothing.

The pass is a generator (``walk``) that yields each step — rule lookup, template, every guard,
verdict — so a teaching view can replay exactly what the engine does; ``apply_rules`` and
``compact`` run that same generator to the end.

The pass is ``walker``; what it is told, ``settings``; what it gives back, ``report``.
"""

from .report import GUARDS, REASONS, STAGES, Compaction, Edit, Report, Skip, Step
from .settings import DEFAULT_THRESHOLD, Settings
from .walker import DecisionCache, apply_rules, compact, final_items, walk

__all__ = ["DEFAULT_THRESHOLD", "GUARDS", "REASONS", "STAGES", "Compaction", "DecisionCache", "Edit", "Report",
           "Settings", "Skip", "Step", "apply_rules", "compact", "final_items", "walk"]
