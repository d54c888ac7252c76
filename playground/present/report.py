"""Counts and compaction reports as plain JSON, for the CLI, the UI's downloads and tests.

Indices are positions in the input's own list (``messages`` for Chat and Anthropic, ``input``
for Responses, ``items`` for native); ``block`` names a block or call inside one message.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import formats
from ..compaction import REASONS, STAGES, Edit, Report, Skip
from ..conversation import Conversation, Item, Origin, item_kind, role_of, tool_name
from ..engine import Optimized
from ..meter.tokens import TokenCount
from ..summarize.history import LOSS, STATUS_WORDS, SummaryResult


def _place(origin: Origin | None, position: int) -> dict[str, Any]:
    if origin is None:
        return {"index": position}
    return {"index": origin.index} if origin.block is None else {"index": origin.index, "block": origin.block}


def _item(item: Item, position: int, tokens: int) -> dict[str, Any]:
    row = {**_place(item.origin, position), "kind": item_kind(item), "role": role_of(item), "tokens": tokens}
    if tool_name(item):
        row["tool"] = tool_name(item)
    return row


def count_to_json(count: TokenCount, conversation: Conversation) -> dict[str, Any]:
    return {
        "total": count.total,
        "model": count.model,
        "encoding": count.encoding,
        "accounting": count.accounting,
        "exact": count.exact,
        "estimate_because": list(count.notes),
        "format": conversation.source or conversation.format,
        "tools": count.tools,
        "instructions": count.instructions,
        "priming": count.priming,
        **({"unlogged": count.unlogged} if count.unlogged else {}),
        "items": [_item(item, p, t) for p, (item, t) in enumerate(zip(conversation.items, count.items, strict=True))],
        "notes": list(formats.notes(conversation)),
    }


def _edit(edit: Edit, one_off: Mapping[str, str]) -> dict[str, Any]:
    row = {**_place(edit.origin, edit.position), "item": edit.position, "tool": edit.tool, "kind": edit.kind,
           "call_id": edit.call_id, "tokens_before": edit.tokens_before, "tokens_after": edit.tokens_after,
           "rule": edit.rule, "retrievable": edit.tool not in one_off}
    if edit.tool in one_off:
        row["lost_because"] = one_off[edit.tool]
    if edit.argument is not None:
        row["argument"] = edit.argument
    if edit.missing_fields:
        row["missing_fields"] = list(edit.missing_fields)
        row["note"] = "fields the call does not have were rendered as 'unknown': " + ", ".join(edit.missing_fields)
    return row


def _skip(skip: Skip) -> dict[str, Any]:
    row = {**_place(skip.origin, skip.position), "item": skip.position, "tool": skip.tool, "kind": skip.kind,
           "call_id": skip.call_id, "reason": skip.reason, "why": REASONS[skip.reason]}
    if skip.detail:
        row["detail"] = skip.detail
    if skip.measured is not None:
        row["measured_tokens"] = skip.measured  # what min_tokens was compared with (the detail's figure)
    return row


def report_to_json(report: Report) -> dict[str, Any]:
    position = report.first_changed_position
    first = _place(report.first_changed, position) if position is not None else {}
    return {
        "stage": report.stage,
        "stage_meaning": STAGES[report.stage],
        "threshold": report.threshold,
        "tokens_before": report.tokens_before,
        "tokens_after": report.tokens_after,
        "tokens_saved": report.saved,
        "tokens_retrievable": report.tokens_retrievable,  # behind references a tool call undoes
        "tokens_lost": report.tokens_lost,  # replaced for tools whose output calling again does not bring back
        "exact": report.before.exact,
        "estimate_because": list(report.before.notes),
        "model": report.before.model,
        "encoding": report.before.encoding,
        "edits": [_edit(edit, report.one_off) for edit in report.edits],
        "skipped": [_skip(skip) for skip in report.skipped],
        "first_changed_index": first.get("index"),
        "first_changed_block": first.get("block"),
        "cached_prefix_tokens": report.cached_prefix_tokens,
    }


def summary_to_json(summarization: SummaryResult | None, limit: int | None = None) -> dict[str, Any]:
    """The summarization stage: whether it ran, the span it replaced, its tokens, and the loss."""
    if summarization is None:
        return {"status": "off" if limit is None else "not_needed", "limit": limit}
    report = summarization.report
    data: dict[str, Any] = {
        "status": report.status,
        "status_meaning": STATUS_WORDS[report.status],
        "limit": report.limit,
        "tokens_before": report.tokens_before,
        "tokens_after": report.tokens_after,
    }
    if report.start is not None:
        data["span"] = {"first_item": report.start, "end_item": report.end, "items": report.end - report.start}
        if report.span_origin:
            data["span"]["first_index"], data["span"]["last_index"] = report.span_origin
        data["summarizer"] = report.summarizer
    if summarization.plan is not None:
        data["extends_earlier_summary"] = summarization.plan.previous_summary
    if report.status == "summarized":
        data["summary_index"] = report.summary_position
        data["reversible"] = False
        data["loss"] = LOSS
    if report.status in ("summarized", "not_smaller"):
        data["summary_tokens"] = report.summary_tokens
        data["span_tokens"] = report.span_tokens
    if report.status != "not_needed":
        data["still_over"] = report.still_over
        if report.still_over:
            data["still_over_meaning"] = report.still_over_words
    if report.error:
        data["error"] = report.error
    if report.detail:
        data["detail"] = report.detail
    return data


def optimized_to_json(optimized: Optimized, summary_limit: int | None) -> dict[str, Any]:
    """The whole optimizer's report: compaction, then summarization, then the final size, with
    the three stages apart so a lossy summary's saving is not read as compaction's
    (``tokens_saved`` stays compaction's own)."""
    data = report_to_json(optimized.compaction.report)
    data["summarization"] = summary_to_json(optimized.summarization, summary_limit)
    data["tokens_after_compaction"] = optimized.tokens_after_compaction
    data["tokens_final"] = optimized.tokens_final
    data["tokens_saved_by_summary"] = optimized.tokens_after_compaction - optimized.tokens_final
    data["stages"] = [{"stage": stage.key, "label": stage.label, "tokens": stage.tokens, "saved": stage.saved,
                       "lossy": stage.lossy} for stage in optimized.stages]
    return data
