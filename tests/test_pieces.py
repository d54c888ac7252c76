"""A long text counted in pieces gives its whole count, on any text, in both shipped encodings,
and a text grown from one counted before encodes only what changed."""

from __future__ import annotations

import json

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from playground.meter.encodings import get_encoding
from playground.meter.pieces import PIECE, SPLITTABLE, Cutter, lines, pieces
from playground.meter.tokens import Meter

from .conftest import SHARED, TRACES, shared

# every kind of character the encodings' patterns treat apart: letters (cased, other scripts),
# digits, punctuation (``/`` joins newlines in o200k), the whitespace they split on, and characters
# Python and the pattern may not agree are whitespace
ALPHABET = st.sampled_from([*"aZé中3 /.-:[]'\"#\t\r\n\n\n", "\u00a0", "\u2028", "\x1c", "\x0b", "'s", "  \n", "\n\n"])
TEXTS = st.lists(ALPHABET, max_size=120).map("".join)


@pytest.mark.parametrize("name", sorted(SPLITTABLE))
@given(text=TEXTS, least=st.integers(1, 8))
def test_a_texts_pieces_are_the_text_and_count_as_it_does_whole(name: str, text: str, least: int) -> None:
    encoding = get_encoding(name)
    cut = list(pieces(text, least))
    assert "".join(cut) == text
    assert sum(len(encoding.encode_ordinary(piece)) for piece in cut) == len(encoding.encode_ordinary(text))


@pytest.mark.parametrize("name", sorted(SPLITTABLE))
@given(text=TEXTS)
def test_a_texts_lines_are_the_text_and_count_as_it_does_whole(name: str, text: str) -> None:
    encoding = get_encoding(name)
    cut = lines(text)
    assert "".join(cut) == text
    assert sum(len(encoding.encode_ordinary(line)) for line in cut) == len(encoding.encode_ordinary(text))


def _long_texts() -> list[str]:
    """Every long text of the shared traces and session logs: code, diffs, logs, JSON."""
    texts = []
    for path in [*sorted(TRACES.glob("*.json")), *sorted((SHARED / "sessions").glob("*.jsonl"))]:
        raw = shared(path).read_text()
        texts.append(raw)
        lines = [json.loads(line) for line in raw.splitlines() if line.strip()] if path.suffix == ".jsonl" else [
            json.loads(raw)]
        texts += [text for line in lines for text in _strings(line) if len(text) >= 2 * PIECE]
    return texts


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    return [text for inner in value for text in _strings(inner)] if isinstance(value, list) else []


@pytest.mark.parametrize("model", ["gpt-4o", "gpt-4"])  # o200k_base, cl100k_base
def test_real_long_texts_count_in_pieces_as_whole(model: str) -> None:
    meter = Meter(model)
    texts = _long_texts()
    assert sum(len(list(pieces(text))) > 1 for text in texts) > 20  # the test cuts real texts
    for text in texts:
        assert meter.raw(text) == len(meter.encoding.encode_ordinary(text))


class _Recording:
    """An encoding that records the length of each text it is asked to encode."""

    def __init__(self, encoding: object) -> None:
        self.encoding, self.lengths = encoding, []
        self.name = encoding.name  # type: ignore[attr-defined]

    def encode_ordinary(self, text: str) -> list[int]:
        self.lengths.append(len(text))
        return self.encoding.encode_ordinary(text)  # type: ignore[attr-defined]


def test_a_summary_grown_by_a_line_encodes_only_its_last_piece_again() -> None:
    meter = Meter("gpt-4o")
    recording = meter.encoding = _Recording(meter.encoding)  # type: ignore[assignment]
    lines = [f"- read_file(path=src/mod_{n}.py): 40 lines" for n in range(2_000)]
    summary = "Tool calls, in order:\n" + "\n".join(lines)
    meter.raw(summary)
    grown = summary + "\n- read_file(path=src/mod_2000.py): 40 lines"
    recording.lengths.clear()
    assert meter.raw(grown) == len(get_encoding("o200k_base").encode_ordinary(grown))
    assert sum(recording.lengths) < 3 * PIECE < len(grown) // 10


