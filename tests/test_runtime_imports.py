"""Every package the app imports at run time comes with ``requirements.txt``.

The test environment installs far more (pytest, playwright, anthropic, langchain and what they pull
in), so an app import that only a test-only package brings in passes every other test and fails on a
person's fresh install: ``playground/keys.py`` once imported ``httpx``, which ``openai`` 3.x no longer
depends on. This reads every ``import`` in ``app.py`` and ``playground/`` (tests and scripts are not
run time), maps each third-party top module to the installed distribution that provides it, and
checks that distribution is named in ``requirements.txt`` or required by one that is, transitively,
as pip installs them. ``scripts/check-runtime`` (run by CI) then proves it on a clean virtualenv.
"""

from __future__ import annotations

import ast
import sys
from importlib import metadata
from pathlib import Path

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

import playground as pg
from playground.errors import InputError

from .conftest import ROOT

OWN = {"playground", "__future__"}


def module_name(path: Path, root: Path = ROOT) -> str:
    return ".".join(path.relative_to(root).with_suffix("").parts)


def runtime_imports(files: list[Path], root: Path = ROOT) -> dict[str, str]:
    """Third-party top-level modules imported anywhere in ``files`` (inside functions too), each
    with the first place it is imported (``path:line``)."""
    found: dict[str, str] = {}
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top not in OWN:
                    found.setdefault(top, f"{path.relative_to(root)}:{node.lineno}")
    return found


def app_files(root: Path = ROOT) -> list[Path]:
    return [root / "app.py", *sorted((root / "playground").rglob("*.py"))]


def _requirements(lines: list[str]) -> list[Requirement]:
    """The requirements a requirements file names (options such as ``-r`` and comments skipped)."""
    cleaned = (line.split("#", 1)[0].strip() for line in lines)
    return [Requirement(line) for line in cleaned if line and not line.startswith("-")]


def installed_closure(requirements: list[Requirement]) -> set[str]:
    """Every distribution pip installs for ``requirements`` here: each one and, transitively, what
    it requires on this platform (extras only where a requirement asks for them)."""
    environment = default_environment()
    closure: set[str] = set()
    todo = [(requirement, frozenset(requirement.extras)) for requirement in requirements]
    while todo:
        requirement, extras = todo.pop()
        name = canonicalize_name(requirement.name)
        if name in closure:
            continue
        closure.add(name)
        try:
            needs = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        for text in needs:
            need = Requirement(text)
            if need.marker is None or any(need.marker.evaluate({**environment, "extra": extra})
                                          for extra in (extras or {""})):
                todo.append((need, frozenset(need.extras)))
    return closure


def not_provided(imports: dict[str, str], closure: set[str]) -> list[str]:
    """One line per imported module that no distribution in ``closure`` provides."""
    provides = metadata.packages_distributions()
    missing = []
    for module, where in sorted(imports.items()):
        dists = {canonicalize_name(dist) for dist in provides.get(module, [])}
        if not dists:
            missing.append(f"{module} ({where}): not installed here at all")
        elif not dists & closure:
            missing.append(f"{module} ({where}): from {', '.join(sorted(dists))}, which requirements.txt does not "
                           "bring in")
    return missing


def _runtime_closure() -> set[str]:
    return installed_closure(_requirements((ROOT / "requirements.txt").read_text().splitlines()))


def test_every_runtime_import_comes_with_requirements_txt():
    assert not_provided(runtime_imports(app_files()), _runtime_closure()) == []


def test_the_app_imports_what_requirements_txt_names():
    """The reading finds the app's real imports (a check that found nothing would pass vacuously)."""
    found = runtime_imports(app_files())
    assert {"streamlit", "tiktoken", "openai", "PIL", "altair"} <= set(found)
    assert "pytest" not in found and "httpx" not in found


def test_an_import_only_a_test_package_brings_in_is_caught(tmp_path):
    (tmp_path / "playground").mkdir()
    (tmp_path / "app.py").write_text("import streamlit\n")
    (tmp_path / "playground" / "keys.py").write_text("def host():\n    import httpx\n    from PIL import Image\n")
    imports = runtime_imports(app_files(tmp_path), tmp_path)
    assert imports == {"streamlit": "app.py:1", "httpx": "playground/keys.py:2", "PIL": "playground/keys.py:3"}
    missing = not_provided(imports, _runtime_closure())
    assert len(missing) == 1 and missing[0].startswith("httpx (playground/keys.py:2): from httpx, which")


def test_a_requirement_removed_from_the_file_is_caught():
    """tiktoken comes with nothing else (pillow, say, also comes with streamlit)."""
    without_tiktoken = [line for line in (ROOT / "requirements.txt").read_text().splitlines()
                      if not line.startswith("tiktoken")]
    missing = not_provided(runtime_imports(app_files()), installed_closure(_requirements(without_tiktoken)))
    assert [line.split(" ")[0] for line in missing] == ["tiktoken", "tiktoken_ext"]


def test_a_framework_adapter_imports_without_its_framework_and_says_what_to_install(monkeypatch):
    """The adapters load LangChain and the Agents SDK, which requirements.txt does not bring in, only
    when one is made: their modules import on a fresh install, and one made there names the install."""
    for name in [name for name in sys.modules if name.split(".")[0] in ("langchain", "langchain_core", "agents")]:
        monkeypatch.setitem(sys.modules, name, None)  # as if not installed (an earlier test's import too): it fails
    for name in ("langchain", "langchain_core", "agents"):
        monkeypatch.setitem(sys.modules, name, None)
    for module, adapter, install in (("langchain_middleware", "CompactingMiddleware", "langchain langchain-openai"),
                                     ("agents_sdk", "CompactingFilter", "openai-agents")):
        monkeypatch.delitem(sys.modules, f"playground.agent.{module}", raising=False)
        made = getattr(__import__(f"playground.agent.{module}", fromlist=[adapter]), adapter)
        with pytest.raises(InputError, match=f"pip install {install}"):
            made(pg.make("rules"))
