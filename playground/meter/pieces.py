"""Long texts cut into pieces whose token counts add up to the text's, so a text that grew from
one counted before costs only its new pieces.

A policy that summarizes at every call writes a summary the size of the history each time, a
little longer than the last; counting it whole made a long run's replay quadratic in tiktoken.
tiktoken first splits a text with its encoding's pattern, then merges bytes only inside each
split, so a text's tokens are its pieces' together wherever no split of the pattern reaches
across a cut. For ``o200k_base`` and ``cl100k_base`` that holds just after a newline followed by
a printable ASCII character other than ``/`` and space: no alternative of their patterns matches
a newline and then such a character (a letter run's optional first character is never a newline;
punctuation takes trailing newlines, and for o200k a ``/``, but nothing after them; a run of
whitespace stops before it), and a newline ending a text is split as it is before such a
character (``\\s*[\\r\\n]+`` comes before the alternative that looks ahead). Other encodings
(``gpt2``'s pattern splits ``"  \\n"`` by what follows) are counted whole.

A cut is made at such a place once a piece holds ``least`` characters, where the line the newline
ends picks it (one line in ``PICK``, by a checksum of the line) — or, far enough past that, at the
first such place (``PICK * least``). The cuts so depend on the lines around them, not on where
the text starts: a text that grew at its end, or had lines put in anywhere (a summary that wraps
the last one), is cut as before away from the change, and its other pieces are cache hits.
"""

from __future__ import annotations

from collections.abc import Iterator
from zlib import crc32

PIECE = 2_048  # characters: ~500 tokens a piece; a text under twice this is counted whole
PICK = 8  # one line in this many ends a piece (past ``least`` characters)
SPLITTABLE = frozenset({"o200k_base", "cl100k_base"})
_SAFE_AFTER_NEWLINE = frozenset(chr(c) for c in range(0x21, 0x7F)) - {"/"}


def pieces(text: str, least: int = PIECE, start: int = 0) -> Iterator[str]:
    """``text`` in pieces of at least ``least`` characters (the last may be shorter), each cut
    just after a newline that the next character cannot join, where the line that newline ends
    is picked, or past ``PICK * least`` at the first such newline (see the module docstring).
    From ``start`` (a cut this function made) it yields the pieces it would after that cut: each
    cut reads only the text before it, its next character and the text's length."""
    size = len(text)
    while size - start >= 2 * least:
        high = start + PICK * least
        newline = text.find("\n", start + least)
        line = text.rfind("\n", 0, newline) + 1 if newline != -1 else 0
        while newline != -1 and newline + 1 < size and not (text[newline + 1] in _SAFE_AFTER_NEWLINE and (
                newline >= high or crc32(text[line:newline].encode("utf-8", "surrogatepass")) % PICK == 0)):
            line, newline = newline + 1, text.find("\n", newline + 1)
        if newline == -1 or newline + 1 >= size:
            break
        yield text[start:newline + 1]
        start = newline + 1
    yield text[start:]


def lines(text: str) -> list[str]:
    """``text`` cut after every newline the next character cannot join (see the module docstring):
    its lines, whose counts add up to the text's. For a short text written again at every call,
    most of its lines the last one's (a summary of a sliding span): each line is encoded once."""
    found, start, size = [], 0, len(text)
    newline = text.find("\n")
    while newline != -1 and newline + 1 < size:
        if text[newline + 1] in _SAFE_AFTER_NEWLINE:
            found.append(text[start:newline + 1])
            start = newline + 1
        newline = text.find("\n", newline + 1)
    found.append(text[start:])
    return found


class Cutter:
    """``pieces`` that remembers the last long text it cut. A summary written again at every call
    is mostly the last one: a header that counts what it replaces, the same lines, a few more at
    the end. Once one of the new text's pieces is one of the last text's, the pieces that followed
    it there are checked in place (``startswith``, in C) rather than cut again, and they are the
    last text's own strings, whose hashes Python keeps: the caches keyed by pieces find them
    without reading them. Without it a long run's replay cut and hashed the whole summary at
    every call."""

    def __init__(self, least: int = PIECE) -> None:
        self._least = least
        self._last: list[str] = []
        self._where: dict[str, int] = {}  # the last text's pieces, each at its (first) place

    def cut(self, text: str) -> list[str]:
        """``list(pieces(text, least))``, reusing the pieces it shares with the last long text."""
        if len(text) < 2 * self._least:
            return [text]
        found: list[str] = []
        start, taking = 0, True
        while taking:
            taking = False
            for piece in pieces(text, self._least, start):
                found.append(piece)
                start += len(piece)
                place = self._where.get(piece)
                taken = self._taken(text, start, place + 1) if place is not None else []
                if taken:
                    found += taken
                    start += sum(map(len, taken))
                    taking = True  # cut on from after them
                    break
        self._last, self._where = found, {}
        for place, piece in enumerate(found):
            self._where.setdefault(piece, place)
        return found

    def _taken(self, text: str, start: int, first: int) -> list[str]:
        """The last text's pieces from ``first`` on that ``text`` cuts alike at ``start``, a cut:
        a cut reads only its piece, the character after it and the room left."""
        last, size, room = self._last, len(text), 2 * self._least
        end = first
        for piece, following in zip(last[first:], last[first + 1:], strict=False):
            if size - start < room or not (text.startswith(piece, start)
                                            and text.startswith(following[0], start + len(piece))):
                break
            start, end = start + len(piece), end + 1
        return last[first:end]
