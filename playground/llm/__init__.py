"""The clients for LLM APIs, used by summarization (``summarize/online.py``) and the live probe
alike: ``endpoint`` (which model, where, how long to wait), ``openai_compatible`` (Chat Completions
through the ``openai`` package), ``anthropic`` (the Messages API, no SDK), the ``transport`` both
send through (one deadline on the whole exchange, a cap on the reply), ``failure`` (one sentence
that never holds the key) and ``keys`` (which key may go to which host). Each client module is
imported on its own: loading ``openai_compatible`` loads the ``openai`` client."""

from .endpoint import Endpoint
from .failure import LLMError

__all__ = ["Endpoint", "LLMError"]
