"""Which model, at which server, with which key and how long to wait."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..limits import seconds
from .keys import DEFAULT_HOST, without_credentials

DEFAULT_TIMEOUT = 60.0
DEFAULT_RETRIES = 2  # attempts after the first, for 408/409/429/5xx and refused connections, within the timeout


@dataclass(frozen=True)
class Endpoint:
    """Where a model is served and how long to wait for it: one value both clients take, so the
    page's and the CLI's fields reach either provider the same way."""

    model: str
    base_url: str | None = None  # None: api.openai.com
    api_key: str | None = field(default=None, repr=False)
    timeout: float = DEFAULT_TIMEOUT  # seconds for the whole request, retries included
    max_retries: int = DEFAULT_RETRIES

    def __post_init__(self) -> None:
        seconds(self.timeout)

    @property
    def where(self) -> str:
        """The host (and port) for messages and labels, without any ``user:password@``."""
        if not self.base_url:
            return DEFAULT_HOST
        url = without_credentials(self.base_url)
        return url.split("//", 1)[-1].split("/", 1)[0] or url
