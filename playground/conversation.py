"""The conversation model: one immutable shape for every wire format we read and write.

A conversation is a flat sequence of items, as in the book's ``request.contents``: messages,
tool calls and tool results. Each item remembers where it came from in the input (``Origin``)
and keeps the wire keys we do not model (``extra``), so exporting gives back the input.
"""

from __future__ import annotations

import enum
import functools
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from .errors import InputError

JsonObject = Mapping[str, Any]
EMPTY: JsonObject = MappingProxyType({})


def _empty() -> JsonObject:
    return EMPTY


def frozen(mapping: Mapping[str, Any] | None) -> JsonObject:
    """A read-only view of a shallow copy, for the ``extra`` fields of frozen items."""
    return MappingProxyType(dict(mapping)) if mapping else EMPTY


class Absent(enum.Enum):
    """A content key the wire message did not have at all (Chat assistants with tool calls
    often omit it), kept apart from an explicit ``null`` so exports give back the input."""

    ABSENT = "absent"


ABSENT = Absent.ABSENT


@dataclass(frozen=True)
class Part:
    """One block of multi-part content. Only text is modelled; other blocks ride along."""

    type: str
    text: str | None = None
    extra: JsonObject = field(default_factory=_empty)


Content = str | tuple[Part, ...] | None | Absent


def content_text(content: Content) -> str:
    """The text a model reads from ``content``: text parts joined, other parts skipped."""
    if isinstance(content, str):
        return content
    if isinstance(content, tuple):
        return "".join(part.text for part in content if part.text is not None)
    return ""


def has_non_text(content: Content) -> bool:
    """Whether content holds blocks (images, files…) whose tokens we cannot count offline."""
    return isinstance(content, tuple) and any(part.text is None for part in content)


@dataclass(frozen=True, order=True)
class Origin:
    """Where an item sits in the input: ``index`` in the input's own list (``messages`` or
    ``input``) and, when one message holds several blocks or calls, ``block`` within it."""

    index: int
    block: int | None = None

    def __str__(self) -> str:
        return f"item {self.index}" if self.block is None else f"item {self.index}, block {self.block}"


@dataclass(frozen=True, kw_only=True)
class Message:
    """Text (or other content) from one role: system, developer, user or assistant."""

    role: str
    content: Content
    name: str | None = None
    origin: Origin | None = None
    extra: JsonObject = field(default_factory=_empty)


@dataclass(frozen=True, kw_only=True)
class ToolCall:
    """The assistant asking for a tool. ``arguments`` is JSON text, as the APIs send it."""

    call_id: str
    name: str
    arguments: str
    origin: Origin | None = None
    extra: JsonObject = field(default_factory=_empty)

    def parsed_arguments(self) -> JsonObject | None:
        """The arguments as a read-only object, or None when they are not a JSON object
        (models do sometimes emit malformed arguments; we keep those untouched)."""
        return self._parsed

    @functools.cached_property
    def _parsed(self) -> JsonObject | None:
        # Parsed once per call item (compaction and the page ask many times per rerun); the cache
        # lives and dies with the item, so no session's arguments outlive it in a module global.
        # (A frozen dataclass still allows this: cached_property writes the instance __dict__.)
        try:
            value = json.loads(self.arguments)
        except (ValueError, RecursionError):
            return None
        return MappingProxyType(value) if isinstance(value, dict) else None


@dataclass(frozen=True, kw_only=True)
class ToolResult:
    """What a tool returned. ``name`` is the tool's name, resolved from the matching call."""

    call_id: str
    content: Content
    name: str = ""
    is_error: bool = False
    origin: Origin | None = None
    extra: JsonObject = field(default_factory=_empty)


Item = Message | ToolCall | ToolResult


@dataclass(frozen=True)
class Tool:
    """A tool definition offered to the model. ``kind`` is "function" for the functions we can
    count; hosted tools (web search, …) keep their whole wire form in ``extra``."""

    name: str
    description: str = ""
    parameters: JsonObject | None = None
    kind: str = "function"
    extra: JsonObject = field(default_factory=_empty)


