"""What a compaction pass gives back: each edit and skip with its reason, the report of the whole
pass, and the steps a teaching view walks (``Step``), with the words for every reason, stage and guard."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ..conversation import (
    Conversation,
    Item,
    JsonObject,
    Origin,
)
from ..meter.tokens import TokenCount

REASONS = {
    "rule_disabled": "the rule for this tool is disabled",
    "no_argument": "the call has no such argument",
    "already_compacted": "already compacted by this rule",
    "not_processed": "not processed by the model yet (no assistant turn after it; for a call, after its result)",
    "result_pending": "its result is not in the request yet",
    "error_result": "error result: a reference would disguise the failure",
    "keep_recent": "one of the newest tool uses the model has read (keep_recent)",
    "below_min_tokens": "smaller than the rule's min_tokens (a result: the item; a call: the argument it replaces)",
    "not_smaller": "the item with the replacement is not smaller, in tokens, than the original",
}
STAGES = {
    "below_threshold": "below the threshold: nothing changes",
    "compacted": "compacted: now below the threshold",
    "still_over": "still at or over the threshold after every edit",
}


@dataclass(frozen=True)
class Edit:
    """One replacement: the item at ``position`` in the conversation (``origin`` in the input)."""

    position: int
    origin: Origin | None
    tool: str
    kind: str  # "call" or "result"
    call_id: str
    tokens_before: int
    tokens_after: int
    rule: str
    argument: str | None = None
    missing_fields: tuple[str, ...] = ()


@dataclass(frozen=True)
class Skip:
    """A candidate the rules matched but compaction left alone, and why (a ``REASONS`` key).

    ``measured``: for ``below_min_tokens``, the tokens compared with ``min_tokens`` — the item's
    (a result) or the replaced argument's value as the call carries it (a call), a figure no row
    shows otherwise, so the detail's numbers can be checked."""

    position: int
    origin: Origin | None
    tool: str
    kind: str
    call_id: str
    reason: str
    detail: str = ""
    measured: int | None = None


@dataclass(frozen=True)
class Report:
    stage: str
    threshold: int
    tokens_before: int
    tokens_after: int
    edits: tuple[Edit, ...]
    skipped: tuple[Skip, ...]
    first_changed: Origin | None
    first_changed_position: int | None
    cached_prefix_tokens: int
    before: TokenCount
    after: TokenCount
    # tools whose output calling again does not bring back (``refetch.one_off_tools``), with why:
    # what the rules replaced of theirs is lost, not retrievable
    one_off: Mapping[str, str] = field(default_factory=dict)

    @property
    def saved(self) -> int:
        return self.tokens_before - self.tokens_after

    @property
    def tokens_lost(self) -> int:
        """Saved on tools whose output calling again does not bring back: gone for good."""
        return sum(edit.tokens_before - edit.tokens_after for edit in self.edits if edit.tool in self.one_off)

    @property
    def tokens_retrievable(self) -> int:
        """Saved behind references a tool call undoes."""
        return self.saved - self.tokens_lost


@dataclass(frozen=True)
class Compaction:
    conversation: Conversation
    report: Report


@dataclass(frozen=True)
class Step:
    """One step of the compaction pass, as a teaching view walks it (see ``walk``).

    ``phase`` is ``lookup`` (the rule row found for the item's tool, or none, and the call
    arguments remembered for its call id), ``template`` (the fields filled and the text they
    make), ``guard`` (one check: ``guard`` names it by the ``REASONS`` key it stops with,
    ``passed`` says whether the item got past it, ``detail`` why, with the figures compared),
    ``verdict`` (the ``edit`` made, with its tokens, or the ``skip`` and its reason) and, last of
    all, ``done`` (``items``: the request as the pass leaves it). Token figures are the item's
    tokens, as its row shows them, except in a call rule's ``below_min_tokens`` guard: that one
    compares (and names) the tokens of the argument the rule replaces.
    """

    phase: str
    position: int
    tool: str = ""
    kind: str = ""  # "call" or "result"
    call_id: str = ""
    rule: str | None = None  # the matched row as text, e.g. "tool_results: Read|read_file → …"
    pattern: str | None = None  # the matched row's tool pattern
    argument: str | None = None  # a call rule's argument
    arguments: JsonObject | None = None  # the call's arguments, remembered by call id
    values: Mapping[str, str] | None = None  # template: each field's value
    missing_fields: tuple[str, ...] = ()
    text: str | None = None  # template: the replacement text
    guard: str | None = None
    passed: bool | None = None
    detail: str = ""
    edit: Edit | None = None
    skip: Skip | None = None
    item: Item | None = None  # verdict of an edit: the item as it now stands
    tokens_before: int | None = None
    tokens_after: int | None = None
    items: tuple[Item, ...] | None = None  # done: every item after the pass


# The guards, in the order the pass checks them, as the question each one asks.
GUARDS = {
    "rule_disabled": "is the rule switched on?",
    "no_argument": "does the call have the argument the rule replaces?",
    "already_compacted": "is the text not already this rule's replacement?",
    "not_processed": "has the model read the result (an assistant turn after it; for a call, after its result)?",
    "result_pending": "is the call's result in the request?",
    "error_result": "is the result (the call's result, for a call) not an error?",
    "keep_recent": "is it older than the newest keep_recent tool uses the model has read?",
    "below_min_tokens": "is the item (for a call rule: the argument it replaces) at least the rule's min_tokens?",
    "not_smaller": "is the replacement smaller, in tokens, than the original?",
}
