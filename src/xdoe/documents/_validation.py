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
    if kind == "model_type":  # pydantic names the model class here; a document knows no classes
        message = "Input should be a valid dictionary"
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


#: difflib similarity at or above which an unknown key is taken for a typo of a key valid at its place
TYPO_CUTOFF = 0.8
#: most edits (insertions, deletions, substitutions, swaps of neighbours) between a typo and the key it means
TYPO_EDITS = 2


def _edits(a: str, b: str) -> int:
    """Optimal string alignment distance (Damerau-Levenshtein without
    repeated edits of one substring) between ``a`` and ``b``."""
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        row = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            row[j] = min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                row[j] = min(row[j], prev2[j - 2] + 1)
        prev2, prev = prev, row
    return prev[-1]


def typo_of(word: Any, known: Iterable[str]) -> str | None:
    """The key ``word`` is a typo of: the closest of ``known`` (difflib
    similarity at least :data:`TYPO_CUTOFF`) within :data:`TYPO_EDITS`
    edits, and fewer edits than the word is long (``ab`` is no typo of ``x``);
    else ``None``."""
    if not isinstance(word, str):
        return None
    known = [k for k in known if isinstance(k, str) and k != word]
    for close in difflib.get_close_matches(word, known, n=3, cutoff=TYPO_CUTOFF):
        distance = _edits(word.lower(), close.lower())
        if len(close) >= 4 and distance <= min(TYPO_EDITS, max(1, len(close) // 3)):
            return close
    lowered = {k.lower(): k for k in known}
    return lowered.get(word.lower())  # EPISODES, Repetitions


def closest(word: Any, known: Iterable[str]) -> str | None:
    """The closest of ``known`` to ``word`` (difflib's default cutoff), for a hint; or ``None``."""
    close = difflib.get_close_matches(str(word), [str(k) for k in known], n=1)
    return close[0] if close else None


def model_keys(model: type[BaseModel]) -> list[str]:
    """The keys a document may give for ``model``: its fields' names and aliases."""
    keys: list[str] = []
    for name, field in model.model_fields.items():
        keys.append(field.alias or name)
        choices = getattr(field.validation_alias, "choices", None)
        keys.extend(c for c in choices or () if isinstance(c, str))
    return sorted(set(keys))


def check_unknown_keys(
    model: BaseModel, source: YamlDocument, *, strict: bool, report: Callable[[str], None],
    skip: Callable[[tuple[str | int, ...], str], bool] = lambda path, key: False,
    translate: Callable[[tuple[str | int, ...]], tuple[str | int, ...]] = lambda path: path,
    sections: dict[str, str] | None = None,
) -> None:
    """The one check of unknown keys, for every document (``xgen check``,
    ``generate``, ``augment``, ``xrun experiment-check``): a key within a few
    edits of a key valid at its place is an error with "did you mean" in
    every mode (``repetitons`` -> ``repetitions``); so is a section of the
    document at another place than its own (``sections``: section key ->
    its dotted place, e.g. ``run_config`` -> ``definitions.run_config``; a
    ``run_config`` written at the top level would be dropped and the study
    run without its termination condition), or a typo of one; any other
    unknown key is passed to ``report`` (a warning), or refused when
    ``strict`` (with the closest valid key as a hint, when there is one).
    Free-form places (``open_keys`` models: ``phase_config``,
    ``run_config``) only refuse typos and misplaced sections.

    Raises:
        DocumentError: a typo, a misplaced section, or (strict) any unknown
            key, at its line.
    """
    for path, key, known, open_keys in unknown_keys(model):
        if skip(path, key):
            continue
        where = translate(path + (key,))
        typo = typo_of(key, known)
        if typo is not None:
            raise source.error(f"unknown key {key!r}; did you mean {typo!r}?", where)
        if sections:
            section = key if key in sections else typo_of(key, sections)
            if section is not None:
                here = ".".join(str(p) for p in path) or "the top level"
                raise source.error(f"unknown key {key!r} at {here}: {section!r} belongs at {sections[section]}, "
                                   "the only place xdoe reads it (move it there)", where)
        if open_keys:
            continue
        if strict:
            close = closest(key, known)
            hint = f"; did you mean {close!r}?" if close else f" (valid here: {', '.join(known)})"
            raise source.error(f"unknown key {key!r}{hint} (--strict refuses keys xdoe does not use)", where)
        report(str(source.error(f"unknown key {key!r} (xdoe does not use it)", where)))


def unknown_keys(
    model: BaseModel, path: tuple[str | int, ...] = ()
) -> list[tuple[tuple[str | int, ...], str, list[str], bool]]:
    """``(key path, key, keys valid there, free-form place)`` of every unknown
    key kept by ``model`` and the models nested in it."""
    found: list[tuple[tuple[str | int, ...], str, list[str], bool]] = []
    known = model_keys(type(model))
    open_keys = bool(getattr(type(model), "open_keys", False))
    for key in model.model_extra or {}:
        found.append((path, key, known, open_keys))
    for name, field in type(model).model_fields.items():
        value = getattr(model, name)
        key = field.alias or name
        found.extend(_unknown_in(value, path + (key,)))
    return found


def _unknown_in(value: Any, path: tuple[str | int, ...]) -> list:
    if isinstance(value, BaseModel):
        return unknown_keys(value, path)
    if isinstance(value, dict):
        out = []
        for k, v in value.items():
            out.extend(_unknown_in(v, path + (k,)))
        return out
    if isinstance(value, list):
        out = []
        for i, v in enumerate(value):
            out.extend(_unknown_in(v, path + (i,)))
        return out
    return []


def collect_extras(model: BaseModel, path: tuple[str | int, ...] = ()) -> list[tuple[tuple[str | int, ...], str]]:
    """``(key path, key)`` of every unknown key kept by ``model`` and the
    models nested in it, skipping models marked ``open_keys``."""
    return [(p, k) for p, k, _known, open_keys in unknown_keys(model, path) if not open_keys]


def refuse_named_definitions(value: Any, fields: Iterable[str], section: str, shape: str) -> Any:
    """A ``mode="before"`` check for a section that is one mapping, not named
    definitions (``run_config``): a key it does not know whose value is a
    mapping of its keys (``run_config: {c: {timeout: 4, condition: ...}}``)
    is refused with the shape the section must have; its settings would
    otherwise be dropped in silence."""
    fields = set(fields)
    if isinstance(value, dict):
        for key, item in value.items():
            if key not in fields and isinstance(item, dict) and fields & set(item):
                raise ValueError(
                    f"{section} is one mapping {shape}, not named definitions: {key!r} holds "
                    f"{', '.join(sorted(fields & set(item)))}, which would be ignored there; write them "
                    f"directly under {section}")
    return value