@dataclass(frozen=True)
class AgentCompaction:
    """Where the agent compacted its own context, as its log records it (Claude Code's
    ``compact_boundary``, Codex's ``compacted`` line, an OpenHands ``Condensation``).

    Every request the agent sent after it, until its next compaction, is ``kept`` (earlier items of
    the log it still sent, in order), then ``added`` (what it sent that the log holds nowhere else:
    Codex's ``replacement_history``, a user message Codex cut to fit), then the log's items from
    ``position`` on as they came — the first of them the agent's summary when the log has one
    (``summary``). Positions index ``log``: the conversation's items as read, held so a replay can
    find them by identity in any request, whatever a policy dropped before them."""

    position: int
    kept: tuple[int, ...] = ()
    added: tuple[Item, ...] = ()
    summary: bool = True
    tokens_before: int | None = None  # the context's size when it compacted, as the agent counted it
    trigger: str | None = None  # "auto", "manual", … where the log says
    where: str = ""  # the log line or event that records it
    # True when no line of the log records it: it was found from the bills (a drop that stays down) and
    # ``kept`` is a reconstruction — the agent's known rule, or the cut that best matches the next bill
    inferred: bool = False
    log: tuple[Item, ...] = field(default=(), compare=False, repr=False)


@dataclass(frozen=True)
class Conversation:
    """A request: the items, plus what surrounds them in the wire format.

    ``instructions`` holds text that lives outside the item list (Anthropic ``system``,
    Responses ``instructions``); Chat system messages stay items. ``extra`` keeps every other
    request key (``tool_choice``, ``temperature``…) for export; ``bare`` marks input that was a
    bare list of messages rather than a request body. ``source`` names the agent log a conversation
    was read from (``format`` is then the API format it is written back in).
    """

    items: tuple[Item, ...]
    format: str = "native"
    model: str | None = None
    instructions: Content = None
    tools: tuple[Tool, ...] = ()
    extra: JsonObject = field(default_factory=_empty)
    bare: bool = False
    notes: tuple[str, ...] = field(default=(), compare=False)
    source: str = ""  # the agent log it was read from (claude-code, codex, …); empty for an API request
    # What the log says the provider billed: (position, input tokens) for the request made of the items
    # before ``position`` — the call whose reply starts there. Cached tokens included (they are input).
    billed: tuple[tuple[int, int], ...] = field(default=(), compare=False)
    billed_digits: int | None = field(default=None, compare=False)  # the log rounds its bills to this many
    # significant digits at least (Aider's "4.5k"); None where it records them exactly
    compactions: tuple[AgentCompaction, ...] = field(default=(), compare=False)  # the agent's own, from its log
    # When the run was made (ISO 8601, as its log dates it; None: the log does not say): the date whose
    # prices a logged call is billed at (``run.prices.PriceTable.dated``).
    started: str | None = field(default=None, compare=False)
    # (base, items) when ``grown`` made ``items`` as ``base`` with items appended: what lets ``extends``
    # answer for a replay's request at every call without comparing the two (see ``grown``)
    grew: tuple[tuple[Item, ...], tuple[Item, ...]] | None = field(default=None, compare=False, repr=False)

    def with_items(self, items: Iterable[Item]) -> Conversation:
        return replace(self, items=tuple(items), grew=None)

    def grown(self, base: tuple[Item, ...], new: tuple[Item, ...]) -> Conversation:
        """This conversation with the items ``base`` and then ``new``, remembering that it grew
        from ``base``: a replay builds each call's request so, and a policy that kept the last one
        learns it only extends it from ``grew`` (an identity check), not by comparing thousands
        of items at every call of a long run."""
        items = base + new
        return replace(self, items=items, grew=(base, items))


