"""Importing an object by its name in a document (``pkg.module:Name``), with
errors that name the document key: the one importer of component classes
(:func:`xdoe.execution.load_class`) and of the callables a component names
(:class:`xdoe.components.environments.FunctionEnvironment`'s ``function``)."""

from __future__ import annotations

import difflib
import importlib
from typing import Any

from xdoe.errors import ComponentError, ComponentImportError

__all__ = ["import_name"]


def _split(name: str) -> tuple[str, str]:
    if ":" in name:
        module, _, attr = name.partition(":")
    else:
        module, _, attr = name.rpartition(".")
    return module.strip(), attr.strip()


def import_name(name: str, key: str, *, what: str = "Name") -> Any:
    """The object named ``name``: ``"pkg.module:Name"``, ``"pkg:Name"`` or
    ``"pkg.module.Name"`` (``Name`` may be dotted, ``Outer.Inner``).

    Args:
        name: the name as the document writes it.
        key: the document key it came from (for messages).
        what: how messages call the object's part of the name (``Class``, ``function``).

    Raises:
        ComponentError: the name is malformed, relative or names ``__main__``,
            the attribute does not exist (with close matches).
        ComponentImportError: the module cannot be imported (with the
            underlying error).
    """
    form = f"'pkg.module:{what}'"
    expected = f"expected a {'component ' if what == 'Class' else ''}name {form}, got {name!r}"
    if not isinstance(name, str) or not name.strip():
        raise ComponentError(f"{key}: {expected}")
    module_name, attr = _split(name)
    if not module_name or not attr or name.count(":") > 1:
        raise ComponentError(f"{key}: {expected}")
    if module_name.startswith("."):
        raise ComponentError(f"{key}: {name!r} is a relative module name; name the module from its "
                             f"top-level package ({form})")
    if module_name == "__main__" or module_name.startswith("__main__."):
        raise ComponentError(f"{key}: {name!r} names __main__, the program that happens to run, not a "
                             f"module a run's worker process can import; name the module that defines "
                             f"it ({form})")
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # ImportError, SyntaxError, errors raised by the module
        raise ComponentImportError(
            f"{key}: cannot import module {module_name!r} (for {name!r}): "
            f"{type(exc).__name__}: {exc}"
        ) from exc
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            candidates = [n for n in dir(obj) if not n.startswith("_")]
            close = difflib.get_close_matches(part, candidates, n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise ComponentError(
                f"{key}: module {module_name!r} has no attribute {attr!r} (for {name!r}){hint}"
            )
        obj = getattr(obj, part)
    return obj
