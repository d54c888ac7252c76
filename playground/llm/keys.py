"""Which API key goes to which host: one decision for the CLI and the page.

A key the operator configured (``OPENAI_API_KEY`` in the environment or in ``st.secrets``) is a
secret of the person running the server, not of the visitor typing a Base URL. So it is sent only
to OpenAI's own host and to hosts the operator lists in ``PLAYGROUND_KEY_HOSTS`` (comma-separated
host names, in the environment or in the secrets). Any other host gets a key only if one is typed
for it. Without this rule, a visitor could point the Base URL at their own server and read the
operator's key from the ``Authorization`` header.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

DEFAULT_HOST = "api.openai.com"
KEY_NAME = "OPENAI_API_KEY"
HOSTS_NAME = "PLAYGROUND_KEY_HOSTS"
ANTHROPIC = "anthropic"
# Each provider's key variable and own host: the same rule for both (the key goes to its own host,
# to the hosts the operator lists, and nowhere else unless typed for it).
PROVIDER_KEYS = {"openai": (KEY_NAME, DEFAULT_HOST), ANTHROPIC: ("ANTHROPIC_API_KEY", "api.anthropic.com")}

TYPED, OPERATOR, NONE, WITHHELD = "typed", "operator", "none", "withheld"
_NAME = re.compile(r"[a-z0-9._-]+")  # a host name or IPv4 address with nothing the client would re-encode
_IPV6 = re.compile(r"[0-9a-f:.]+")
_AMBIGUOUS = re.compile(r"[\s\x00-\x1f\x7f\\]")  # parsers disagree on these: such a URL names no host


@dataclass(frozen=True)
class KeyChoice:
    key: str | None = field(repr=False)
    source: str  # TYPED, OPERATOR, NONE or WITHHELD (an operator key exists but this host may not have it)
    host: str
    allowed: bool  # the host may receive the operator's key

    @property
    def label(self) -> str:
        """Safe to show a visitor: never the key, never where the operator keeps it, and the same
        words at an unlisted host whether or not the operator has a key."""
        if self.source == TYPED:
            return "the key typed here"
        if self.source == OPERATOR:
            return "a key configured by the operator"
        if self.allowed:
            return "none"
        return f"none: {self.host or 'this host'} gets a key only if you type one (local servers need none)"


def _authority(url: str) -> str:
    """The part of ``url`` that names the host (``user:password@host:port``), also for a URL
    typed without a scheme."""
    try:
        return urlsplit(url if "//" in url else f"//{url}").netloc
    except ValueError:  # an unclosed IPv6 bracket
        return ""


def host_of(base_url: str | None, default: str = DEFAULT_HOST) -> str:
    """The host name a request to ``base_url`` goes to (lower case, no port, no user:password);
    empty when none can be read, which no operator can have listed.

    Read the way the openai client's own parser reads it (the first ``/``, ``?`` or ``#`` ends the
    authority, its last ``@`` ends the user part; a test checks the two agree). A URL with a space,
    a control character or a backslash is one parsers disagree on, and a host with anything but
    letters, digits, dots, dashes (or an IPv6 address in brackets) is one the client re-encodes:
    either names no host, so the operator's key never goes to a guess."""
    if not base_url or not base_url.strip():
        return default
    url = base_url.strip()
    if _AMBIGUOUS.search(url):
        return ""
    address = _authority(url).rsplit("@", 1)[-1].lower()
    if address.startswith("["):  # an IPv6 address: [host] or [host]:port
        host, closed, port = address[1:].partition("]")
        port = port.removeprefix(":") if closed and (port.startswith(":") or not port) else "not a port"
        fits = _IPV6.fullmatch(host)
    else:
        host, _, port = address.partition(":")
        fits = _NAME.fullmatch(host)
    return host if fits and (not port or port.isdigit()) else ""


def without_credentials(url: str) -> str:
    """``url`` with any ``user:password@`` removed, for labels and messages."""
    authority = _authority(url)
    return url.replace(authority, authority.rsplit("@", 1)[1], 1) if "@" in authority else url


def allowed_hosts(env: Mapping[str, str], secrets: Mapping[str, str], own: str = DEFAULT_HOST) -> frozenset[str]:
    """The provider's own host (OpenAI's by default) and those the operator listed (environment
    and secrets together)."""
    listed = f"{env.get(HOSTS_NAME, '')},{secrets.get(HOSTS_NAME, '')}"
    return frozenset({own} | {name.strip().lower() for name in listed.split(",") if name.strip()})


def resolve_key(base_url: str | None, typed_key: str | None, env: Mapping[str, str],
                secrets: Mapping[str, str], provider: str = "openai") -> KeyChoice:
    """The key to send to ``base_url``: a typed one always; the operator's (secrets first, then
    the environment; ``provider`` names which variable and whose own host) only to an allowed host;
    otherwise none, marked WITHHELD when one exists."""
    key_name, own = PROVIDER_KEYS[provider]
    host = host_of(base_url, own)
    allowed = host in allowed_hosts(env, secrets, own)
    if typed_key and typed_key.strip():
        return KeyChoice(typed_key.strip(), TYPED, host, allowed)
    operator = secrets.get(key_name) or env.get(key_name) or None
    if operator is None:
        return KeyChoice(None, NONE, host, allowed)
    return KeyChoice(operator, OPERATOR, host, allowed) if allowed else KeyChoice(None, WITHHELD, host, allowed)
