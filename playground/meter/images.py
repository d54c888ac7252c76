"""What images and PDFs in a request cost, from the bytes in the request alone.

Both providers bill an image by its pixel size, not by its bytes, so we read the size from the
image header (Pillow opens lazily: only the header is parsed) and apply the provider's published
rule. An image given by URL or file id has no size in the request: the caller says so.

- Anthropic ("Vision", image costs): an image whose long edge exceeds 1568 px or whose area exceeds
  about 1.15 megapixels is scaled down to fit; it then costs about width × height / 750 tokens.
- OpenAI ("Images and vision", calculating costs): tile models fit the image in 2048 × 2048, then
  scale the short side down to 768, and bill ``base + per_tile × tiles`` for 512-px tiles
  (``detail: low`` bills ``base`` only); patch models bill 32-px patches (at most 1536) times a
  per-model multiplier.
"""

from __future__ import annotations

import base64
import binascii
import io
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from PIL import Image, UnidentifiedImageError

ANTHROPIC_MAX_EDGE = 1568
ANTHROPIC_MAX_PIXELS = 1_150_000
ANTHROPIC_PIXELS_PER_TOKEN = 750


@dataclass(frozen=True)
class TileRule:
    """OpenAI's tile rule for one model family: ``base`` tokens plus ``tile`` per 512-px tile."""

    base: int
    tile: int


@dataclass(frozen=True)
class PatchRule:
    """OpenAI's patch rule: 32-px patches (at most 1536), times ``multiplier``."""

    multiplier: float


# OpenAI's published table, longest prefix first wins (see ``openai_rule``).
OPENAI_RULES: tuple[tuple[str, TileRule | PatchRule], ...] = (
    ("gpt-4o-mini", TileRule(2833, 5667)),
    ("gpt-4.1-mini", PatchRule(1.62)),
    ("gpt-4.1-nano", PatchRule(2.46)),
    ("gpt-5-mini", PatchRule(1.62)),
    ("gpt-5-nano", PatchRule(2.46)),
    ("o4-mini", PatchRule(1.72)),
    ("gpt-5", TileRule(70, 140)),
    ("o1", TileRule(75, 150)),
    ("o3", TileRule(75, 150)),
    ("computer-use-preview", TileRule(65, 129)),
    ("gpt-4", TileRule(85, 170)),  # gpt-4o, gpt-4.1, gpt-4.5, gpt-4-turbo
)
DEFAULT_OPENAI_RULE = TileRule(85, 170)


def openai_rule(model: str) -> TileRule | PatchRule:
    matches = [(prefix, rule) for prefix, rule in OPENAI_RULES if model.startswith(prefix)]
    return max(matches, key=lambda match: len(match[0]))[1] if matches else DEFAULT_OPENAI_RULE


_DATA_URL = re.compile(r"data:[^;,]*;base64,", re.ASCII)


def decode(data: str) -> bytes | None:
    """The bytes of base64 ``data`` (a bare payload or a ``data:`` URL), None if it is not base64."""
    match = _DATA_URL.match(data)
    try:
        return base64.b64decode(data[match.end():] if match else data, validate=False)
    except (binascii.Error, ValueError):
        return None


def image_size(data: str) -> tuple[int, int] | None:
    """Width and height of a base64 image, read from its header; None when it is not an image."""
    raw = decode(data)
    if raw is None:
        return None
    try:
        with Image.open(io.BytesIO(raw)) as image:
            return image.size
    except (UnidentifiedImageError, OSError, ValueError):
        return None


def anthropic_tokens(width: int, height: int) -> int:
    """Anthropic's rule: scale to fit 1568 px and ~1.15 MP, then width × height / 750."""
    scale = min(1.0, ANTHROPIC_MAX_EDGE / max(width, height), math.sqrt(ANTHROPIC_MAX_PIXELS / (width * height)))
    return math.ceil(int(width * scale) * int(height * scale) / ANTHROPIC_PIXELS_PER_TOKEN)


