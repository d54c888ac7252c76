"""Where a compaction pass over a growing request has to start.

A replay in stored mode sends, at each call, the request it sent last time with the newest items
appended. The earlier items were walked already, and their decisions cannot change: the item, its
call's arguments and the rule are the same. Only three kinds of item can be decided otherwise:
the new ones, those skipped last time for a reason that passes (not read yet, their result still
pending, among the newest ``keep_recent``), and the calls those answer. So the pass starts at the
first of them, moved back to the start of its assistant turn (a wire message begins there, so no
item's place — parallel, continued — changes), and the items before it are kept as they are. A
request that does not extend the last one walked (another run, per-call mode, a summary that
rewrote the history) is walked whole. So the Python work of a call no longer grows with the run."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable
from dataclasses import dataclass
from operator import itemgetter

from ..conversation import Item, ToolCall, ToolResult, extends, role_of
from ..rules.refetch import Carried, one_off

Saving = tuple[int, str, int]  # an edit's position, tool and tokens saved
TRANSIENT = frozenset({"not_processed", "result_pending", "keep_recent"})  # reasons a later call may not have


@dataclass(frozen=True)
class Pass:
    """Where a pass over a request starts, what it keeps before that, and which tools' output
    calling again does not bring back (``refetch``), judged on all of the request's calls."""

    start: int
    prefix: tuple[Item, ...]
    one_off: dict[str, str]
    # per-call mode: the edits in ``prefix`` that the request as it came does not have are kept;
    # what they saved, and how much of that is lost (their tool is one-off)
    keeps: bool
    kept: int = 0
    kept_saved: int = 0
    kept_lost: int = 0
    source: tuple[Item, ...] = ()  # the last request sent, whose first ``start`` items ``prefix`` holds


class Edits:
    """The edits that made the last request sent differ from the one given, in position order,
    with running sums (of all, and per tool): per call they are as many as the run's compacted
    items, so a pass from the frontier reads what those before it saved from the sums, and only
    the edits from the frontier on are replaced."""

    def __init__(self) -> None:
        self.positions: list[int] = []
        self.sums = [0]  # sums[k]: tokens saved by the first k edits
        self.tools: dict[str, tuple[list[int], list[int]]] = {}  # tool -> its edits' positions, their sums

    def keep_before(self, start: int) -> None:
        """Drop the edits at or after ``start``."""
        cut = bisect_left(self.positions, start)
        del self.positions[cut:], self.sums[cut + 1:]
        for positions, sums in self.tools.values():
            cut = bisect_left(positions, start)
            del positions[cut:], sums[cut + 1:]

    def add(self, edits: Iterable[Saving]) -> None:
        """Append edits at positions after those kept."""
        for position, tool, tokens in sorted(edits, key=itemgetter(0)):
            self.positions.append(position)
            self.sums.append(self.sums[-1] + tokens)
            positions, sums = self.tools.setdefault(tool, ([], [0]))
            positions.append(position)
            sums.append(sums[-1] + tokens)

    def saved_before(self, start: int) -> int:
        return self.sums[bisect_left(self.positions, start)]

    def lost_before(self, start: int, one_off: dict[str, str]) -> int:
        """Tokens saved before ``start`` by edits whose tool's output calling again does not bring back."""
        return sum(sums[bisect_left(positions, start)] for tool, (positions, sums) in self.tools.items()
                   if tool in one_off)


