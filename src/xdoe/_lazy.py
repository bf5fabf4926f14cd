"""Lazy re-exports for package ``__init__`` modules (PEP 562).

A package lists its public names by private module; each module is imported
on the first access to one of its names, so ``import xdoe.store`` or
``from xdoe.execution import run`` loads only what is used (``xrun`` starts
faster). ``from package import *``, ``dir(package)`` and
``getattr(package, name)`` behave as with eager imports.

Example (in ``xdoe/environments/__init__.py``)::

    __getattr__, __dir__ = lazy_exports(__name__, globals(), {
        "xdoe.environments._dummy": ["DummyEnvironment"],
    })
"""

from __future__ import annotations

from importlib import import_module
from typing import Any, Callable, Mapping, Sequence

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, namespace: dict[str, Any], modules: Mapping[str, Sequence[str]]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module-level ``__getattr__`` and ``__dir__`` of ``package``.

    Args:
        package: the package's ``__name__`` (for error messages).
        namespace: the package's ``globals()``; a name is stored there once
            imported, so later accesses are plain attribute lookups.
        modules: module name -> the public names it defines.

    ``__getattr__`` raises ``AttributeError`` for any other name;
    ``__dir__`` lists the exported names, ``__all__`` and the private names.
    """
    origin = {name: module for module, names in modules.items() for name in names}

    def __getattr__(name: str) -> Any:
        module = origin.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:  # the public names and the private ones, not helpers like TYPE_CHECKING
        public = {*origin, *namespace.get("__all__", ())}
        return sorted(public | {name for name in namespace if name.startswith("_")})

    return __getattr__, __dir__
