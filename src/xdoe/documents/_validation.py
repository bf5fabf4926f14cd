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
           "from_validation_error", "null_means", "short_repr", "unnamed_component"]

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


def unnamed_component(value: Any) -> bool:
    """Whether ``value`` is an optional component written as none: a
    mapping whose ``name`` is given empty or null (``reward: {name: ""}``,
    arsenAI's way), with no params, or an empty mapping.

    Raises:
        ValueError: a mapping that holds settings but no name (``name``
            missing, e.g. moved one level up, or empty beside non-empty
            ``params``): read as none, its settings would be dropped in silence.
    """
    if not isinstance(value, dict) or value.get("name"):
        return False
    if not value:
        return True
    if "name" not in value:
        raise ValueError(f"required key 'name' missing (holds {', '.join(sorted(map(str, value)))}; "
                         "write name: '' for none)")
    if value.get("params"):
        raise ValueError("params given but the name is empty: an empty name means none, and its params would be "
                         "dropped; give the name (module:Class) or remove params")
    return True


def _no_name_is_none(value: Any) -> Any:
    return None if unnamed_component(value) else value


#: a field validator for an optional component (``Annotated[Spec | None, empty_name_means_none]``):
#: a mapping with an empty name (``reward: {name: ""}``) means none; settings without a name are refused
empty_name_means_none = BeforeValidator(_no_name_is_none)


class DocumentModel(BaseModel):
    """Base of the document models: unknown keys are kept (``model_extra``) so
    that the caller can warn about them (or refuse them in strict mode);
    numbers are accepted where a string is expected (``version: 1.0``)."""

    model_config = ConfigDict(extra="allow", coerce_numbers_to_str=True, populate_by_name=True)

    #: keys beside the fields that are passed through unchecked to where they are read (``phase_config``'s
    #: ``checkpoint_every``...): known keys, neither warned about nor taken for typos
    passed_keys: ClassVar[tuple[str, ...]] = ()


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


def _allowed_edits(key: str) -> int:
    """Edits a typo of ``key`` may have: one for a key of three to five
    letters (``sede`` -> ``seed``, ``uidd`` -> ``uid``), :data:`TYPO_EDITS`
    for a longer one."""
    return 1 if len(key) <= 5 else TYPO_EDITS


def typo_of(word: Any, known: Iterable[str]) -> str | None:
    """The key ``word`` is a typo of: the key of ``known`` (of three letters
    or more) fewest edits away, case ignored, when those edits are within
    :func:`_allowed_edits` of it and fewer than the word is long (``ab`` is
    no typo of ``x``); else ``None``. Edits are counted, not similarity
    ratios: a swap of two letters in a short key (``moed``, ``naem``,
    ``whne``) is one edit although half its letters moved.
    """
    if not isinstance(word, str) or len(word) < 3:
        return None
    lowered = word.lower()
    best: tuple[int, float, str] | None = None
    for key in known:
        if not isinstance(key, str) or key == word or len(key) < 3:
            continue
        distance = _edits(lowered, key.lower())
        if distance > _allowed_edits(key) or distance >= len(word):
            continue
        rank = (distance, -difflib.SequenceMatcher(None, lowered, key.lower()).ratio(), key)
        if best is None or rank < best:
            best = rank
    return None if best is None else best[2]


def closest(word: Any, known: Iterable[str]) -> str | None:
    """The closest of ``known`` to ``word`` (difflib's default cutoff), for a hint; or ``None``."""
    close = difflib.get_close_matches(str(word), [str(k) for k in known], n=1)
    return close[0] if close else None


def model_keys(model: type[BaseModel]) -> list[str]:
    """The keys a document may give for ``model``: its fields' names and
    aliases, and its ``passed_keys``."""
    keys: list[str] = list(getattr(model, "passed_keys", ()))
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

    Raises:
        DocumentError: a typo, a misplaced section, or (strict) any unknown
            key, at its line.
    """
    for path, key, known in unknown_keys(model):
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
        below = [name for name, keys in _children(model, path) if key in keys]
        if below:  # brain.params moved up to the agent, phase_config.episodes up to the phase: dropped
            inside = " or ".join(repr(name) for name in below)
            raise source.error(f"unknown key {key!r} here: it is a key of {inside}, one level down, the only "
                               f"place xdoe reads it (move it into {inside})", where)
        above = path[:-2] if path and isinstance(path[-1], int) else path[:-1]
        parent = _node(model, above) if path else None
        if isinstance(parent, BaseModel) and key in model_keys(type(parent)):  # an agent's sensors in its brain
            raise source.error(f"unknown key {key!r} here: it is a key of the mapping one level up, the only "
                               "place xdoe reads it (move it there)", where)
        if strict:
            close = closest(key, known)
            hint = f"; did you mean {close!r}?" if close else f" (valid here: {', '.join(known)})"
            raise source.error(f"unknown key {key!r}{hint} (--strict refuses keys xdoe does not use)", where)
        report(str(source.error(f"unknown key {key!r} (xdoe does not use it)", where)))


def unknown_keys(
    model: BaseModel, path: tuple[str | int, ...] = ()
) -> list[tuple[tuple[str | int, ...], str, list[str]]]:
    """``(key path, key, keys valid there)`` of every unknown key kept by
    ``model`` and the models nested in it (a model's ``passed_keys`` are known)."""
    found: list[tuple[tuple[str | int, ...], str, list[str]]] = []
    known = model_keys(type(model))
    for key in model.model_extra or {}:
        if key not in known:
            found.append((path, key, known))
    for name, field in type(model).model_fields.items():
        value = getattr(model, name)
        key = field.alias or name
        found.extend(_unknown_in(value, path + (key,)))
    return found


def _children(model: BaseModel, path: tuple[str | int, ...]) -> list[tuple[str, list[str]]]:
    """``(field key, keys valid in it)`` of each field of the model at
    ``path`` inside ``model`` whose value is a model (or an optional one):
    where a key unknown at ``path`` belongs when it was written one level too
    high."""
    node = _node(model, path)
    if not isinstance(node, BaseModel):
        return []
    out = []
    for name, field in type(node).model_fields.items():
        classes = _model_classes(field.annotation)
        if classes:
            out.append((field.alias or name, sorted({k for c in classes for k in model_keys(c)})))
    return out


def _node(model: BaseModel, path: tuple[str | int, ...]) -> Any:
    """The value at key path ``path`` inside ``model`` (model fields by their
    document keys, then mapping keys and list indexes), or ``None``."""
    node: Any = model
    for part in path:
        if isinstance(node, BaseModel):
            fields = {f.alias or n: n for n, f in type(node).model_fields.items()}
            node = getattr(node, fields[part]) if part in fields else None
        elif isinstance(node, (dict, list)):
            try:
                node = node[part]  # type: ignore[index]
            except (KeyError, IndexError, TypeError):
                node = None
        else:
            node = None
        if node is None:
            return None
    return node


def _model_classes(annotation: Any) -> list[type[BaseModel]]:
    """The document models an annotation names directly (``X``, ``X | None``,
    ``Annotated[X | None, ...]``), not inside a list or mapping."""
    import typing

    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    origin = typing.get_origin(annotation)
    if origin in (list, dict, tuple, set):
        return []
    return [c for arg in typing.get_args(annotation) for c in _model_classes(arg)]


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
