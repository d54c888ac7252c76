"""The framework an adapter plugs into, loaded when the adapter is made, not when its module is
imported: the app installs no framework (``requirements-dev.txt`` holds them for the tests), so
importing any of ``playground`` never needs one, and an adapter made without its framework says what
to install instead of failing at import. Dask's executor loads itself the same way."""

from __future__ import annotations

import importlib
import types
from typing import Any

from ..errors import InputError


def load(module: str, install: str) -> types.ModuleType:
    """``module`` of a framework, or an error naming the ``install`` command that brings it."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        package = module.partition(".")[0]
        raise InputError(f"this adapter needs {package}, which the app does not install: pip install {install}",
                         where="framework", value=module) from exc


def beneath(cls: type, base: Any) -> type:
    """``cls`` with the framework's ``base`` class under it: the class the framework sees, for an
    adapter whose own class cannot name the base at import (``types.new_class``: the SDK's
    ``RunHooks`` is a generic alias, which ``type()`` refuses)."""
    return types.new_class(cls.__name__, (cls, base), exec_body=lambda space: space.update(__module__=cls.__module__))
