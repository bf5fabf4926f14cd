"""Hydra-style overrides of a document: ``KEY=VALUE`` with a dotted key
path and a value parsed as YAML. One implementation for ``xrun branch
--set`` (a run document) and ``xgen generate/check exp.yaml KEY=VALUE``
(an experiment document, :func:`override_record` and
:func:`overrides_from_record` for its manifest).

Key paths address the document as it is stored (a run document: every
phase complete):

- exact paths from the top: ``seed``, ``schedule.0.training.phase_config.episodes``;
- list items by index (``agents.0``), by ``name`` (``agents.learner``) and,
  for the schedule's one-key phase mappings, by phase name
  (``schedule.training.agents.learner.brain.params.alpha``);
- a path that does not start at the top matches every place it ends at
  (``brain.params.alpha`` sets the learning rate of every agent's brain in
  every phase; ``learner.muscle.params.epsilon`` only the learner's).

``+KEY=VALUE`` adds a key that does not exist yet (only the last part may be
new); without ``+`` an unknown key is an :class:`~xdoe.errors.InputError`
that lists the close matches (:mod:`difflib`). A value ``x<number>`` (or
``*<number>``) is a *multiplicative move*: the current number times it
(``alpha=x0.5`` halves the learning rate; integers stay integers, rounded).
"""

from __future__ import annotations

import copy
import difflib
import io
import re
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

from xdoe.errors import InputError

__all__ = ["Move", "Override", "parse_override", "parse_value", "apply_overrides", "resolve_key",
           "describe_overrides", "dotted", "override_record", "overrides_from_record", "override_specs"]

_MOVE = re.compile(r"^\s*[x*×]\s*([-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?)\s*$")


@dataclass(frozen=True)
class Move:
    """A multiplicative move: the current numeric value times ``factor``."""

    factor: float

    def __str__(self) -> str:
        return f"x{self.factor:g}"


@dataclass(frozen=True)
class Override:
    """One override: ``key`` (dotted path), ``value`` (parsed, or a :class:`Move`),
    ``add`` (``+KEY``: the last part may be created)."""

    key: str
    value: Any
    add: bool = False

    @property
    def spec(self) -> str:
        """The override as text: ``KEY=VALUE``."""
        return f"{'+' if self.add else ''}{self.key}={_show(self.value)}"


def _show(value: Any) -> str:
    if isinstance(value, Move):
        return str(value)
    if isinstance(value, str):
        return value
    import json

    return json.dumps(value, ensure_ascii=False) if isinstance(value, (dict, list)) else \
        ("null" if value is None else str(value).lower() if isinstance(value, bool) else str(value))


def parse_value(value: Any) -> Any:
    """A value given as text parsed as YAML (``"0.5"`` -> 0.5, ``"[1, 2]"`` -> a
    list), or a :class:`Move` for ``x<number>``; non-text values stay as they are
    (a string ``"x0.5"`` from a YAML file is a move too).

    Raises:
        InputError: the text is not valid YAML.
    """
    if isinstance(value, Move) or not isinstance(value, str):
        return value
    move = _MOVE.match(value)
    if move:
        return Move(float(move.group(1)))
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    try:
        parsed = YAML(typ="safe", pure=True).load(io.StringIO(value))
    except YAMLError as exc:
        raise InputError(f"cannot parse {value!r} as a YAML value: {' '.join(str(exc).split())}") from None
    return parsed


def parse_override(text: str) -> Override:
    """``"KEY=VALUE"`` or ``"+KEY=VALUE"`` -> :class:`Override`.

    Raises:
        InputError: no ``=``, an empty key, or a value that is not YAML.
    """
    if "=" not in text:
        raise InputError(f"override {text!r}: expected KEY=VALUE (e.g. brain.params.alpha=0.3)")
    key, _, raw = text.partition("=")
    key = key.strip()
    add = key.startswith("+")
    key = key.lstrip("+").strip()
    if not key or any(not part for part in key.split(".")):
        raise InputError(f"override {text!r}: expected a dotted key path before '='")
    try:
        value = parse_value(raw)
    except InputError as exc:
        raise InputError(f"override {text}: {exc}") from None
    return Override(key, value, add)


