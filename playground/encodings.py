"""Offline tiktoken vocabularies and the model → encoding table.

tiktoken downloads its vocabularies on first use. We ship ``o200k_base`` and ``cl100k_base``
gzipped in ``playground/vocab/`` and hand them to tiktoken through its own file cache, so
tiktoken's constructor, regex and sha256 check run unchanged and nothing reaches the network.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

import tiktoken

VOCAB_DIR = Path(__file__).parent / "vocab"
DEFAULT_ENCODING = "o200k_base"

# tiktoken_ext/openai_public.py: the URL tiktoken would download (its sha1 names the cache file)
# and the sha256 tiktoken checks on every read of that file.
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

_lock = threading.Lock()


class VocabularyError(RuntimeError):
    """A shipped vocabulary is missing or does not hash to tiktoken's published value."""


@dataclass(frozen=True)
class EncodingChoice:
    """Which encoding counts a model's tokens, and why (``note`` is set on a fallback)."""

    model: str
    encoding: str
    note: str | None = None


def cache_dir() -> Path:
    """Where the unpacked vocabularies live: a per-user folder, created on demand."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(tempfile.gettempdir(), f"uid{os.getuid()}")
    return Path(base) / "compaction-playground" / "tiktoken"


def _unpack(name: str, folder: Path) -> None:
    """Write the gunzipped vocabulary under the file name tiktoken's cache expects."""
    url, sha256 = _PUBLISHED[name]
    target = folder / hashlib.sha1(url.encode()).hexdigest()
    if target.exists() and hashlib.sha256(target.read_bytes()).hexdigest() == sha256:
        return
    source = VOCAB_DIR / f"{name}.tiktoken.gz"
    try:
        data = gzip.decompress(source.read_bytes())
    except OSError as exc:
        raise VocabularyError(f"cannot read the shipped vocabulary {source}: {exc}") from exc
    if hashlib.sha256(data).hexdigest() != sha256:
        raise VocabularyError(f"{source} does not match tiktoken's published sha256 {sha256}")
    folder.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(f".{os.getpid()}.tmp")
    partial.write_bytes(data)
    partial.replace(target)


def get_encoding(name: str) -> tiktoken.Encoding:
    """tiktoken's own ``get_encoding``, pointed at our unpacked copy for the one call that loads."""
    if name not in _PUBLISHED:
        raise VocabularyError(f"encoding {name!r} is not shipped; shipped: {', '.join(SHIPPED)}")
    with _lock:
        folder = cache_dir()
        _unpack(name, folder)
        previous = os.environ.get("TIKTOKEN_CACHE_DIR")
        os.environ["TIKTOKEN_CACHE_DIR"] = str(folder)
        try:
            return tiktoken.get_encoding(name)
        finally:
            if previous is None:
                del os.environ["TIKTOKEN_CACHE_DIR"]
            else:
                os.environ["TIKTOKEN_CACHE_DIR"] = previous


def choose_encoding(model: str | None) -> EncodingChoice:
    """Map a model to its encoding through tiktoken's model table, falling back to o200k_base."""
    if not model:
        return EncodingChoice("", DEFAULT_ENCODING, f"no model given: counted with {DEFAULT_ENCODING}")
    try:
        name = tiktoken.encoding_name_for_model(model)
    except KeyError:
        return EncodingChoice(model, DEFAULT_ENCODING, f"unknown model {model!r}: counted with {DEFAULT_ENCODING}")
    if name not in _PUBLISHED:
        note = f"{model!r} uses {name}, which is not shipped: counted with {DEFAULT_ENCODING}"
        return EncodingChoice(model, DEFAULT_ENCODING, note)
    return EncodingChoice(model, name)
