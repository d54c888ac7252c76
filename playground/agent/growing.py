"""The caller's list and the request's list, each carried from call to call, so that a wrapped call
does work for what is new at it, not for the whole run again: replay is linear in a run because it
carries its state, and a wrapped agent's list only grows.

``Seen`` is the caller's list as last read: each element's snapshot (a message dict's fields
copied, their values the very objects; anything else the very object), its plain form (as the SDK
sends it) and the items read from it. The next list extends it when its leading part equals the
snapshots — one comparison in C, identity first, so the shared strings and SDK objects compare at
once and a message whose fields the caller changed in place since (its content replaced, a field
added or dropped) differs and is read again from the start, as a whole read would (the run then
restarts, as it does for any history that did not only grow). Only the new elements are turned
plain and read, linked after the calls so far.

That comparison is the one thing still done over the whole history at every call, so it is kept to
a message's own fields: a change deeper in an earlier message (a block appended to its content
list, a call's arguments edited inside ``tool_calls``) or inside an SDK object (a
``ChatCompletionMessage`` appended as it came) is not seen. Comparing every nested list and dict
too costs about as much again as the rest of the wrapper's work on a long run (docs/benchmarks.md).

``Written`` is the request's list as last written: the next request shares its leading items
(the stored edits of earlier calls are the same objects again), so the wire messages up to the
last message that begins within them are the last request's, and only the rest is written.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..conversation import Conversation, Item, shared

ReadItems = Callable[[list[Any], int, dict[str, str]], tuple[Item, ...]]  # (list from start, start, latest)


def snapshot(value: Any) -> Any:
    """An element of the caller's list as it is now: a dict's (a message's) fields copied, anything
    else the object itself; equal to ``value`` while its fields are not replaced in place, and
    compared with it at C speed (the values by identity first)."""
    return dict(value) if isinstance(value, dict) else value


class Seen:
    """The caller's list as last read, kept by one endpoint and grown in place from call to call:
    each element's ``snapshots`` and ``wire`` (plain) form, the ``items`` read from it, and the
    calls' names by id after them (``latest``, which the next read of a list that grew goes on from)."""

    def __init__(self) -> None:
        self._forget()

    def _forget(self) -> None:
        self.snapshots: list[Any] = []
        self.wire: list[Any] = []
        self.items: tuple[Item, ...] = ()
        self._latest: dict[str, str] = {}

    def read(self, given: Sequence[Any], plain: Callable[[Any], Any], read: ReadItems,
             grow: Callable[[tuple[Item, ...], tuple[Item, ...]], Conversation]) -> Conversation:
        """The caller's list ``given`` read, as ``grow(items read before, items new)`` builds the
        request from them: from where the last list ends when ``given`` only grew from it, else whole
        (a read that fails leaves nothing: the next one reads whole)."""
        known = len(self.snapshots)
        head = given[:known] if isinstance(given, list) else list(given[:known])
        if not known or len(given) < known or head != self.snapshots:
            self._forget()
            known = 0
        new = list(given[known:])
        wire = [plain(element) for element in new]
        try:
            items = read(wire, known, self._latest)
        except BaseException:
            self._forget()
            raise
        conversation = grow(self.items, items)
        self.snapshots.extend(snapshot(element) for element in new)
        self.wire.extend(wire)
        self.items = conversation.items
        return conversation


class Written:
    """The request's list as last written by ``write`` (items → wire messages), where
    ``begins(items, position)`` says the item there begins a wire message whatever precedes it."""

    def __init__(self, write: Callable[[tuple[Item, ...]], list[Any]],
                 begins: Callable[[tuple[Item, ...], int], bool]) -> None:
        self._write = write
        self._begins = begins
        self._items: tuple[Item, ...] = ()
        self._messages: list[Any] = []

    def __call__(self, items: tuple[Item, ...]) -> list[Any]:
        """``write(items)``: the last list's messages before the last point both lists share where a
        message begins, then the rest written. The list is new; its earlier dicts are the last
        request's (already sent; nothing here changes them)."""
        old = self._items
        at = shared(old, items)
        while at > 0 and not (self._starts(old, at) and self._starts(items, at)):
            at -= 1
        kept = len(self._messages) - len(self._write(old[at:]))
        messages = self._messages[:kept] + self._write(items[at:])
        self._items, self._messages = items, messages
        return messages

    def _starts(self, items: tuple[Item, ...], position: int) -> bool:
        return position >= len(items) or self._begins(items, position)