def _parts(key: str) -> list[str]:
    return key.split(".")


def _match(node: Any, parts: Sequence[str], add: bool) -> list[tuple[Any, ...]]:
    """Concrete paths (keys and indices) below ``node`` that ``parts`` address."""
    if not parts:
        return [()]
    head, rest = parts[0], parts[1:]
    found: list[tuple[Any, ...]] = []
    if isinstance(node, dict):
        if head in node:
            found += [(head, *p) for p in _match(node[head], rest, add)]
        elif add and not rest:
            found.append((head,))
    elif isinstance(node, list):
        if head.lstrip("-").isdigit():
            i = int(head)
            if -len(node) <= i < len(node):
                found += [(i % len(node), *p) for p in _match(node[i], rest, add)]
        else:
            for i, item in enumerate(node):
                if isinstance(item, dict) and item.get("name") == head:
                    found += [(i, *p) for p in _match(item, rest, add)]
                elif isinstance(item, dict) and len(item) == 1 and head in item:
                    found += [(i, head, *p) for p in _match(item[head], rest, add)]
    return found


def _walk(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    yield path, node
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _walk(v, (*path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _walk(v, (*path, i))


def dotted(path: Sequence[Any]) -> str:
    """``("schedule", 0, "training")`` -> ``"schedule.0.training"``."""
    return ".".join(str(p) for p in path)


def resolve_key(document: Any, key: str, *, add: bool = False, what: str = "the run document") -> list[tuple[Any, ...]]:
    """Every concrete path ``key`` addresses in ``document`` (see the module
    docstring): the exact path when it exists, else every place it ends at.

    Raises:
        InputError: nothing matches; the message lists close matches.
    """
    parts = _parts(key)
    exact = _match(document, parts, add)
    if exact:
        return exact
    found: list[tuple[Any, ...]] = []
    for prefix, node in _walk(document):
        if prefix:
            found += [(*prefix, *p) for p in _match(node, parts, add)]
    unique = list(dict.fromkeys(found))
    if unique:
        return unique
    scalar = _below_a_scalar(document, parts)
    if scalar:
        raise InputError(f"unknown key {key!r} in {what}: {scalar}")
    raise InputError(f"unknown key {key!r} in {what}; {_close_matches(document, parts)}")


_KINDS = ((bool, "true or false"), (int, "a number"), (float, "a number"), (str, "a text"))


def _below_a_scalar(document: Any, parts: Sequence[str]) -> str | None:
    """``"seed is 42, a number: it holds no key 'x'"`` when the path from the
    top reaches a value that is no mapping or list before its last part."""
    node = document
    for n, part in enumerate(parts):
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.lstrip("-").isdigit() and -len(node) <= int(part) < len(node):
            node = node[int(part)]
        elif isinstance(node, (dict, list)) or n == 0:
            return None
        else:
            kind = next(text for cls, text in _KINDS if isinstance(node, cls)) if \
                isinstance(node, (bool, int, float, str)) else type(node).__name__
            shown = "null" if node is None else f"{node!r}, {kind}"
            return f"{'.'.join(parts[:n])} is {shown}: it holds no key {part!r}"
    return None


def _close_matches(document: Any, parts: Sequence[str]) -> str:
    candidates: set[str] = set()
    for path, _ in _walk(document):
        if not path:
            continue
        names = [str(p) for p in path]
        candidates.add(".".join(names))
        if len(names) >= len(parts):
            candidates.add(".".join(names[-len(parts):]))
    close = difflib.get_close_matches(".".join(parts), sorted(candidates), n=5, cutoff=0.6)
    if close:
        return "did you mean: " + ", ".join(close)
    tops = sorted(str(k) for k in document) if isinstance(document, dict) else []
    return "top-level keys: " + ", ".join(tops) + " (use +KEY=VALUE to add a key)"


def _get(document: Any, path: Sequence[Any]) -> Any:
    node = document
    for p in path:
        node = node[p]
    return node


def _moved(current: Any, move: Move, key: str, path: Sequence[Any]) -> Any:
    if isinstance(current, bool) or not isinstance(current, (int, float)):
        raise InputError(f"override {key}={move}: {dotted(path)} is {current!r}, not a number "
                         "(a move multiplies a number)")
    value = current * move.factor
    if isinstance(current, int):
        return int(round(value))
    return float(f"{value:.12g}")


def apply_overrides(document: dict[str, Any], overrides: Sequence[Override | str], *,
                    what: str = "the run document") -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A copy of ``document`` with ``overrides`` applied in order.

    Returns:
        ``(document, applied)``: ``applied`` has one entry per override:
        ``{"key", "value"`` (as given: the number, or ``"x0.5"`` for a move),
        ``"paths"`` (the concrete dotted paths changed), ``"result"`` (the new
        value at the first path)``}``.

    Raises:
        InputError: an unknown key (with close matches), a move on a
            non-number, or a malformed override.
    """
    out = copy.deepcopy(document)
    applied: list[dict[str, Any]] = []
    for item in overrides:
        override = parse_override(item) if isinstance(item, str) else item
        paths = resolve_key(out, override.key, add=override.add, what=what)
        result: Any = None
        for n, path in enumerate(paths):
            parent = _get(out, path[:-1])
            if isinstance(override.value, Move):
                new = _moved(_get(out, path), override.value, override.key, path)
            else:
                new = copy.deepcopy(override.value)
            parent[path[-1]] = new
            if n == 0:
                result = new
        shown = str(override.value) if isinstance(override.value, Move) else override.value
        applied.append({"key": override.key, "value": shown, "paths": [dotted(p) for p in paths],
                        "result": result})
    return out, applied


def describe_overrides(applied: Sequence[dict[str, Any]]) -> str:
    """``alpha=x0.5 (→ 0.25), episodes=300``: the overrides of an edge as one line."""
    parts = []
    for a in applied:
        text = f"{a.get('key')}={_show(a.get('value'))}"
        if isinstance(a.get("value"), str) and _MOVE.match(a["value"]):
            text += f" (→ {_show(a.get('result'))})"
        parts.append(text)
    return ", ".join(parts)


def override_record(overrides: Sequence[Override | str]) -> list[str]:
    """The overrides as ``KEY=VALUE`` texts, one per override in the order
    given (as Hydra's ``overrides.yaml``): what a manifest records so that
    :func:`overrides_from_record` gives the same overrides back. A text is
    kept as it was given; an :class:`Override` is written with its value as
    JSON (which is YAML; a move as ``x0.5``). A key given twice is recorded
    twice: overrides apply in order, so ``a=x2 a=x2`` is two moves.

    Raises:
        InputError: a malformed override (as :func:`parse_override`).
    """
    import json

    record = []
    for item in overrides:
        if isinstance(item, str):
            parse_override(item)  # refuse what cannot be read back
            record.append(item)
            continue
        value = str(item.value) if isinstance(item.value, Move) else json.dumps(item.value, ensure_ascii=False)
        record.append(f"{'+' if item.add else ''}{item.key}={value}")
    return record


def overrides_from_record(record: Any) -> list[Override]:
    """The overrides of an :func:`override_record` (a manifest's ``overrides``:
    a list of ``KEY=VALUE`` texts), in its order, parsed as on the command line.

    Raises:
        InputError: the record is not a list of texts, or a text is malformed.
    """
    if not isinstance(record, list) or not all(isinstance(item, str) for item in record):
        raise InputError(f"expected overrides as a list of KEY=VALUE texts, got {_short_record(record)}")
    return [parse_override(item) for item in record]


def _short_record(record: Any) -> str:
    """``record`` shortened for a message."""
    text = repr(record)
    return text if len(text) <= 80 else text[:77] + "..."


def override_specs(record: Any) -> list[str]:
    """The command-line arguments ``KEY=VALUE`` of a recorded
    :func:`override_record`, in its order (``shlex.join`` quotes them for a shell).

    Raises:
        InputError: as :func:`overrides_from_record`.
    """
    overrides_from_record(record)
    return list(record)