class Frontier:
    """The last request walked, what the pass made of it, and the first position a later pass
    must walk again; owned by a policy (one per run it replays)."""

    def __init__(self) -> None:
        self._input: tuple[Item, ...] = ()
        self._output: tuple[Item, ...] = ()
        self._start = 0
        self._open: dict[str, int] = {}  # call id -> position of its latest call, while no result answers it
        self._answered_by: dict[int, int] = {}  # result position -> the call it answers (as ``pairs`` pairs them)
        self._carried: dict[str, Carried] = {}  # tool -> its calls' argument names
        self._pending: tuple[dict[str, int], dict[int, int], dict[str, Carried]] | None = None
        self._edits = Edits()  # what made the last request sent differ from the one given

    def plan(self, items: tuple[Item, ...], grew: tuple[tuple[Item, ...], tuple[Item, ...]] | None = None
             ) -> Pass | None:
        """The pass over ``items`` when it extends the last request walked (stored mode: the last
        request as sent; per-call mode: the last request as it came), else None: walk it whole.
        ``grew``: the request's ``Conversation.grew``."""
        base = next((known for known in (self._output, self._input) if known and extends(items, known, grew)), None)
        if base is None:
            self._pending = None
            return None
        open_calls, answered_by = dict(self._open), {}
        carried = {tool: _copy(c) for tool, c in self._carried.items()}
        _add(items, len(base), open_calls, answered_by, carried)
        start = min(self._start, len(base))
        for position in range(start, len(items)):  # a result walked again needs the call it answers in the pass
            call = self._answered_by.get(position, answered_by.get(position))
            if call is not None:
                start = min(start, call)
        start = _turn_start(items, start)
        self._pending = (open_calls, answered_by, carried)
        tools = one_off(carried)
        if base is self._output:
            return Pass(start, self._output[:start], tools, keeps=False, source=self._output)
        edits = self._edits
        return Pass(start, self._output[:start], tools, True, bisect_left(edits.positions, start),
                    edits.saved_before(start), edits.lost_before(start, tools), self._output)

    def walked(self, given: tuple[Item, ...], sent: tuple[Item, ...], skipped: Iterable[tuple[int, str]],
               edits: Iterable[Saving], kept_before: int | None = None) -> None:
        """Remember the request a pass was given, what it sent (``edits`` made the difference, with
        the last request's edits before ``kept_before`` when given: a pass from the frontier that
        kept them), and which positions it skipped and why. A summary made after the rules is not
        ``sent`` here: the next request either extends the one given (per call) or holds the summary
        (stored), which extends neither and is walked whole."""
        if self._pending is None:
            open_calls: dict[str, int] = {}
            carried: dict[str, Carried] = {}
            self._answered_by = {}
            _add(sent, 0, open_calls, self._answered_by, carried)
        else:
            open_calls, answered_by, carried = self._pending
            self._answered_by.update(answered_by)
        again = [position for position, reason in skipped if reason in TRANSIENT]
        self._input, self._output = given, sent
        self._start = min(again, default=len(sent))
        self._open, self._carried, self._pending = open_calls, carried, None
        if kept_before is None:
            self._edits = Edits()
        else:
            self._edits.keep_before(kept_before)
        self._edits.add(edits)


def _add(items: tuple[Item, ...], start: int, open_calls: dict[str, int], answered_by: dict[int, int],
         carried: dict[str, Carried]) -> None:
    """Record the items from ``start`` on: which call each result answers — the latest earlier call
    with its id that no result answered yet, as ``conversation.pairs`` decides, so a reused id
    pairs as the whole pass pairs it — and the calls' argument names by tool."""
    for position in range(start, len(items)):
        item = items[position]
        if isinstance(item, ToolCall):
            open_calls[item.call_id] = position
            carried.setdefault(item.name, Carried()).add(item.parsed_arguments() or {})
        elif isinstance(item, ToolResult) and item.call_id in open_calls:
            answered_by[position] = open_calls.pop(item.call_id)


def _copy(carried: Carried) -> Carried:
    copy = Carried()
    copy.calls, copy.names = carried.calls, carried.names.copy()
    return copy


def _turn_start(items: tuple[Item, ...], position: int) -> int:
    """The first item of the wire message ``position`` is in (by the items' origins, else their
    roles), moved back again while that is an assistant turn's continuation: the pass starts where
    no item's place (parallel, continued) depends on what it does not walk."""
    while 0 < position < len(items) and _same_message(items[position - 1], items[position]):
        position -= 1
    return position


def _same_message(before: Item, item: Item) -> bool:
    if before.origin is not None and item.origin is not None:
        return before.origin.index == item.origin.index
    return role_of(before) == role_of(item)
