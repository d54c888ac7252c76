"""What a policy took from the agent: pieces of an earlier item that the agent *used after the
policy had hidden it*, read from the log itself.

A log records what the agent did next with the whole context in front of it. When, at call j,
its output (its text, or a tool call's arguments) holds a distinctive piece — a *span* — of an
earlier item that the policy had replaced or removed in call j's request, and that span appears
nowhere else in that request, then under the policy the agent would not have had it: it would
have had to fetch it again, or would have acted differently.

Spans (``spans_of``) are the pieces a model copies rather than guesses: identifiers with an
``_`` inside (8+ characters) or camelCase (11+), dotted names, paths, numbers of 4+ digits and text
lines of 20+ characters (tuned on hand-labelled cases, ``tests/labels/hidden_used.json``).
Spans found in the system prompt or the tool definitions are never counted (every request carries
them). Each item's spans are extracted once per run
(``SpanIndex``); a run's requests are then followed item by item (``Tracker``), so a replay stays
linear in its calls.

A use is **retrievable** when the item was replaced by a reference the agent can follow — a rule's
reference (a policy whose ``references`` is true: the rules policy) for a tool whose output
calling it again brings back (``refetch``) — and **lost** otherwise: summarized away, masked with no way back, cleared
(Anthropic's context editing keeps no copy), or a reference to a one-off tool.
"""

from __future__ import annotations

import json
import operator
import re
from bisect import bisect_left
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from itertools import compress, count, repeat
from typing import Any

from ..conversation import (
    Conversation,
    Item,
    Message,
    Origin,
    ToolCall,
    ToolResult,
    content_text,
    role_of,
    shared,
    tool_name,
)
from ..facts.spans import searched_text, spans_of
from ..meter.pieces import Cutter
from ..rules.refetch import one_off_tools

_ATOM = re.compile(r"[\w./~@+-]+")  # an identifier, dotted name, path or number: anything else is a line


def _fixed_text(conversation: Conversation) -> str:
    """The system prompt and the tool definitions: in every request, so never evidence."""
    parts = [content_text(conversation.instructions)]
    parts += [content_text(item.content) for item in conversation.items
              if isinstance(item, Message) and item.role in ("system", "developer")]
    for tool in conversation.tools:
        parts += [tool.name, tool.description, json.dumps(tool.parameters or {})]
    return "\n".join(parts)


@dataclass(frozen=True)
class SpanIndex:
    """Each item's spans that the agent ever wrote (only a span some assistant turn holds can be
    used after it was hidden, so only those are followed), without those of the system prompt and
    tool definitions, and for each such span the items that hold it, in order. Built once per
    conversation; every policy's replay of it shares one."""

    spans: tuple[frozenset[str], ...]
    where: Mapping[str, tuple[int, ...]]
    fixed: str  # the system prompt and tool definitions: a line inside one of theirs is no evidence either

    @classmethod
    def of(cls, conversation: Conversation) -> SpanIndex:
        fixed = _fixed_text(conversation)
        excluded = spans_of(fixed)
        found = [spans_of(searched_text(item)) for item in conversation.items]
        written = frozenset().union(*(spans for item, spans in zip(conversation.items, found, strict=True)
                                      if role_of(item) == "assistant")) - excluded
        spans = tuple(item_spans & written for item_spans in found)
        where: dict[str, list[int]] = {}
        for position, item_spans in enumerate(spans):
            for span in item_spans:
                where.setdefault(span, []).append(position)
        return cls(spans, {span: tuple(positions) for span, positions in where.items()}, fixed)


@dataclass(frozen=True)
class HiddenUse:
    """At replayed call ``call`` (its position in the run), the agent's output held ``span`` of
    the item at ``item`` (its position in the conversation), which that call's request had
    replaced or removed and showed nowhere else. ``tool`` is the item's tool (None for a message)."""

    call: int
    item: int
    tool: str | None
    span: str
    retrievable: bool