def _tiles(width: int, height: int) -> int:
    scale = min(1.0, 2048 / max(width, height))
    width, height = width * scale, height * scale
    scale = min(1.0, 768 / min(width, height))
    return math.ceil(width * scale / 512) * math.ceil(height * scale / 512)


def _patches(width: int, height: int) -> int:
    if math.ceil(width / 32) * math.ceil(height / 32) > 1536:
        shrink = math.sqrt(32 * 32 * 1536 / (width * height))
        shrink *= min(math.floor(width * shrink / 32) / (width * shrink / 32),
                      math.floor(height * shrink / 32) / (height * shrink / 32))
        width, height = int(width * shrink), int(height * shrink)
    return min(1536, math.ceil(width / 32) * math.ceil(height / 32))


def openai_tokens(model: str, width: int, height: int, detail: str = "auto") -> int:
    """OpenAI's rule for ``model``; ``auto`` is billed as ``high`` (what the API picks for
    images larger than a tile, and what the recorded requests show)."""
    rule = openai_rule(model)
    if isinstance(rule, PatchRule):
        return math.ceil(_patches(width, height) * rule.multiplier)
    if detail == "low":
        return rule.base
    return rule.base + rule.tile * _tiles(width, height)


_PAGE = re.compile(rb"/Type\s*/Page(?![a-zA-Z])")


def pdf_pages(data: str) -> int | None:
    """Pages of a base64 PDF, by counting its page objects (no parsing); None if not a PDF."""
    raw = decode(data)
    if raw is None or not raw.startswith(b"%PDF"):
        return None
    return len(_PAGE.findall(raw)) or None


def image_reference(kind: str, extra: Mapping[str, Any]) -> tuple[str | None, str] | None:
    """An image block of any format as ``(data, detail)``: ``data`` is its base64 (or ``data:`` URL),
    None when it is given by URL or file id; None for a block that is not an image.
    Anthropic ``image`` (``source``), Chat ``image_url`` (``{url, detail}``), Responses ``input_image``."""
    if kind == "image":
        source = extra.get("source") if isinstance(extra.get("source"), Mapping) else {}
        data = source.get("data") if source.get("type") == "base64" else None
        return (data if isinstance(data, str) else None, "auto")
    if kind in ("image_url", "input_image"):
        url, detail = extra.get("image_url"), extra.get("detail") or "auto"
        if isinstance(url, Mapping):
            url, detail = url.get("url"), url.get("detail") or detail
        return (url if isinstance(url, str) and url.startswith("data:") else None, str(detail))
    return None


FILE_KINDS = ("document", "input_file", "file")


def file_data(kind: str, extra: Mapping[str, Any]) -> str | None:
    """The base64 data of a file block of any format (Anthropic ``document`` with a base64 source,
    Responses ``input_file`` / Chat ``file`` with ``file_data``); None when given by URL or id."""
    if kind == "document":
        source = extra.get("source") if isinstance(extra.get("source"), Mapping) else {}
        data = source.get("data") if source.get("type") == "base64" else None
    else:
        holder = extra.get("file") if isinstance(extra.get("file"), Mapping) else extra
        data = holder.get("file_data")
    return data if isinstance(data, str) else None


_PAYLOAD_KEYS = ("data", "file_data", "image_url", "url")


def without_payloads(value: Any) -> Any:
    """``value`` with embedded image and file data (``data``, ``file_data``, ``data:`` URLs)
    emptied: counting base64 as text would read a 1 MB screenshot as hundreds of thousands of
    tokens. Other long strings stay (encrypted search results are billed roughly by their size)."""
    if isinstance(value, str):
        return "" if value.startswith("data:") else value
    if isinstance(value, Mapping):
        return {key: "" if key in _PAYLOAD_KEYS and _is_base64(item) else without_payloads(item)
                for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [without_payloads(item) for item in value]
    return value


def _is_base64(value: Any) -> bool:
    """Long and without a space: base64 data (a text document's ``data`` is prose, and kept)."""
    return isinstance(value, str) and len(value) > 1_000 and " " not in value[:1_000]
