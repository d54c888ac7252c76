"""The tuned policy inside an agent: a runnable loop around the agent's own client, wrapped with
``pg.compacting`` and reading the workspace the page saves. The code lives in data files
(``data/snippets/``) so it reads as the code it is; a test runs each one as written against the
local API servers, so a snippet the page hands out cannot drift from the wrapper."""

from __future__ import annotations

from pathlib import Path
from string import Template

from ..errors import InputError
from ..meter.claude import is_claude

SNIPPETS = Path(__file__).resolve().parents[1] / "data" / "snippets"
# Each client the wrapper takes and each framework an adapter plugs into, and the words the page shows.
CLIENTS: dict[str, str] = {
    "openai": "OpenAI client (chat.completions, any OpenAI-compatible server)",
    "anthropic": "Anthropic client (messages)",
    "langchain": "LangChain agent (middleware)",
    "agents-sdk": "OpenAI Agents SDK (input filter)",
}
WORKSPACE_FILE = "playground.workspace.json"  # the name the page's Save workspace gives the file
# a model of the client's own, when the page's is not (the frameworks here call OpenAI-compatible servers)
MODELS = {"openai": "gpt-4o", "anthropic": "claude-sonnet-4-5", "langchain": "gpt-4o", "agents-sdk": "gpt-4o"}


def wrapper_snippet(client: str, model: str | None = None, workspace_file: str = WORKSPACE_FILE) -> str:
    """The agent loop for ``client`` with its requests compacted by the policy in ``workspace_file``,
    calling ``model`` (the client's usual model when None: the page's model may be another provider's)."""
    if client not in CLIENTS:
        raise InputError(f"no snippet for the client {client!r} (choose {', '.join(CLIENTS)})", where="client",
                         value=client)
    template = Template((SNIPPETS / f"{client}.py.txt").read_text(encoding="utf-8"))
    return template.substitute(model=model or MODELS[client], workspace_file=workspace_file)


def client_model(client: str, model: str) -> str:
    """The model the snippet for ``client`` calls: the page's model when that client serves it (a Claude
    model by Anthropic's own name through Anthropic's client; anything else, routed names such as
    ``openrouter/anthropic/claude-…`` among them, through an OpenAI-compatible one), else the client's usual."""
    return model if (client == "anthropic") == is_claude(model) else MODELS[client]
