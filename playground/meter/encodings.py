"""Offline tiktoken vocabularies and the model → encoding table.

tiktoken downloads its vocabularies on first use. We ship ``o200k_base`` and ``cl100k_base``
gzipped in ``playground/vocab/`` and build each ``tiktoken.Encoding`` straight from the shipped
file: no network, no cache folder, and no change to the process environment (tiktoken's own
loader only finds local files through ``TIKTOKEN_CACHE_DIR``, which a server shared by several
sessions must not flip at run time).

The vocabulary is checked against the sha256 tiktoken publishes and parsed line by line as
``tiktoken.load.load_tiktoken_bpe`` parses it. The split regex and special tokens live only
inside tiktoken's constructor functions (``tiktoken_ext.openai_public``), so we run that very
constructor with a private copy of its globals in which ``load_tiktoken_bpe`` hands back our
parsed ranks (and checks that tiktoken asked for the file and hash we ship). Nothing global is
patched, so this is safe with other threads, and the pattern strings stay tiktoken's own.
"""

from __future__ import annotations

import binascii
import functools
import gzip
import hashlib
import types
from dataclasses import dataclass
from pathlib import Path

import tiktoken
from tiktoken_ext import openai_public

VOCAB_DIR = Path(__file__).resolve().parents[1] / "vocab"
DEFAULT_ENCODING = "o200k_base"

# tiktoken_ext/openai_public.py: the URL tiktoken would download and the sha256 it checks.
_PUBLISHED = {
    "o200k_base": (
        "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    ),
    "cl100k_base": (
        "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    ),
}
SHIPPED = tuple(_PUBLISHED)

class VocabularyError(RuntimeError):
    """A shipped vocabulary is missing or does not hash to tiktoken's published value."""


@dataclass(frozen=True)
class EncodingChoice:
    """Which encoding counts a model's tokens, and why (``note`` is set on a fallback)."""

    model: str
    encoding: str
    note: str | None = None


def load_ranks(name: str) -> dict[bytes, int]:
    """The BPE ranks of a shipped vocabulary, read from its gz and checked against tiktoken's
    published sha256; parsed as ``tiktoken.load.load_tiktoken_bpe`` does (base64 token, rank)."""
    _, sha256 = _PUBLISHED[name]
    source = VOCAB_DIR / f"{name}.tiktoken.gz"
    try:
        data = gzip.decompress(source.read_bytes())
    except OSError as exc:
        raise VocabularyError(f"cannot read the shipped vocabulary {source}: {exc}") from exc
    if hashlib.sha256(data).hexdigest() != sha256:
        raise VocabularyError(f"{source} does not match tiktoken's published sha256 {sha256}")
    # every line is "token rank": split once and decode in C (a Python step per line took 0.5 s of each start)
    fields = data.split()
    return dict(zip(map(binascii.a2b_base64, fields[0::2]), map(int, fields[1::2]), strict=True))


def _parameters(name: str, ranks: dict[bytes, int]) -> dict:
    """tiktoken's constructor for ``name`` run against ``ranks``: its pattern and special tokens."""
    url, sha256 = _PUBLISHED[name]

    def shipped(path: str, expected_hash: str | None = None) -> dict[bytes, int]:
        if (path, expected_hash) != (url, sha256):
            raise VocabularyError(f"tiktoken asks for {path} ({expected_hash}); we ship {url} ({sha256})")
        return ranks

    constructor = openai_public.ENCODING_CONSTRUCTORS[name]
    private = types.FunctionType(constructor.__code__, {**constructor.__globals__, "load_tiktoken_bpe": shipped},
                                 constructor.__name__, constructor.__defaults__, constructor.__closure__)
    return private()


@functools.cache
def get_encoding(name: str) -> tiktoken.Encoding:
    """The encoding ``name``, built from the shipped file. Cached: an Encoding is an immutable
    vocabulary (about a second to build), the same for every session, not per-session state."""
    if name not in _PUBLISHED:
        raise VocabularyError(f"encoding {name!r} is not shipped; shipped: {', '.join(SHIPPED)}")
    return tiktoken.Encoding(**_parameters(name, load_ranks(name)))


def choose_encoding(model: str | None) -> EncodingChoice:
    """Map a model to its encoding through tiktoken's model table, falling back to o200k_base."""
    if not model:
        return EncodingChoice("", DEFAULT_ENCODING, f"no model given: counted with {DEFAULT_ENCODING}")
    try:
        name = tiktoken.encoding_name_for_model(model)
    except KeyError:
        return EncodingChoice(model, DEFAULT_ENCODING,
                              f"counted with {DEFAULT_ENCODING}: {model}'s own tokenizer is not shipped (the "
                              "nearest vocabulary we ship; a log with bills can calibrate it)")
    if name not in _PUBLISHED:
        note = f"{model!r} uses {name}, which is not shipped: counted with {DEFAULT_ENCODING}"
        return EncodingChoice(model, DEFAULT_ENCODING, note)
    return EncodingChoice(model, name)
