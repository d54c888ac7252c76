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
from collections.abc import Callable, Iterable, Iterator, Mapping
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
from ..meter.pieces import Cutter
from ..rules.refetch import one_off_tools

MIN_IDENTIFIER = 8  # characters: shorter names (``result``, ``value``) are what any model writes unprompted
# camelCase names without an ``_`` need more: ``startTime``, ``projectDir``, ``randomUUID`` are what a
# model writes unprompted (wrong on the labelled runs), ``sessionsDir``, ``CorrelationStatus`` were copied
MIN_CAMEL = 11
MIN_LINE = 20  # characters of a stripped line

# runs of 8+ word characters and dots: the candidates (found by the regex engine), then judged in
# Python by ``_identifier`` / ``_dotted``
_WORD = re.compile(r"[A-Za-z_][\w.]{7,}")
# what a candidate needs to be judged at all: an ``_``, a ``.`` or, after its first character, anything
# but a lowercase ASCII letter or a digit (``_identifier`` and ``_dotted`` refuse the rest), found in C so
# most words never reach Python
_MAYBE = re.compile(r"[_.]|.[^a-z0-9]")
_ALNUM = re.compile(r"[^\W_]")  # a letter or digit, as ``str.isalnum`` has them
# a line of 20+ characters once stripped of spaces and of a leading line number (``cat -n``, Claude Code's Read)
_LINE = re.compile(rf"^[ \t]*(?:\d+(?:→|\t)[ \t]*)?(\S[^\n]{{{MIN_LINE - 2},}}\S)[ \t\r]*$", re.M)
_PATH = re.compile(r"[\w.~@+-]*(?:/[\w.@+-]+)+")  # tried only on the space-separated tokens holding a "/"
_DIGITS = re.compile(r"\d{4,}")  # a number when neither a word character nor a "." (a decimal, a version) touches it
_EXTENSION = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,7}$")
_ATOM = re.compile(r"[\w./~@+-]+")  # an identifier, dotted name, path or number: anything else is a line
# a dotted name ending in one of these is a file name (``registry.js``), whatever its length
FILE_EXTENSIONS = frozenset(("py", "js", "ts", "tsx", "jsx", "mjs", "cjs", "json", "jsonl", "md", "rst", "txt", "toml",
                             "yaml", "yml", "cfg", "ini", "sh", "rs", "go", "java", "kt", "c", "h", "cc", "cpp", "hpp",
                             "rb", "php", "html", "css", "scss", "csv", "sql", "lock", "log", "xml"))


def _identifier(word: str) -> bool:
    """A name distinctive enough to be copied, not guessed: 8+ characters with an ``_`` inside
    (``separability_matrix``; ``__init__``-style padding aside) or 11+ with a capital inside
    (``CompoundModel``)."""
    core = word.strip("_")
    if "_" in core:
        return len(word) >= MIN_IDENTIFIER
    return len(word) >= MIN_CAMEL and core[1:] != core[1:].lower()


def _dotted(name: str) -> bool:
    """A dotted name distinctive enough to be copied: three or more parts
    (``this.snapshotter.diff``), a part that is itself a distinctive identifier
    (``conversationsAdapter.transformMessages``) or a file name (``registry.js``). Two plain parts
    (``Date.now``, ``np.zeros``, ``logger.warn``) are a library's API, or composed from a name the
    agent already had: on the labelled runs they were wrong more often than right."""
    parts = name.split(".")
    return all(parts) and (len(parts) >= 3 or any(map(_identifier, parts)) or parts[-1] in FILE_EXTENSIONS)


def _path(text: str) -> bool:
    """A path: a ``/`` and either a file extension or three or more segments, with a letter in it
    (``12/05/2024`` is a date)."""
    segments = [s for s in text.split("/") if s]
    return (len(segments) >= 2 or text.startswith("/")) and any(c.isalpha() for c in text) and (
        bool(_EXTENSION.search(segments[-1] if segments else "")) or len(segments) >= 3)


def _number(text: str, start: int, end: int) -> bool:
    before = text[start - 1] if start else " "
    return not (before.isalnum() or before in "_." or (end < len(text) and (text[end].isalnum() or text[end] == "_")))


def spans_of(text: str) -> frozenset[str]:
    """The distinctive spans of ``text`` (see the module docstring). None reaches across a line
    (no pattern matches a newline, and one stands where the text ends), so a text's spans are
    its lines' together."""
    found: set[str] = set()
    for run in filter(_MAYBE.search, _WORD.findall(text)):  # a plain lowercase word is never a span
        word = run.rstrip(".")
        if "." in word:
            if len(word) >= MIN_IDENTIFIER and _dotted(word):
                found.add(word)
            found.update(part for part in word.split(".") if _identifier(part))
        elif _identifier(word):
            found.add(word)
    if "/" in text:
        found.update(path for token in text.split() if "/" in token
                     for path in (m.group().rstrip(".") for m in _PATH.finditer(token)) if _path(path))
    found.update(m.group() for m in _DIGITS.finditer(text) if _number(text, m.start(), m.end()))
    found.update(filter(_ALNUM.search, _LINE.findall(text)))
    return frozenset(found)


def _strings(value: Any) -> Iterator[str]:
    """Every string inside a JSON value (a call's arguments as the model wrote them)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for inner in value.values():
            yield from _strings(inner)
    elif isinstance(value, list | tuple):
        for inner in value:
            yield from _strings(inner)


def searched_text(item: Item) -> str:
    """What an item says, as spans are read from it: a call's argument values (decoded, so a
    line of ``new_string`` is a line), a message's or a result's text."""
    if isinstance(item, ToolCall):
        try:
            parsed = json.loads(item.arguments)
        except (ValueError, RecursionError):
            return item.arguments
        return "\n".join(_strings(parsed))
    return content_text(item.content)


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
        if len(request) == start and shared(request, self._items) == start:
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
