"""A model's own name inside the name a router or a cloud gives it.

Agents that reach models through LiteLLM, OpenRouter, Bedrock or Vertex log the route with the
model: ``openrouter/openai/gpt-4o-mini``, ``anthropic/claude-3.5-sonnet``,
``us.anthropic.claude-sonnet-4-20250514-v1:0``, ``claude-3-5-sonnet-v2@20241022``. The meter
(which tokenizer, which accounting) and the price table (which row) must see ``gpt-4o-mini`` and
``claude-3-5-sonnet-…`` in them, or a model we list is counted and priced as another.
"""

from __future__ import annotations

import re

_CLOUD_VENDOR = re.compile(r"^(?:[a-z]{2,4}\.)?(?:anthropic|openai)\.")  # Bedrock: [region.]vendor.model
_BEDROCK_VERSION = re.compile(r"-v\d+(?::\d+)?$")  # Bedrock's own version suffix: -v1:0, -v2
_DOTTED_VERSION = re.compile(r"(?<=\d)\.(?=\d)")  # OpenRouter and Cline write claude-3.5-sonnet, claude-sonnet-4.5


def bare(model: str | None) -> str | None:
    """``model`` without its route: the last ``/`` part, without a cloud's vendor prefix or
    version suffix, and a Claude name with dashes where the route wrote dots (Anthropic's own
    names have none). A name with no route comes back as it is."""
    if not model:
        return model
    last = model.rsplit("/", 1)[-1]
    name = _CLOUD_VENDOR.sub("", last)
    if name != last:  # (only Bedrock's names carry its version: Anthropic's own claude-v1 keeps its)
        name = _BEDROCK_VERSION.sub("", name)
    if not name.lower().startswith("claude"):
        return name or model
    return _DOTTED_VERSION.sub("-", name.replace("@", "-"))
