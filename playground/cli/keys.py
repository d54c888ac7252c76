"""The API key a command sends to an LLM endpoint (compact's summarizer, the probe's model)."""

from __future__ import annotations

import os

from ..errors import InputError


def api_key(base_url: str | None, provider: str = "openai") -> str | None:
    """The key for ``base_url`` from the environment, by the one rule in ``keys``; a key the rule
    withholds from this host is an error that says how to allow it (never what the key is)."""
    from ..llm import keys

    choice = keys.resolve_key(base_url, None, os.environ, {}, provider)
    if choice.source == keys.WITHHELD:
        name, own = keys.PROVIDER_KEYS[provider]
        raise InputError(f"{name} is sent only to {own} and the hosts listed in "
                         f"{keys.HOSTS_NAME}; to send it to {choice.host or 'this URL'}, set "
                         f"{keys.HOSTS_NAME}={choice.host or '<host>'} (or unset {name} for a server that "
                         "needs no key)", where="--base-url")
    return choice.key
