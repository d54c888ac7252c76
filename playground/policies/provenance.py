"""The agents' and providers' own compaction as named policies, read from the dated data file
``data/policies.json``: each one's parameters, what it keeps and drops, its source and the day
it was read. The policies take their defaults from here, and compare and the page show the
source, so a figure and where it came from cannot drift apart.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..errors import InputError

PROVENANCE_FILE = Path(__file__).resolve().parents[1] / "data" / "policies.json"
OURS = "this playground"
# the policies that were here before the agents' own, and where each comes from
OWN_SOURCES = {
    "none": OURS, "rules": f"{OURS} (the book's rules)", "masking": f"{OURS} (after JetBrains, The Complexity Trap)",
    "clear-tool-uses": "https://platform.claude.com/docs/en/build-with-claude/context-editing.md "
                       "(clear_tool_uses_20250919; LangChain ClearToolUsesEdit mirrors it)",
    "summarize": OURS, "hybrid": f"{OURS} (after JetBrains, The Complexity Trap)",
}
_FIELDS = ("title", "family", "defaults", "kept", "dropped", "summary", "source", "read")


@dataclass(frozen=True)
class Provenance:
    """One named policy as its source describes it, and the parameters the playground runs."""

    name: str
    title: str
    family: str  # the policy class that runs it (one class, several named parameter sets)
    params: Mapping[str, Any]
    defaults: str
    kept: str
    dropped: str
    summary: str  # how the summary's size is taken when no LLM is called
    source: str
    read: str  # the day the source was read


def _provenance(name: str, entry: Any, where: str) -> Provenance:
    if not isinstance(entry, dict):
        raise InputError("expected an object", where=where)
    for key in _FIELDS:
        if not isinstance(entry.get(key), str):
            raise InputError("expected a string", where=f"{where}.{key}", value=entry.get(key))
    params = entry.get("params")
    if not isinstance(params, dict):
        raise InputError("expected an object", where=f"{where}.params", value=params)
    return Provenance(name, params=MappingProxyType(params), **{key: entry[key] for key in _FIELDS})


def load_provenance(data: Any, where: str = "policies.json") -> dict[str, Provenance]:
    if not isinstance(data, dict) or not isinstance(data.get("strategies"), dict):
        raise InputError("expected an object with 'strategies'", where=where)
    return {name: _provenance(name, entry, f"{where}.strategies.{name}") for name, entry in data["strategies"].items()}


@functools.cache
def read_provenance(path: Path = PROVENANCE_FILE) -> Mapping[str, Provenance]:
    """The shipped file, read once (it is part of the program, like the vocabularies)."""
    return MappingProxyType(load_provenance(json.loads(path.read_text(encoding="utf-8")), path.name))


def source_of(name: str) -> str:
    """Where policy ``name`` comes from: its source and the day it was read, or ours."""
    found = read_provenance().get(name)
    return f"{found.source} (read {found.read})" if found else OWN_SOURCES.get(name, OURS)