FALL_TOKENS = 8_000  # a bill falls by at least this many tokens…
FALL_FROM = 32_000  # …from at least this many, to count as the agent cutting its context


def falls(bills: Sequence[int], share: float) -> list[int]:
    """Where a run's bills (in call order) fall as a cut makes them fall: by at least ``share`` of the
    bill before and ``FALL_TOKENS``, from at least ``FALL_FROM`` (smaller falls are a meter's noise or a
    shorter system prompt), and staying down — the next bill takes back less than half the fall (a lone
    low bill is another model's side call). A run's requests otherwise only grow. One rule for every
    reader and the run stage; ``share`` is theirs (a reader that knows its agent's rule can take less)."""
    found = []
    for k in range(1, len(bills)):
        high, low = bills[k - 1], bills[k]
        fall = high - low
        if high < FALL_FROM or fall < max(FALL_TOKENS, share * high):
            continue
        if k + 1 < len(bills) and bills[k + 1] - low >= fall / 2:
            continue
        found.append(k)
    return found


class Same:
    """A key part that is one particular object: equal only to itself, and held, so the object
    cannot be freed while the key lives (an ``id()`` alone could be reused by a new object)."""

    __slots__ = ("value",)

    def __init__(self, value: object) -> None:
        self.value = value

    def __hash__(self) -> int:
        return id(self.value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Same) and other.value is self.value


def is_instruction(item: Item) -> bool:
    """A system or developer message: instructions, not a turn (its presence also changes what
    tool definitions cost, and summarization never cuts one)."""
    return isinstance(item, Message) and item.role in ("system", "developer")


def role_of(item: Item) -> str:
    """The role an item speaks with: tool calls are the assistant's, results the tool's."""
    if isinstance(item, Message):
        return item.role
    return "assistant" if isinstance(item, ToolCall) else "tool"


def turn_starts(items: Sequence[Item]) -> list[int]:
    """Positions where an assistant turn begins (an assistant item after a non-assistant one): in
    a run, each is one LLM call's reply."""
    return [p for p, item in enumerate(items)
            if role_of(item) == "assistant" and (p == 0 or role_of(items[p - 1]) != "assistant")]


def turn_end(items: Sequence[Item], start: int) -> int:
    """Where the assistant turn beginning at ``start`` ends (the position after its last item)."""
    end = start
    while end < len(items) and role_of(items[end]) == "assistant":
        end += 1
    return end


def item_kind(item: Item) -> str:
    """``message``, ``call`` or ``result``: the words reports and the UI use."""
    if isinstance(item, Message):
        return "message"
    return "call" if isinstance(item, ToolCall) else "result"


def tool_name(item: Item) -> str | None:
    return item.name if isinstance(item, ToolCall | ToolResult) else None


def link(items: Iterable[Item], where: Any = str, latest: dict[str, str] | None = None) -> tuple[Item, ...]:
    """Give each tool result the name of the most recent earlier call with its id.

    Real traces reuse call ids, so we pair with the latest call rather than reject the file.
    A result whose id matches no earlier call is an error; ``where`` turns an item's origin
    into the location named in that error. ``latest``: the calls' names by id before ``items``
    (a list read before, up to where these begin), updated as they are read, so a list that
    only grows is linked as it grows, as a whole read links it.
    """
    latest = {} if latest is None else latest
    linked: list[Item] = []
    for position, item in enumerate(items):
        if isinstance(item, ToolCall):
            latest[item.call_id] = item.name
        elif isinstance(item, ToolResult):
            name = latest.get(item.call_id)
            if name is None:
                location = where(item.origin) if item.origin else f"item {position}"
                raise InputError("tool result's call id matches no earlier tool call", where=location,
                                 value=item.call_id)
            linked.append(replace(item, name=name) if item.name != name else item)
            continue
        linked.append(item)
    return tuple(linked)


