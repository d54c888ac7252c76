"""How an LLM client fails: one sentence that is safe to show, never holding the API key."""

from __future__ import annotations

import re

_KEY_LIKE = re.compile(r"\bsk-[\w*.\-]{4,}")  # OpenAI-style keys, as providers echo them


class LLMError(Exception):
    """A model could not give what was asked (no connection, refused, malformed or empty reply);
    the message is safe to show (no secrets)."""


def scrub(text: str, key: str | None) -> str:
    """No key in a message: ours replaced, and anything shaped like a key masked."""
    text = text.replace(key, "***") if key else text
    return _KEY_LIKE.sub("sk-***", text)
