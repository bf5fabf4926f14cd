"""Lazy re-exports for package ``__init__`` modules (PEP 562).

A package lists its public names by private module; each module is imported
on the first access to one of its names, so ``import xdoe.store`` or
``from xdoe.execution import run`` loads only what is used (``xrun`` starts
faster). ``from package import *``, ``dir(package)`` and
``getattr(package, name)`` behave as with eager imports.

The map is the one list of the package's names: ``__all__`` is derived from
it (:func:`public_names`), and a ``TYPE_CHECKING`` block imports the same
names for type checkers, each as ``Name as Name`` (the form that marks a
re-export when ``__all__`` is not a literal); ``tests/test_architecture.py``
checks that the block and the map agree. Example::

    from typing import TYPE_CHECKING

    from xdoe._lazy import lazy_exports, public_names

    if TYPE_CHECKING:
        from xdoe.components.environments._dummy import DummyEnvironment as DummyEnvironment

    _EXPORTS = {"xdoe.components.environments._dummy": ["DummyEnvironment"]}
    __all__ = public_names(_EXPORTS)
    __getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)

A package that moved keeps its old name as an alias (:func:`alias_package`):
the old package re-exports the new one's names and ``old.sub`` imports as the
very module object ``new.sub``, so documents and pickles that name the old
paths keep loading the same classes.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
from importlib import import_module
from types import ModuleType
from typing import Any, Callable, Mapping, Sequence

__all__ = ["lazy_exports", "public_names", "alias_package", "lazy_origin", "lazy_names"]

#: package -> {public name: module defining it}, for every package using lazy_exports
_ORIGINS: dict[str, dict[str, str]] = {}
#: package -> the names it makes importable but leaves out of ``__all__``
_UNLISTED: dict[str, frozenset[str]] = {}
#: alias package -> the package it stands for (alias_package)
_ALIASES: dict[str, str] = {}


def lazy_origin(package: str, name: str) -> str | None:
    """The module that defines ``package.name`` when ``package`` (already
    imported) re-exports it lazily, without importing that module; else ``None``."""
    package = _ALIASES.get(package, package)
    return _ORIGINS.get(package, {}).get(name)


def public_names(modules: Mapping[str, Sequence[str]]) -> list[str]:
    """``__all__`` of a package: the names of ``modules`` (module name -> the
    names it defines, as given to :func:`lazy_exports`), in order.

    Raises:
        ValueError: a name is listed twice.
    """
    names = [name for listed in modules.values() for name in listed]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise ValueError(f"listed more than once: {', '.join(twice)}")
    return names


def lazy_names(package: str) -> tuple[dict[str, str], frozenset[str]]:
    """What ``package`` (already imported) re-exports lazily: ``{name: module}``
    and the names left out of its ``__all__`` (for the architecture test)."""
    return dict(_ORIGINS.get(package, {})), _UNLISTED.get(package, frozenset())


def lazy_exports(
    package: str, namespace: dict[str, Any], modules: Mapping[str, Sequence[str]], *,
    unlisted: Mapping[str, Sequence[str]] | None = None,
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module-level ``__getattr__`` and ``__dir__`` of ``package``.

    Args:
        package: the package's ``__name__`` (for error messages).
        namespace: the package's ``globals()``; a name is stored there once
            imported, so later accesses are plain attribute lookups.
        modules: module name -> the public names it defines.
        unlisted: likewise for names importable from the package but not
            public (not in ``__all__``, e.g. ORM models for tests).

    ``__getattr__`` raises ``AttributeError`` for any other name;
    ``__dir__`` lists the exported names, ``__all__`` and the private names.
    """
    origin = {name: module for module, names in modules.items() for name in names}
    hidden = {name: module for module, names in (unlisted or {}).items() for name in names}
    origin.update(hidden)
    _ORIGINS[package] = origin
    _UNLISTED[package] = frozenset(hidden)

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


class _AliasLoader(importlib.abc.Loader):
    """Loads ``old.sub`` as the module object ``new.sub`` (imported normally)."""

    def __init__(self, target: str) -> None:
        self.target = target
        self._spec: importlib.machinery.ModuleSpec | None = None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = import_module(self.target)
        self._spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        # the import system set the alias spec on the shared module: put its own back
        module.__spec__ = self._spec


class _AliasFinder(importlib.abc.MetaPathFinder):
    """Finds the submodules of an alias package: ``old.x.y`` -> ``new.x.y``."""

    def __init__(self, old: str, new: str) -> None:
        self.old, self.new = old, new

    def find_spec(self, fullname: str, path: Any = None, target: Any = None
                  ) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith(self.old + "."):
            return None
        real = self.new + fullname[len(self.old):]
        if importlib.util.find_spec(real) is None:
            return None
        return importlib.util.spec_from_loader(fullname, _AliasLoader(real))


def alias_package(old: str, new: str) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """Make package ``old`` (calling this from its ``__init__``) an alias of ``new``.

    ``old.Name`` is ``new.Name`` and ``import old.sub`` gives the module
    object ``new.sub`` itself (``sys.modules`` holds it under both names),
    so ``old.sub:Name`` addresses, ``old.sub.Name`` pickles and
    ``isinstance`` checks all see the same classes. ``new`` is imported on
    first use (its own names stay lazy).

    Returns:
        ``(__getattr__, __dir__, __all__)`` for ``old``'s namespace.
    """
    _ALIASES[old] = new
    if not any(isinstance(f, _AliasFinder) and f.old == old for f in sys.meta_path):
        sys.meta_path.insert(0, _AliasFinder(old, new))
    target = import_module(new)

    def __getattr__(name: str) -> Any:
        if name in target.__all__:
            return getattr(target, name)
        raise AttributeError(f"module {old!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted({*target.__all__, "__all__"})

    return __getattr__, __dir__, list(target.__all__)
