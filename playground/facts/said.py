"""Facts stated in prose: what the user required.

Sentences, found by the words people use to bind a course of action — *must*, *never*, *always*,
*only*, *don't*, *make sure*. Only a human's
messages are read for requirements: an agent's harness also speaks as the user (a command's output,
a caveat it prepends, an observation), and those are recognised by the tags and phrases that wrap
them, so a tool's output never becomes a requirement. Code blocks are skipped: a ``never`` in a
pasted snippet binds nothing."""

from __future__ import annotations

import re
from collections.abc import Iterator

MIN_SENTENCE, MAX_SENTENCE = 15, 400  # characters: shorter is a fragment, longer a paragraph nobody quotes
MIN_WORDS = 4
MIN_LETTERS = 0.6  # share of a sentence that is letters or spaces: prose, not a log line or a table row

# what the user says to bind the agent (the must, must not, always, never, only; and their kin)
_REQUIRE = re.compile(r"\b(?:must|mustn't|never|always|only|don't|do not|shouldn't|should not|should|need to|"
                      r"needs to|has to|have to|make sure|ensure|(?:is|are) required|avoid|at least|at most|"
                      r"no more than|not allowed|is crucial|are crucial)\b", re.I)
# text an agent's harness sends as the user: a local command, its output, a caveat, a reminder, an observation
_HARNESS = re.compile(r"^\s*(?:<(?:command-[\w-]+|local-command-[\w-]+|system-reminder|returncode|output|"
                      r"bash-(?:input|stdout|stderr)|user-prompt-submit-hook)>|"
                      r"Caveat: The messages below were generated|"
                      r"\[Request interrupted|This session is being continued from a previous conversation|"
                      r"OBSERVATION:|Observation:|Tool output)")
_ASKS = re.compile(r"(?:can|could|would|will) you\b|please\b", re.I)  # a question that is a request
_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.S)
_FENCE = re.compile(r"^\s*(```|~~~)")
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+")
_MARKUP = re.compile(r"^\s*(?:[-*+]\s+|\d+[.)]\s+|#+\s+|>\s+)")  # a list bullet, a heading, a quote: kept, marker off


def from_human(text: str) -> bool:
    """Whether a user message is a person's words, not text the agent's harness sends as the user."""
    return bool(text.strip()) and not _HARNESS.match(text)


def sentences(text: str) -> Iterator[tuple[int, int]]:
    """The (start, end) of each prose sentence of ``text`` outside code blocks and system reminders,
    one line at most: a person's list item is one sentence however it ends."""
    hidden = [(m.start(), m.end()) for m in _REMINDER.finditer(text)]
    fenced = False
    offset = 0
    for line in text.splitlines(keepends=True):
        start, offset = offset, offset + len(line)
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if fenced or any(low <= start < high for low, high in hidden):
            continue
        marker = _MARKUP.match(line)
        position = start + (marker.end() if marker else 0)
        for piece in _SENTENCE_END.split(text[position:offset]):
            begin = text.find(piece, position)
            position = begin + len(piece)
            stripped = piece.strip()
            if stripped:
                lead = begin + len(piece) - len(piece.lstrip())
                yield lead, lead + len(stripped)


def _prose(sentence: str) -> bool:
    """Prose a person wrote: it begins with a word, has a few, and is mostly letters (not a log or tree line)."""
    letters = sum(c.isalpha() or c == " " for c in sentence)
    return ((sentence[0].isalpha() or sentence[0] in "\"'`*") and MIN_SENTENCE <= len(sentence) <= MAX_SENTENCE
            and len(sentence.split()) >= MIN_WORDS and letters >= MIN_LETTERS * len(sentence))


def requirements(text: str) -> Iterator[tuple[int, int]]:
    """The spans of ``text`` (a person's message) that state a requirement or constraint."""
    for start, end in sentences(text):
        sentence = text[start:end]
        if _prose(sentence) and _REQUIRE.search(sentence) and (not sentence.endswith("?") or _ASKS.match(sentence)):
            yield start, end
