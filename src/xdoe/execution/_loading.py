"""Dynamic loading of components named ``pkg.module:Class`` (or ``pkg:Class``,
or the dotted ``pkg.module.Class``) and their construction with the
document's ``params`` as keyword arguments."""

from __future__ import annotations

import difflib
import importlib
import inspect
from typing import Any, Mapping

from xdoe.errors import ComponentError

__all__ = ["load_class", "construct", "accepted_parameters"]


def _split(name: str) -> tuple[str, str]:
    if ":" in name:
        module, _, attr = name.partition(":")
    else:
        module, _, attr = name.rpartition(".")
    return module.strip(), attr.strip()


def load_class(name: str, key: str, *, base: type | None = None) -> type:
    """Import the class named ``name``.

    Args:
        name: ``"pkg.module:Class"``, ``"pkg:Class"`` or ``"pkg.module.Class"``;
            ``Class`` may be dotted (``Outer.Inner``).
        key: the document key the name came from (for messages), e.g.
            ``"schedule[0].training.agents[0].brain"``.
        base: when given, the class must be a subclass of it.

    Raises:
        ComponentError: the name is malformed, the module cannot be imported
            (with the underlying error), the attribute does not exist (with
            close matches), or the object is not a (suitable) class.
    """
    if not isinstance(name, str) or not name.strip():
        raise ComponentError(f"{key}: expected a component name 'pkg.module:Class', got {name!r}")
    module_name, attr = _split(name)
    if not module_name or not attr:
        raise ComponentError(f"{key}: expected a component name 'pkg.module:Class', got {name!r}")
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # ImportError, SyntaxError, errors raised by the module
        raise ComponentError(
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
    if not isinstance(obj, type):
        raise ComponentError(f"{key}: {name!r} is not a class but {type(obj).__name__}")
    if base is not None and not issubclass(obj, base):
        raise ComponentError(
            f"{key}: {name!r} is not a subclass of {base.__module__}.{base.__qualname__}"
        )
    return obj


_PLUGIN_BASES = frozenset(
    {
        ("xdoe.agent._agent", "Brain"),
        ("xdoe.agent._agent", "Muscle"),
        ("xdoe.agent._agent", "Objective"),
        ("xdoe.environment._environment", "Environment"),
        ("xdoe.environment._environment", "Reward"),
        ("xdoe.simulation._base", "SimulationController"),
        ("xdoe.conditions._base", "TerminationCondition"),
    }
)


def accepted_parameters(cls: type) -> tuple[list[str], bool]:
    """Keyword parameters ``cls(...)`` accepts, following ``**params`` up the
    MRO (xdoe's plugin base classes accept none).

    Returns:
        ``(names, open_ended)``: the names in order, and whether the class's
        own ``__init__`` takes ``**params`` (then other keywords may be
        accepted too, e.g. passed on to ``gymnasium.make``, and only the
        constructor itself can refuse them).
    """
    names: list[str] = []
    open_ended: bool | None = None
    for klass in cls.__mro__:
        if klass is object:
            break
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        try:
            sig = inspect.signature(init)
        except (TypeError, ValueError):
            return names, True
        var_kw = False
        for i, p in enumerate(sig.parameters.values()):
            if i == 0 and p.name == "self":
                continue
            if p.kind is p.VAR_KEYWORD:
                var_kw = True
            elif p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name not in names:
                names.append(p.name)
        is_base = (klass.__module__, klass.__qualname__) in _PLUGIN_BASES
        if open_ended is None:
            open_ended = var_kw and not is_base
        if not var_kw or is_base:
            break
    return names, bool(open_ended)


def _describe(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def construct(
    cls: type, key: str, params: Mapping[str, Any] | None, /, **fixed: Any
) -> Any:
    """``cls(**fixed, **params)`` with errors that name the document key.

    Args:
        cls: the class to construct.
        key: the document key of the component (for messages).
        params: the document's ``params`` (keyword arguments).
        **fixed: arguments the executor passes (``uid``, ``seed``).

    Raises:
        ComponentError: ``params`` is not a mapping, holds an unknown
            parameter (the message lists the accepted ones and close
            matches), lacks a required one, or the constructor raised (with
            the underlying error).
    """
    params = {} if params is None else params
    if not isinstance(params, Mapping):
        raise ComponentError(f"{key}.params: expected a mapping, got {type(params).__name__}")
    clash = sorted(set(params) & set(fixed))
    if clash:
        raise ComponentError(
            f"{key}.params: {', '.join(clash)} is set by the executor and cannot be a parameter"
        )
    kwargs = {**fixed, **params}
    accepted, open_ended = accepted_parameters(cls)
    user_accepted = [n for n in accepted if n not in fixed]
    try:
        sig = inspect.signature(cls)
    except (TypeError, ValueError):
        sig = None
    if sig is not None:
        has_var_kw = any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values())
        unknown = [] if open_ended else [k for k in params if k not in accepted]
        if unknown:
            hints = []
            for k in unknown:
                close = difflib.get_close_matches(str(k), user_accepted, n=1)
                hints.append(f"{k!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
            raise ComponentError(
                f"{key}.params: {_describe(cls)} does not accept {', '.join(hints)}; "
                f"accepted parameters: {', '.join(user_accepted) or '(none)'}"
            )
        if not has_var_kw:
            missing = [
                p.name
                for p in sig.parameters.values()
                if p.default is p.empty
                and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
                and p.name not in kwargs
            ]
            if missing:
                raise ComponentError(
                    f"{key}.params: {_describe(cls)} requires {', '.join(missing)}; "
                    f"accepted parameters: {', '.join(user_accepted) or '(none)'}"
                )
    try:
        return cls(**kwargs)
    except Exception as exc:
        extra = ""
        if isinstance(exc, TypeError):
            extra = f"; accepted parameters: {', '.join(user_accepted) or '(none)'}"
        raise ComponentError(
            f"{key}: {_describe(cls)}(...) raised {type(exc).__name__}: {exc}{extra}"
        ) from exc
