"""Dynamic loading of components named ``pkg.module:Class`` (or ``pkg:Class``,
or the dotted ``pkg.module.Class``) and their construction with the
document's ``params`` as keyword arguments."""

from __future__ import annotations

import ast
import difflib
import functools
import inspect
import itertools
import sys
import textwrap
from typing import Any, Mapping

from xdoe._names import import_name
from xdoe.errors import ComponentError, ComponentRaisedError

__all__ = ["load_class", "construct", "accepted_parameters"]


def load_class(name: str, key: str, *, base: type | None = None) -> type:
    """Import the class named ``name`` (:func:`xdoe._names.import_name`).

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
    obj = import_name(name, key, what="Class")
    if not isinstance(obj, type):
        raise ComponentError(f"{key}: {name!r} is not a class but {type(obj).__name__}")
    if base is not None and not issubclass(obj, base):
        raise ComponentError(
            f"{key}: {name!r} is not a subclass of {_public_module(base)}.{base.__qualname__}"
        )
    return obj


_PLUGIN_BASES = frozenset(
    {
        ("xdoe.agent._brain", "Brain"),
        ("xdoe.agent._muscle", "Muscle"),
        ("xdoe.agent._objective", "Objective"),
        ("xdoe.environment._environment", "Environment"),
        ("xdoe.environment._environment", "Reward"),
        ("xdoe.simulation._base", "SimulationController"),
        ("xdoe.conditions._base", "TerminationCondition"),
    }
)


def _is_base_init(func: ast.expr) -> bool:
    """``super().__init__``, ``super(Cls, self).__init__`` or ``Base.__init__``."""
    if not (isinstance(func, ast.Attribute) and func.attr == "__init__"):
        return False
    owner = func.value
    if isinstance(owner, ast.Call):
        return isinstance(owner.func, ast.Name) and owner.func.id == "super"
    return isinstance(owner, (ast.Name, ast.Attribute))


@functools.lru_cache(maxsize=512)
def _forwards_var_keyword(init: Any, name: str) -> bool:
    """Whether ``init`` hands its ``**name`` unchanged to its base class's
    ``__init__`` (``super().__init__(..., **name)``) and uses ``name`` nowhere
    else, read from its source. ``False`` when in doubt (no source, the dict
    is read, changed or passed elsewhere, e.g. to ``gymnasium.make``)."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(init)))
    except (OSError, TypeError, SyntaxError, ValueError):
        return False
    func = tree.body[0] if tree.body else None
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    forwarded = uses = 0
    for node in ast.walk(func):
        if isinstance(node, ast.Name) and node.id == name:
            uses += 1
        elif isinstance(node, ast.Call) and _is_base_init(node.func):
            forwarded += sum(
                1 for kw in node.keywords
                if kw.arg is None and isinstance(kw.value, ast.Name) and kw.value.id == name
            )
    return forwarded == 1 and uses == 1


def accepted_parameters(cls: type) -> tuple[list[str], bool]:
    """Keyword parameters ``cls(...)`` accepts.

    A class's ``**params`` is followed up the MRO only when its ``__init__``
    passes it unchanged to the base class's ``__init__`` (read from the
    source: ``super().__init__(..., **params)`` and no other use of
    ``params``); xdoe's plugin base classes (:class:`~xdoe.agent.Brain`,
    ``Muscle``, ``Objective``, :class:`~xdoe.environment.Environment`,
    ``Reward``, :class:`~xdoe.simulation.SimulationController`,
    :class:`~xdoe.conditions.TerminationCondition`) accept no other keywords.
    Any other ``**params`` (e.g. ``GymnasiumEnvironment``'s, passed to
    ``gymnasium.make``, or one whose source cannot be read) makes the class
    open-ended: any keyword may be accepted and only the constructor itself
    can refuse it.

    Returns:
        ``(names, open_ended)``: the named parameters in order (the class's
        own first, then those of the bases its ``**params`` reaches), and
        whether other keywords may be accepted too.
    """
    names: list[str] = []
    for klass in cls.__mro__:
        if klass is object:  # reached through forwarded **params: takes no keywords
            return names, False
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        try:
            sig = inspect.signature(init)
        except (TypeError, ValueError):
            return names, True
        var_kw: str | None = None
        for i, p in enumerate(sig.parameters.values()):
            if i == 0 and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                continue  # self
            if p.kind is p.VAR_KEYWORD:
                var_kw = p.name
            elif p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name not in names:
                names.append(p.name)
        if var_kw is None or (klass.__module__, klass.__qualname__) in _PLUGIN_BASES:
            return names, False
        if not _forwards_var_keyword(init, var_kw):
            return names, True
    return names, False


def _describe(cls: type) -> str:
    """``module:Class`` of ``cls`` by the public module that exports it (:func:`_public_module`)."""
    return f"{_public_module(cls)}:{cls.__qualname__}"


def _public_module(cls: type) -> str:
    """The public module a user imports ``cls`` from: its module's path up
    to the first private part (``xdoe.agent._brain`` -> ``xdoe.agent``) when
    that module exports ``cls`` under its name, else its own module."""
    parts = cls.__module__.split(".")
    public = list(itertools.takewhile(lambda part: not part.startswith("_"), parts))
    if public and len(public) < len(parts):
        package = sys.modules.get(".".join(public))
        if package is not None and getattr(package, cls.__qualname__, None) is cls:
            return ".".join(public)
    return cls.__module__


@functools.lru_cache(maxsize=512)
def _parameters(cls: type) -> tuple[tuple[str, ...], bool, bool, tuple[str, ...] | None]:
    """What :func:`construct` checks a document's ``params`` against, read
    once per class and process (a campaign constructs the same classes for
    every run; ``inspect.signature`` and :func:`accepted_parameters` cost
    ~15k bytecodes per run): ``(accepted, open_ended, checked, required)``,
    :func:`accepted_parameters`' answer, whether ``cls(...)`` has a signature
    (``False``: the constructor alone refuses a parameter), and the names it
    requires (no default) in order, ``None`` when it takes ``**kwargs``."""
    accepted, open_ended = accepted_parameters(cls)
    try:
        sig = inspect.signature(cls)
    except (TypeError, ValueError):
        return tuple(accepted), open_ended, False, None
    parameters = sig.parameters.values()
    if any(p.kind is p.VAR_KEYWORD for p in parameters):
        return tuple(accepted), open_ended, True, None
    required = tuple(p.name for p in parameters
                     if p.default is p.empty and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))
    return tuple(accepted), open_ended, True, required


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
    accepted, open_ended, checked, required = _parameters(cls)
    user_accepted = [n for n in accepted if n not in fixed]
    if checked:
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
        if required is not None:
            missing = [name for name in required if name not in kwargs]
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
        raise ComponentRaisedError(
            f"{key}: {_describe(cls)}(...) raised {type(exc).__name__}: {exc}{extra}"
        ) from exc
