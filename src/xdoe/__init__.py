"""xdoe: design and run experiment campaigns with agents and environments.

``xgen`` expands one experiment document into reproducible run documents;
``xrun`` executes them phase by phase and records everything in one store.

Sub-packages (one concept each): :mod:`xdoe.documents`, :mod:`xdoe.design`
(its run-file writer: :mod:`xdoe.design.runfiles`),
:mod:`xdoe.agent`, :mod:`xdoe.environment`, :mod:`xdoe.simulation`,
:mod:`xdoe.conditions`, :mod:`xdoe.execution`, :mod:`xdoe.store`,
:mod:`xdoe.components` (built-in agents and environments; old names
:mod:`xdoe.agents`, :mod:`xdoe.environments`), :mod:`xdoe.analysis`, :mod:`xdoe.tree`,
:mod:`xdoe.cli`. Importing :mod:`xdoe` itself is cheap: it loads none of them.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from xdoe.errors import XdoeError

__all__ = ["__version__", "XdoeError", "TrainingSession"]

_LAZY = {"TrainingSession": "xdoe.session"}


def _version() -> str:
    # importlib.metadata scans sys.path for distributions (~20 ms): only when asked
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("xdoe")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0.0.0+unknown"


def __getattr__(name: str) -> Any:
    if name == "__version__":
        value = globals()["__version__"] = _version()
        return value
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'xdoe' has no attribute {name!r}")
