"""``${name}`` placeholders of named factors inside experiment definitions.

- A string that is exactly ``"${name}"`` becomes the factor's value with its
  type (``0.5``, ``3``, ``true``, a list...).
- A placeholder inside a longer string is interpolated: ``"run-${alpha}"``
  becomes ``"run-0.5"``. Numbers are written as in canonical YAML (floats in
  shortest round-trip form), booleans as ``true``/``false``, ``None`` as
  ``null``; a list or mapping cannot be interpolated.
- ``$${`` writes a literal ``${``.
"""

from __future__ import annotations

import re
from typing import Any, Iterator

from xdoe.documents._canonical import format_float
from xdoe.errors import PlaceholderError

__all__ = ["PlaceholderError", "bare_names", "find_placeholders", "interpolate", "substitute", "whole_placeholder"]

_TOKEN = re.compile(r"\$\$\{|\$\{([^{}]*)\}")


def _names(text: str) -> list[str]:
    names = []
    for match in _TOKEN.finditer(text):
        if match.group(0) == "$${":
            continue
        name = match.group(1).strip()
        if not name:
            raise PlaceholderError(f"empty placeholder '${{}}' in {text!r}")
        names.append(name)
    rest = _TOKEN.sub("", text)
    if "${" in rest:
        raise PlaceholderError(f"'${{' without a closing '}}' in {text!r}")
    return names


def find_placeholders(node: Any, path: tuple = ()) -> Iterator[tuple[tuple, str, bool]]:
    """Every placeholder in ``node``: ``(key path, factor name, whole)`` where
    ``whole`` says the string is exactly the placeholder.

    Raises:
        PlaceholderError: a malformed placeholder (``args[0]`` is the message;
            the exception has ``path``).
    """
    if isinstance(node, str):
        if "${" in node:
            try:
                names = _names(node)
            except PlaceholderError as exc:
                exc.path = path  # type: ignore[attr-defined]
                raise
            match = _TOKEN.fullmatch(node.strip())
            whole = bool(match and match.group(1) is not None)
            for name in names:
                yield path, name, whole
    elif isinstance(node, dict):
        for key, value in node.items():
            if isinstance(key, str) and "${" in key.replace("$${", ""):
                exc = PlaceholderError(f"placeholders are replaced in values, not in keys: {key!r} would stay "
                                       "as written")
                exc.path = path + (key,)  # type: ignore[attr-defined]
                raise exc
            yield from find_placeholders(value, path + (key,))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from find_placeholders(value, path + (i,))


#: ``$name`` without braces (not ``$${``, not ``${``)
_BARE = re.compile(r"(?<!\$)\$([A-Za-z_][A-Za-z0-9_]*)")


def bare_names(node: Any, path: tuple = ()) -> Iterator[tuple[tuple, str]]:
    """``(key path, name)`` of every ``$name`` written without braces in a
    string of ``node`` (a placeholder is ``${name}``; ``$name`` stays as
    written)."""
    if isinstance(node, str):
        if "$" in node:
            for match in _BARE.finditer(node):
                yield path, match.group(1)
    elif isinstance(node, dict):
        for key, value in node.items():
            yield from bare_names(value, path + (key,))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from bare_names(value, path + (i,))


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return format_float(value)
    raise PlaceholderError(f"cannot interpolate a {type(value).__name__} into a string")


def whole_placeholder(text: str) -> str | None:
    """The factor name when ``text`` is exactly one placeholder (``"${name}"``,
    spaces around allowed): :func:`interpolate` gives that factor's value
    with its type. Else ``None``."""
    match = _TOKEN.fullmatch(text.strip())
    if match and match.group(1) is not None:
        return match.group(1).strip()
    return None


def interpolate(text: str, values: dict[str, Any]) -> Any:
    """The value of one string with placeholders (see the module docstring).

    Raises:
        KeyError: a placeholder names a factor missing from ``values``.
        PlaceholderError: a list or mapping would be interpolated into text.
    """
    name = whole_placeholder(text)
    if name is not None:
        return values[name]

    def repl(m: re.Match) -> str:
        if m.group(0) == "$${":
            return "${"
        return _text(values[m.group(1).strip()])

    return _TOKEN.sub(repl, text)


def substitute(node: Any, values: dict[str, Any]) -> Any:
    """A copy of ``node`` with every placeholder replaced (containers are
    always copied, so callers may mutate the result)."""
    if isinstance(node, str):
        return interpolate(node, values) if "${" in node else node
    if isinstance(node, dict):
        return {key: substitute(value, values) for key, value in node.items()}
    if isinstance(node, list):
        return [substitute(value, values) for value in node]
    return node