def extends(items: tuple[Item, ...], known: tuple[Item, ...],
            grew: tuple[tuple[Item, ...], tuple[Item, ...]] | None = None) -> bool:
    """``items`` begins with ``known``: a request that grew by appending. Known at once when
    ``grew`` (its conversation's) says ``items`` was made from ``known``; else one comparison in C,
    identity first. Policies ask it at every call of a run, often of a request that differs near its
    start or its end (an earlier summary, a newly masked output): a chunk at each end is compared
    first, so such a "no" costs no copy of the whole request."""
    if items is known or (grew is not None and grew[1] is items and grew[0] is known):
        return True
    n = len(known)
    if len(items) < n:
        return False
    if n > 2 * _CHUNK and (items[:_CHUNK] != known[:_CHUNK] or items[n - _CHUNK:n] != known[n - _CHUNK:]):
        return False
    return items[:n] == known


def shared(old: tuple[Item, ...], new: tuple[Item, ...], at_least: int = 0) -> int:
    """How many leading items ``new`` has in common with ``old`` (the very same objects, or equal
    ones): where a request first differs from the last. ``at_least``: the caller knows the first
    that many are the same objects (a policy's ``PolicyResult.kept``), so only what follows is
    compared. Replay asks it at every call of a run, so it compares whole slices in C (identity
    first) in chunks that double, then halves the one that differs: its cost is a few C passes
    over the shared part, not a Python step per item, and an item's ``__eq__`` runs only where two
    differ."""
    limit = min(len(old), len(new))
    start = min(at_least, limit)
    end = min(start + _CHUNK, limit)
    while start < limit:  # double the chunk while it matches
        if old[start:end] != new[start:end]:
            break
        start, end = end, min(limit, end + 2 * (end - start))
    else:
        return limit
    while end - start > 1:  # the first difference is in [start, end): halve it
        middle = (start + end) // 2
        if old[start:middle] == new[start:middle]:
            start = middle
        else:
            end = middle
    return start


_CHUNK = 64  # items compared before the chunk first doubles: most requests differ near their end


class LastShared:
    """``shared``, remembering the last two requests it was asked about: a replay's prompt side and
    its hidden-use tracker ask it of the same two at every call. Owned by one replay; it holds the
    two requests, so neither can be freed and another take its identity."""

    def __init__(self) -> None:
        self._last: tuple[tuple[Item, ...], tuple[Item, ...], int] | None = None

    def __call__(self, old: tuple[Item, ...], new: tuple[Item, ...], at_least: int = 0) -> int:
        last = self._last
        if last is not None and last[0] is old and last[1] is new:
            return last[2]
        same = shared(old, new, at_least)
        self._last = (old, new, same)
        return same


def links(items: Sequence[Item]) -> dict[int, int]:
    """Map every tool result's position to the position of the call it answers: the most recent
    earlier call with its id, as the readers pair them. Unlike ``pairs`` this keeps a second result
    of one call (real logs repeat ids), which a cut must not part from that call either."""
    open_calls: dict[str, int] = {}
    answering: dict[int, int] = {}
    for position, item in enumerate(items):
        if isinstance(item, ToolCall):
            open_calls[item.call_id] = position
        elif isinstance(item, ToolResult) and item.call_id in open_calls:
            answering[position] = open_calls[item.call_id]
    return answering


def pairs(items: tuple[Item, ...]) -> dict[int, int]:
    """Map each tool call's position to the position of the result that answers it.

    A result answers the most recent earlier call with its id, so a reused id pairs correctly;
    a call answered twice maps to its first result. Calls with no result yet are absent.
    """
    answered: dict[int, int] = {}
    for result, call in links(items).items():
        answered.setdefault(call, result)
    return answered