def test_a_short_summary_of_a_sliding_span_counted_by_line_encodes_only_its_new_lines() -> None:
    """Under ``2 * PIECE`` a text is counted whole by ``raw``; a summary of a span that moves on by a
    step (its header's numbers change, a line leaves at the top, one comes at the end) is counted by
    its lines, as whole, encoding only the lines it did not have."""
    meter = Meter("gpt-4o")
    recording = meter.encoding = _Recording(meter.encoding)  # type: ignore[assignment]
    whole = get_encoding("o200k_base").encode_ordinary

    def summary(step: int) -> str:
        return "\n".join([f"[Summary: it replaces {2 * step:,} items.]", "", "Tool calls, in order:",
                          f"- … {step} earlier calls: read_file ×{step}",
                          *(f'- read_file(path="src/mod_{n}.py") → ok, 40 lines' for n in range(step, step + 40))])
    assert len(summary(1)) < 2 * PIECE
    assert meter.raw_by_line(summary(1)) == len(whole(summary(1)))
    recording.lengths.clear()
    assert meter.raw_by_line(summary(2)) == len(whole(summary(2))) == meter.raw(summary(2))
    # the header, the count of earlier calls, the last line (now with its newline) and the new one
    assert len(recording.lengths) == 4 and sum(recording.lengths) < len(summary(2)) // 10


def test_lines_put_in_the_middle_leave_the_pieces_away_from_them_as_they_were() -> None:
    """A summary that wraps the last one gains lines in its middle: the pieces before and, a
    few pieces on, after them are the same strings, so their counts are cache hits."""
    lines = [f"- read_file(path=src/mod_{n}.py) → ok, 40 lines" for n in range(4_000)]
    before = list(pieces("\n".join(lines)))
    after = list(pieces("\n".join([*lines[:2_000], "Earlier summary:", "(4 items)", *lines[2_000:]])))
    assert len(before) > 40
    assert len(set(before) - set(after)) <= 3


@given(texts=st.lists(TEXTS, min_size=1, max_size=4), grow=st.lists(TEXTS, max_size=4),
       heads=st.lists(TEXTS, max_size=3), least=st.integers(1, 8))
@example(texts=[" abcb  ba \nacaaa\na\nb\na b\n\nabb\n bc\ncc\n\nc\n\n\naa\n\n\n\nb\na\nc b \naba\nbacb\nc "],
         grow=[], heads=[], least=6)  # at 49 characters the last kept cut has no room: one tail
def test_a_cutter_cuts_every_text_as_pieces_does_whatever_it_cut_before(texts: list[str], grow: list[str],
                                                                       heads: list[str], least: int) -> None:
    """Texts that share a beginning with the last one (grown, cut short), its middle (a new
    head, as a summary's count of what it replaces), or nothing: the cutter's pieces are always
    ``pieces``' own."""
    cutter = Cutter(least)
    grown = [texts[-1] + more for more in grow]
    longest = (grown or texts)[-1]
    headed = [head + longest[len(head) // 2:] + tail for head in heads for tail in ("", head)]
    shorter = [longest[:size] for size in range(len(longest) - 1, -1, -1)]  # cuts near the end lose their room
    for text in [*texts, *grown, *headed, *shorter]:
        assert cutter.cut(text) == list(pieces(text, least))


def test_a_cutter_takes_the_last_summarys_pieces_after_a_new_count_in_its_head() -> None:
    cutter = Cutter()
    lines = [f"- read_file(path=src/mod_{n}.py): 40 lines" for n in range(2_000)]
    first = cutter.cut("Summary of 2,000 calls:\n" + "\n".join(lines))
    grown = cutter.cut("Summary of 2,001 calls:\n" + "\n".join([*lines, "- read_file(path=src/mod_2000.py): 40 lines"]))
    assert len(first) > 20
    assert grown[0] != first[0]
    assert all(new is old for new, old in zip(grown[2:-2], first[2:], strict=False))  # the same strings, not copies