class Tracker:
    """Follows one replay's requests, call by call, and finds the hidden-then-used spans of each.

    It keeps how many parts of the current request's items show each indexed span (``_parts``).
    Consecutive requests mostly share a prefix (stored mode appends; per-call policies hand back
    the same edited items), and after the first difference most items are still the same objects,
    so only the items that changed are counted again, and of those only the parts that changed."""

    def __init__(self, conversation: Conversation, index: SpanIndex, references: bool,
                 shared: Callable[[tuple[Item, ...], tuple[Item, ...], int], int] = shared) -> None:
        self._items = conversation.items
        self._shared = shared  # how many leading items two requests have in common
        self._index = index
        self._original = {id(item): position for position, item in enumerate(self._items)}
        self._references = references  # the policy's replacements are references a tool call follows
        self._one_off = one_off_tools(conversation) if references else {}
        self._request: tuple[Item, ...] = ()
        self._shown: dict[str, int] = {}
        self._pieces: dict[str, frozenset[str]] = {}  # spans of the pieces of texts the policy made
        self._cutter = Cutter()  # a summary written again is cut only after what it shares with the last
        self._held: dict[int, tuple[Item, list[tuple[object, frozenset[str]]]]] = {}  # made items shown: their parts
        # spans by line of those pieces: a summary written at every call is the last one's lines and a few more
        self._lines: dict[str, frozenset[str]] = {}
        self._made: dict[Origin, Item] = {}  # items the policy made, by the origin they kept
        self._text: dict[int, tuple[Item, str]] = {}  # id(item) -> (item, its text) of the last request read whole
        # the last call's request, and how many of its leading items are the run's own (0: not all of them)
        self._last: tuple[tuple[Item, ...], int] = ((), 0)

    def _parts(self, item: Item) -> list[tuple[object, frozenset[str]]]:
        """What ``item`` shows, in parts that two requests' items can share: an input item whole
        (its index entry), a text the policy made in pieces (``meter.pieces``: no span reaches across
        a line), each keyed by its text. A summary written again at every call is the last one and
        a few lines more, so all but its last pieces are the last one's."""
        position = self._original.get(id(item))
        if position is not None and self._items[position] is item:
            return [(position, self._index.spans[position])]
        held = self._held.get(id(item))
        if held is not None and held[0] is item:  # it came in an earlier call and is leaving now
            return held[1]
        known = self._pieces
        parts = []
        for piece in self._cutter.cut(searched_text(item)):
            spans = known.get(piece)
            if spans is None:
                spans = known[piece] = self._text_spans(piece)
            parts.append((piece, spans))
        return parts

    def _text_spans(self, text: str) -> frozenset[str]:
        """The indexed spans of a text the policy made, line by line, so each line's are found
        once per run, and the lines already seen are looked up in C."""
        lines = text.split("\n")
        known = self._lines
        found = list(map(known.get, lines))
        for position in list(compress(count(), map(operator.is_, found, repeat(None)))):  # the new lines
            line = lines[position]
            spans = known.get(line)
            if spans is None:
                spans = known[line] = frozenset(s for s in spans_of(line) if s in self._index.where)
            found[position] = spans
        return frozenset().union(*found)

    def _follow(self, request: tuple[Item, ...]) -> None:
        same = self._shared(self._request, request, 0)
        old, new = self._request[same:], request[same:]
        if old and new:  # an edit in the history: only the items that changed are counted again
            kept = {id(item) for item in old} & {id(item) for item in new}
            old, new = [i for i in old if id(i) not in kept], [i for i in new if id(i) not in kept]
        # the parts that left and came, less those that did both (most of a summary written again)
        came: dict[object, list[frozenset[str]]] = {}
        held = self._held  # a made item's parts, read when it comes, are those it takes away when it leaves
        for item in new:
            parts = self._parts(item)
            if id(item) not in self._original:
                held[id(item)] = (item, parts)
            for key, spans in parts:
                came.setdefault(key, []).append(spans)
        shown = self._shown
        for item in old:
            parts = self._parts(item)
            if held.get(id(item), (None,))[0] is item:  # (no item is both in ``old`` and in ``new``)
                del held[id(item)]
            for key, spans in parts:
                if came.get(key):
                    came[key].pop()
                    continue
                for span in spans:
                    shown[span] -= 1
        for added in came.values():
            for spans in added:
                for span in spans:
                    shown[span] = shown.get(span, 0) + 1
        made = self._made
        for item in old:
            if id(item) not in self._original and item.origin is not None:
                made.pop(item.origin, None)
        for item in new:
            if id(item) not in self._original and item.origin is not None:
                made[item.origin] = item
        self._request = request

    def _as_it_ran(self, request: tuple[Item, ...], start: int) -> bool:
        """Whether ``request`` is the run's first ``start`` items as they were. When the last call's
        was, only what follows the part the two share is compared (the replay asked the same of its
        sent side: ``LastShared`` answers at once), not the whole run at every call of a policy that
        has not fired yet."""
        last, ran = self._last
        known = min(ran, self._shared(last, request, 0)) if ran else 0
        ran = start if len(request) == start and shared(request, self._items, known) == start else 0
        self._last = (request, ran)
        return bool(ran)

    def _visible_text(self, request: tuple[Item, ...]) -> str:
        """The request's text, for a line that may stand inside a longer one (a quote in a message)."""
        known, texts = self._text, {}
        for item in request:
            entry = known.get(id(item))
            texts[id(item)] = entry if entry is not None and entry[0] is item else (item, searched_text(item))
        self._text = texts  # this request's items only: a long run's every summary is not kept to its end
        return "\n".join(texts[id(item)][1] for item in request)

    def _retrievable(self, position: int, request: tuple[Item, ...], start: int) -> bool:
        """Whether the hidden item at ``position`` is behind a reference the agent can follow."""
        original = self._items[position]
        if not (self._references and isinstance(original, ToolCall | ToolResult)
                and original.name not in self._one_off):
            return False
        if original.origin is not None:
            made = self._made.get(original.origin)
        else:  # no origin: only a request with every position in place says what replaced it
            made = request[position] if len(request) == start else None
        return type(made) is type(original) and made.call_id == original.call_id  # type: ignore[union-attr]

    def call(self, number: int, start: int, end: int, request: tuple[Item, ...]) -> tuple[HiddenUse, ...]:
        """The hidden-then-used spans of the call whose reply is items ``start:end`` and whose
        request (as the policy made it) is ``request``."""
        if self._as_it_ran(request, start):
            return ()  # the run as it was: every earlier item is shown, so nothing was hidden (followed later)
        self._follow(request)
        where, shown = self._index.where, self._shown
        used: dict[str, int] = {}
        for position in range(start, end):
            for span in self._index.spans[position]:
                if span in used or shown.get(span, 0):
                    continue
                holders = where[span]
                earlier = bisect_left(holders, start)
                if earlier:
                    used[span] = holders[earlier - 1]  # the latest earlier item that held it
        lines = [span for span in used if not _ATOM.fullmatch(span)]
        if lines:  # a line is visible also inside a longer line: "Fix this: <the line>"
            text = self._visible_text(request)
            for span in lines:
                if span in text or span in self._index.fixed:
                    del used[span]
        return tuple(HiddenUse(number, item, tool_name(self._items[item]), span,
                               self._retrievable(item, request, start))
                     for span, item in sorted(used.items(), key=lambda pair: (pair[1], pair[0])))


def calls_with(uses: Iterable[HiddenUse]) -> int:
    """How many calls have at least one hidden-then-used span."""
    return len({use.call for use in uses})


def lost_calls(uses: Iterable[HiddenUse]) -> int:
    """Of those, how many used a span from content a tool call cannot bring back."""
    return len({use.call for use in uses if not use.retrievable})


def to_json(uses: Iterable[HiddenUse]) -> list[dict[str, Any]]:
    return [{"call": use.call, "item": use.item, "tool": use.tool, "span": use.span, "retrievable": use.retrievable}
            for use in uses]
