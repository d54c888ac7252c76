"""The caller's list and the request's list, each carried from call to call, so that a wrapped call
does work for what is new at it, not for the whole run again: replay is linear in a run because it
carries its state, and a wrapped agent's list only grows.

``Seen`` is the caller's list as last read: its elements (the very objects), their plain form (as
the SDK sends it) and the items read from it. The next list extends it when its leading part holds
the same objects — one comparison in C, by identity, so a message the caller replaced, removed or
inserted since differs and the list is read again from the start, as a whole read would (the run
then restarts, as it does for any history that did not only grow). Only the new elements are
turned plain and read, linked after the calls so far.

That comparison is the one thing still done over the whole history at every call, so it looks at
which objects the list holds, not into them: a message changed in place (its content replaced, a
field added, a block appended to its content list, an SDK object the caller appended changed) is
not seen — the request keeps it as it was read. Comparing each message's fields instead took a
sixth of the wrapper's time on a 2,000-call run and grew with the run's square
(docs/benchmarks.md); a caller that rewrites its history replaces the messages instead
(``messages[i] = {**messages[i], "content": …}``), and that is seen.

``Written`` is the request's list as last written: the next request shares its leading items
(the stored edits of earlier calls are the same objects again), so the wire messages up to the
last message that begins within them are the last request's, and only the rest is written.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..conversation import Conversation, Item, shared

ReadItems = Callable[[list[Any], int, dict[str, str]], tuple[Item, ...]]  # (list from start, start, latest)


class Seen:
    """The caller's list as last read, kept by one endpoint and grown in place from call to call:
    its elements (``given``, the very objects) and their ``wire`` (plain) form, the ``items`` read from
    it, and the calls' names by id after them (``latest``, which the next read of a list that grew goes on from)."""

    def __init__(self) -> None:
        self._forget()

    def _forget(self) -> None:
        self.given: list[Any] = []
        self.wire: list[Any] = []
        self.items: tuple[Item, ...] = ()
        self._latest: dict[str, str] = {}

    def read(self, given: Sequence[Any], plain: Callable[[Any], Any], read: ReadItems,
             grow: Callable[[tuple[Item, ...], tuple[Item, ...]], Conversation]) -> Conversation:
        """The caller's list ``given`` read, as ``grow(items read before, items new)`` builds the
        request from them: from where the last list ends when ``given`` only grew from it, else whole
        (a read that fails leaves nothing: the next one reads whole)."""
        known = len(self.given)
        if not known or len(given) < known or not _same(given, self.given):
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
        self.given.extend(new)
        self.wire.extend(wire)
        self.items = conversation.items
        return conversation


def _same(given: Sequence[Any], known: list[Any]) -> bool:
    """Whether ``given`` begins with the very objects of ``known``: a list slice compared in C,
    where two lists holding the same objects compare equal without looking into them (an element
    that is another object is compared by value: an equal copy reads the same)."""
    head = given[:len(known)]
    return (head if isinstance(head, list) else list(head)) == known


class Written:
    """The request's list as last written by ``write`` (items → wire messages), where
    ``begins(items, position)`` says the item there begins a wire message whatever precedes it."""

    def __init__(self, write: Callable[[tuple[Item, ...]], list[Any]],
                 begins: Callable[[tuple[Item, ...], int], bool]) -> None:
        self._write = write
        self._begins = begins
        self._items: tuple[Item, ...] = ()
        self._messages: list[Any] = []

    def __call__(self, items: tuple[Item, ...], shares: tuple[tuple[Item, ...], int] = ((), 0)) -> list[Any]:
        """``write(items)``: the last list's messages before the last point both lists share where a
        message begins, then the rest written. The list is new; its earlier dicts are the last
        request's (already sent; nothing here changes them). ``shares``: a request and how many
        leading items ``items`` shares with it, when the caller knows (the session's sent side
        compared them already): used when that request is the one written last."""
        old = self._items
        at = shares[1] if shares[0] is old and old else shared(old, items)
        while at > 0 and not (self._starts(old, at) and self._starts(items, at)):
            at -= 1
        kept = len(self._messages) - len(self._write(old[at:]))
        messages = self._messages[:kept] + self._write(items[at:])
        self._items, self._messages = items, messages
        return messages

    def _starts(self, items: tuple[Item, ...], position: int) -> bool:
        return position >= len(items) or self._begins(items, position)