def pairing_notes(items: tuple[Item, ...], where: Any = str) -> tuple[str, ...]:
    """What pairing calls with results had to decide, in words for the notes: a call id shared by
    calls that are open at the same time, or by more results than calls (pairing is then a choice:
    each result answers the latest earlier call with its id, as ``pairs`` does), and the calls with
    no result (left as they are: compaction waits for a call's result). A call id reused after its
    call was answered, as SWE-agent does, is not ambiguous and gets no note."""
    def place(position: int) -> str:
        origin = items[position].origin
        return where(origin) if origin else f"item {position}"

    answered = pairs(items)
    by_id: dict[str, list[int]] = {}
    ambiguous: dict[str, None] = {}
    for position, item in enumerate(items):
        if isinstance(item, ToolCall | ToolResult):
            earlier = by_id.setdefault(item.call_id, [])
            latest_call = next((p for p in reversed(earlier) if isinstance(items[p], ToolCall)), None)
            second_call = isinstance(item, ToolCall) and latest_call not in answered  # while the first still waits
            extra_result = isinstance(item, ToolResult) and answered.get(latest_call) != position  # its call is taken
            if latest_call is not None and (second_call or extra_result):
                ambiguous[item.call_id] = None
            earlier.append(position)
    notes = []
    for call_id in ambiguous:
        positions = by_id[call_id]
        calls = [p for p in positions if isinstance(items[p], ToolCall)]
        results = [p for p in positions if isinstance(items[p], ToolResult)]
        unpaired = [p for p in results if p not in answered.values()]
        said = (f"the call id {call_id!r} is shared by {_counted(calls, 'call', place)} and "
                f"{_counted(results, 'result', place)}: which result answers which call is a guess, so each result "
                "is paired with the latest call before it with that id")
        if unpaired:
            said += (f"; {_listed(unpaired, place)} then answer{'s' if len(unpaired) == 1 else ''} no call (a rule "
                     "for that call's tool still applies, with no arguments to fill its template)")
        notes.append(said)
    pending = [p for p, item in enumerate(items) if isinstance(item, ToolCall) and p not in answered]
    if pending:
        notes.append(f"{_counted(pending, 'call', place)} with no result: left as "
                     f"{'it is' if len(pending) == 1 else 'they are'} (a call is compacted only once its result is in)")
    return tuple(notes)


def repeated_id_notes(items: tuple[Item, ...], where: Any = str) -> tuple[str, ...]:
    """Call ids that more than one call of the request carries, for a request sent to Anthropic: its
    Messages API refuses one whose ``tool_use`` ids repeat ("tool_use ids must be unique"), even where
    each call was answered before the next took the id (SWE-agent reuses them so). Said for Anthropic's
    format only (and for a request exported to it): a refusal by OpenAI's APIs is not known, so none is
    claimed there."""
    def place(position: int) -> str:
        origin = items[position].origin
        return where(origin) if origin else f"item {position}"

    by_id: dict[str, list[int]] = {}
    for position, item in enumerate(items):
        if isinstance(item, ToolCall):
            by_id.setdefault(item.call_id, []).append(position)
    repeated = {call_id: positions for call_id, positions in by_id.items() if len(positions) > 1}
    if not repeated:
        return ()
    shown = "; ".join(f"{call_id!r} by {_counted(positions, 'call', place)}" for call_id, positions in
                      list(repeated.items())[:3])
    more = f"; and {len(repeated) - 3} more ids" if len(repeated) > 3 else ""
    return (f"Anthropic refuses a request whose tool_use ids repeat: {len(repeated)} call "
            f"id{'' if len(repeated) == 1 else 's'} {'is' if len(repeated) == 1 else 'are'} given to more than one "
            f"call ({shown}{more}). Give each call its own id, and its result the same, before sending it to Claude.",)


def _listed(positions: list[int], place: Any, shown: int = 5) -> str:
    named = ", ".join(place(p) for p in positions[:shown])
    return named + (f" and {len(positions) - shown} more" if len(positions) > shown else "")


def _counted(positions: list[int], noun: str, place: Any) -> str:
    return f"{len(positions)} {noun}{'' if len(positions) == 1 else 's'} ({_listed(positions, place)})"
