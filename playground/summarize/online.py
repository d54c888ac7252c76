"""An LLM as summarizer: the plan's prompt and trimmed transcript in one Chat Completions request
to an OpenAI-compatible endpoint (``llm.openai_compatible``), beside ``offline``'s extractive one.
Imported on its own: loading it loads the ``openai`` client."""

from __future__ import annotations

from ..llm.endpoint import Endpoint
from ..llm.openai_compatible import OpenAIClient
from .history import Plan


def label(endpoint: Endpoint) -> str:
    """What a summary from ``endpoint`` is called in the request and the cache: the model and host,
    never a key."""
    return f"LLM summary — {endpoint.model} at {endpoint.where}"


class OpenAISummarizer:
    """Summarizes a plan with one request to ``endpoint``; failures raise ``LLMError``."""

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint
        self.label = label(endpoint)
        self.client = OpenAIClient(endpoint)

    def summarize(self, plan: Plan) -> str:
        return self.client.complete([{"role": "system", "content": plan.prompt},
                                     {"role": "user", "content": "History to summarize:\n\n" + plan.transcript}])

    def check(self) -> str:
        """A one-word request, to test the connection, key and model before a real summary."""
        return self.client.check()
