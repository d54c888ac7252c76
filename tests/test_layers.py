"""The package's folders are the pipeline's stages, in order: a module may import only from its
own stage or a lower one, and no modules import each other in a circle. Read from the source
(every ``import``, also those inside functions), so a deferred import cannot hide a cycle."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "playground"
# Lowest first. A stage is a top-level module or a folder of playground/.
STAGES = (
    ("errors", "limits", "words", "recall"),  # what every stage shares (recall: the store of originals)
    ("llm",),  # the clients for LLM APIs, used by summarization and the probe alike
    ("conversation",),  # the model every format reads into
    ("formats",),  # wire formats and agent logs ⇄ conversation
    ("meter",),  # counting, as the provider bills
    ("rules",),  # the two rule tables, error patterns, the editor's rows
    ("facts",),  # the span grammar and the ledger of a run's facts, read from its log
    ("compaction",),  # one pass behind the threshold
    ("summarize",),  # the last resort
    ("engine",),  # the whole optimizer, and the object that owns the caches
    ("policies",),  # ours and the agents' own, behind one interface
    ("run",),  # a whole run: replay, compare, prompt cache, prices
    ("tune",),  # suggested rules (checked by replaying the run they are for) and rule presets
    ("present",),  # reports and what the screen shows, as values
    ("export",),  # what is written out
    ("probe", "quiz"),  # requests sent to a live model beside the originals: the next step, questions on facts
    ("workbench",),  # presets, lessons, builder, workspaces: the page's material without Streamlit
    ("corpus",),  # all of a person's runs: find, evaluate, executors, sweep
    ("agent",),  # the tuned policy inside an agent's own client: wrappers, the policy file, the run log
    ("refit",),  # tools that refit the meters' constants; not run time
    ("ui",),  # the Streamlit page
    ("cli", "__main__", "__init__"),  # the command line and the public API
)
RANK = {stage: rank for rank, names in enumerate(STAGES) for stage in names}


def _module(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """The playground modules ``path`` imports (``from . import x`` counts as importing ``x``)."""
    module = _module(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            if source.split(".")[0] == "playground":
                found |= {f"{source}.{alias.name}" if _exists(f"{source}.{alias.name}") else source
                          for alias in node.names}
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.split(".")[0] == "playground"}
    return found - {module}


def _exists(module: str) -> bool:
    path = PACKAGE.parent.joinpath(*module.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def _stage(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


GRAPH = {_module(path): _imports(path) for path in sorted(PACKAGE.rglob("*.py"))}


def test_every_stage_is_listed() -> None:
    assert {_stage(module) for module in GRAPH} <= set(RANK), "a new folder or module needs its place in STAGES"


@pytest.mark.parametrize("module", sorted(GRAPH))
def test_no_import_from_a_higher_stage(module: str) -> None:
    upward = sorted(target for target in GRAPH[module] if RANK[_stage(target)] > RANK[_stage(module)])
    assert not upward, f"{module} ({_stage(module)}) imports from a higher stage: {upward}"


def test_no_import_cycle() -> None:
    """Depth-first search over the module graph; a package's ``__init__`` importing its own
    submodules is the one edge allowed to point back (the submodules never import it)."""
    done: set[str] = set()

    def visit(module: str, path: list[str]) -> None:
        if module in path:
            cycle = [*path[path.index(module):], module]
            raise AssertionError("import cycle: " + " → ".join(cycle))
        if module in done:
            return
        for target in GRAPH.get(module, ()):
            visit(target, [*path, module])
        done.add(module)

    for module in GRAPH:
        visit(module, [])


def test_the_walker_reads_relative_and_deferred_imports() -> None:
    """The graph holds what the modules really import: a relative import of another stage's
    module, and one made inside a function (the CLI loads the endpoint only when asked)."""
    assert "playground.meter.tokens" in GRAPH["playground.rules.breakdown"]
    assert "playground.summarize.online" in GRAPH["playground.cli.compact"]
