"""Shared pieces of document validation: turning a pydantic
:class:`~pydantic.ValidationError` into a located :class:`DocumentError`,
"did you mean" hints, and the base model every document model derives from."""

from __future__ import annotations

import difflib
from typing import Annotated, Any, Callable, ClassVar, Iterable, Sequence

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, Strict, ValidationError

from xdoe.documents._yaml import YamlDocument
from xdoe.errors import DocumentError

__all__ = ["MAX_EPISODES", "MAX_FACTORS", "MAX_WORKERS", "MIN_SECONDS", "max_factors", "DocumentModel", "Integer", "Seconds",
           "did_you_mean", "empty_list", "empty_name_means_none",
           "from_validation_error", "null_means", "short_repr"]

#: most workers (copies of the environments) in one phase; more would exhaust memory before the first step
MAX_WORKERS = 1024
#: most episodes per worker and phase (10^9: years of the fastest environment; a larger count is a typo)
MAX_EPISODES = 10**9

#: most factors (named factors plus schedule entries with several levels) a design may have; the
#: design algorithms' time grows with them (``XDOE_MAX_FACTORS`` raises the limit)
MAX_FACTORS = 100


def max_factors() -> int:
    """:data:`MAX_FACTORS`, or ``XDOE_MAX_FACTORS`` when set to a positive integer."""
    import os

    try:
        value = int(os.environ.get("XDOE_MAX_FACTORS", MAX_FACTORS))
    except ValueError:
        return MAX_FACTORS
    return value if value > 0 else MAX_FACTORS


#: an integer field that refuses booleans (``seed: true`` is not 1) and floats
Integer = Annotated[int, Strict()]
#: The least time limit (``run_config.timeout``, ``phase_config.step_timeout``): the
#: watchdog looks every 20 ms at best, so a limit of 1e-12 s would be accepted and not kept.
MIN_SECONDS = 0.001


def _at_least_a_millisecond(value: float) -> float:
    if value < MIN_SECONDS:
        raise ValueError(f"{value:g} s is less than the least time limit, {MIN_SECONDS:g} s (1 ms)")
    return value


#: A positive, finite number of seconds, at least :data:`MIN_SECONDS` (an integer or a float; no string, no bool).
Seconds = Annotated[float, Strict(), Field(gt=0, allow_inf_nan=False), AfterValidator(_at_least_a_millisecond)]


def null_means(empty: Callable[[], Any]) -> Any:
    """A field validator (``Annotated[list[X], null_means(list)]``): a null
    value, e.g. ``params:`` or ``conditions:`` with nothing after it in YAML,
    reads as ``empty()``."""
    return BeforeValidator(lambda value: empty() if value is None else value)


def empty_list() -> list:
    """``[]``, as a field's ``default_factory``: pydantic reads a factory's
    signature, and ``inspect.signature(list)`` parses ``list``'s text
    signature with :mod:`tokenize` (~10 ms of start-up to compile its
    patterns, paid by every ``xgen``); a Python function's is read directly."""
    return []


def _no_name_is_none(value: Any) -> Any:
    return None if isinstance(value, dict) and not value.get("name") else value


#: a field validator for an optional component (``Annotated[Spec | None, empty_name_means_none]``):
#: a mapping without a name (``reward: {name: ""}``) means none
empty_name_means_none = BeforeValidator(_no_name_is_none)


class DocumentModel(BaseModel):
    """Base of the document models: unknown keys are kept (``model_extra``) so
    that the caller can warn about them (or refuse them in strict mode);
    numbers are accepted where a string is expected (``version: 1.0``)."""

    model_config = ConfigDict(extra="allow", coerce_numbers_to_str=True, populate_by_name=True)

    #: keys that may be added freely (passed through without a warning)
    open_keys: ClassVar[bool] = False


def did_you_mean(word: str, known: Iterable[str]) -> str:
    """``"did you mean 'x'? defined: a, b, x"`` style hint listing the known keys."""
    known = sorted(str(k) for k in known)
    if not known:
        return "none is defined"
    close = difflib.get_close_matches(str(word), known, n=1)
    listing = ", ".join(known[:20]) + (", ..." if len(known) > 20 else "")
    prefix = f"did you mean {close[0]!r}? " if close else ""
    return f"{prefix}defined: {listing}"


def short_repr(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _data_path(data: Any, loc: Sequence[Any]) -> list[str | int]:
    """The part of a pydantic ``loc`` that addresses the data (drops union
    member tags such as ``'list[str]'``); a final missing key is kept."""
    path: list[str | int] = []
    node = data
    for part in loc:
        if isinstance(node, dict) and part in node:
            path.append(part)
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            path.append(part)
            node = node[part]
        elif isinstance(node, dict) and isinstance(part, str) and "[" not in part:
            path.append(part)  # a missing key
            break
        else:
            continue
    return path


def from_validation_error(
    exc: ValidationError,
    source: YamlDocument,
    *,
    translate: Callable[[Sequence[Any]], Sequence[Any]] | None = None,
) -> DocumentError:
    """The first error of ``exc`` as a :class:`DocumentError` with file, line
    and key path.

    Args:
        exc: the pydantic error.
        source: the loaded document (for line numbers).
        translate: maps a model ``loc`` to a document key path when the model
            is shaped differently from the document.
    """
    errors = exc.errors(include_url=False)
    err = errors[0]
    loc = list(err.get("loc", ()))
    if translate is not None:
        loc = list(translate(loc))
    path = _data_path(source.data, loc)
    kind = err.get("type", "")
    message = str(err.get("msg", "invalid value"))
    if message.startswith("Value error, "):
        message = message[len("Value error, ") :]
    if kind == "missing":
        message = "required key missing"
    elif kind == "extra_forbidden":
        message = "unknown key"
    elif kind != "value_error" and "input" in err:
        message = f"{message} (got {short_repr(err['input'])})"
    return source.error(message, path)


def ensure_valid(model: type[BaseModel], data: Any, source: YamlDocument, **kwargs: Any) -> Any:
    """Validate ``data`` against ``model`` or raise a located :class:`DocumentError`."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise from_validation_error(exc, source, **kwargs) from None


def collect_extras(model: BaseModel, path: tuple[str | int, ...] = ()) -> list[tuple[tuple[str | int, ...], str]]:
    """``(key path, key)`` of every unknown key kept by ``model`` and the
    models nested in it, skipping models marked ``open_keys``."""
    found: list[tuple[tuple[str | int, ...], str]] = []
    if not getattr(type(model), "open_keys", False):
        for key in model.model_extra or {}:
            found.append((path, key))
    for name, field in type(model).model_fields.items():
        value = getattr(model, name)
        key = field.alias or name
        found.extend(_extras_in(value, path + (key,)))
    return found


def _extras_in(value: Any, path: tuple[str | int, ...]) -> list[tuple[tuple[str | int, ...], str]]:
    if isinstance(value, BaseModel):
        return collect_extras(value, path)
    if isinstance(value, dict):
        out = []
        for k, v in value.items():
            out.extend(_extras_in(v, path + (k,)))
        return out
    if isinstance(value, list):
        out = []
        for i, v in enumerate(value):
            out.extend(_extras_in(v, path + (i,)))
        return out
    return []
