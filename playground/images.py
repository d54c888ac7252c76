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
from dataclasses import dataclass

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
