"""Canonical YAML and JSON for plain data.

:func:`dump_canonical` writes plain Python data (``dict``, ``list``/``tuple``,
``str``, ``int``, ``float``, ``bool``, ``None``) as block-style YAML 1.2 with

- mapping keys sorted (strings by code point; non-string scalar keys first,
  grouped by type),
- two-space indentation, sequences as ``- item``, empty collections as
  ``[]``/``{}``,
- strings plain only when they cannot be read as anything else
  (``[A-Za-z_][A-Za-z0-9_./-]*`` with inner ``:``, not a YAML 1.1/1.2 special
  word), otherwise double-quoted with escapes,
- floats in Python's shortest round-trip form (``repr``) with a ``.0`` added
  to a bare mantissa (``1.0e-05``), ``.inf``/``-.inf``/``.nan``.

So the same data gives the same bytes on every machine, and the text reads
back (ruamel.yaml, PyYAML) into equal data. It is a few times faster than a
library dumper, which matters when 100,000 run documents are written.
"""

from __future__ import annotations

import datetime as _dt
import functools
import json
import math
import re
from typing import Any

__all__ = ["dump_canonical", "canonical_json", "json_default", "format_float", "format_scalar", "readable_level"]

_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_./-]*(?::[A-Za-z0-9_./-]+)*\Z")
_SPECIAL = frozenset(
    """y yes n no true false on off null nan inf infinity""".split()
)
# characters a YAML double-quoted scalar may hold literally (besides the ASCII fast path)
_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r", "\x00": "\\0"}


def format_float(value: float) -> str:
    """A float as canonical YAML text: ``repr`` (shortest round trip), a
    mantissa always with a dot, ``.inf``, ``-.inf``, ``.nan``."""
    text = repr(value)
    if "n" not in text and "e" not in text:  # neither nan, inf nor an exponent
        return text
    if value != value:
        return ".nan"
    if math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    if "e" in text:
        mantissa, exponent = text.split("e")
        if "." not in mantissa:
            mantissa += ".0"
        return f"{mantissa}e{exponent}"
    return text


def _quote(text: str) -> str:
    if text.isascii() and text.isprintable() and '"' not in text and "\\" not in text:
        return f'"{text}"'
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif 0x20 <= code <= 0x7E or (0xA0 <= code <= 0xD7FF and code not in (0x2028, 0x2029)) or (
            0xE000 <= code <= 0xFFFD and code != 0xFEFF
        ) or 0x10000 <= code <= 0x10FFFF:
            out.append(ch)
        elif code <= 0xFF:
            out.append(f"\\x{code:02x}")
        elif code <= 0xFFFF:
            out.append(f"\\u{code:04x}")
        else:  # pragma: no cover - every code point above is printable
            out.append(f"\\U{code:08x}")
    out.append('"')
    return "".join(out)


@functools.lru_cache(maxsize=1 << 12)
def _string(text: str) -> str:
    if _PLAIN.match(text) and text.lower() not in _SPECIAL:
        return text
    return _quote(text)


def format_scalar(value: Any) -> str:
    """One scalar as canonical YAML text.

    Raises:
        TypeError: ``value`` is not ``str``, ``int``, ``float``, ``bool`` or ``None``.
    """
    kind = type(value)
    if kind is str:
        return _string(value)
    if kind is float:
        return format_float(value)
    if kind is int:
        return str(value)
    if isinstance(value, str):
        return _string(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, float):
        return format_float(float(value))
    raise TypeError(f"cannot write {type(value).__name__} as canonical YAML")


def _key_order(key: Any) -> tuple[int, Any]:
    if isinstance(key, str):
        return (3, key)
    if key is None:
        return (0, 0)
    if isinstance(key, bool):
        return (1, int(key))
    if isinstance(key, (int, float)):
        return (2, key)
    raise TypeError(f"cannot write a {type(key).__name__} mapping key as canonical YAML")


def _sorted_items(mapping: dict) -> list[tuple[Any, Any]]:
    try:
        return sorted(mapping.items())
    except TypeError:
        return sorted(mapping.items(), key=lambda kv: _key_order(kv[0]))


def _block(node: Any, pad: str, out: list[str], cache: dict[int, dict[str, list[str]]] | None = None) -> None:
    """Append the lines of a non-empty mapping or sequence, every line
    indented by ``pad``. Nodes whose ``id`` is a key of ``cache`` are
    rendered once per indentation and reused."""
    if cache is not None:
        slot = cache.get(id(node))
        if slot is not None:
            lines = slot.get(pad)
            if lines is None:
                lines = []
                _render(node, pad, lines, cache)
                slot[pad] = lines
            out.extend(lines)
            return
    _render(node, pad, out, cache)


def _render(node: Any, pad: str, out: list[str], cache: dict[int, dict[str, list[str]]] | None) -> None:
    append = out.append
    inner = pad + "  "
    if type(node) is dict or isinstance(node, dict):
        for key, value in _sorted_items(node):
            head = f"{pad}{_string(key) if type(key) is str else format_scalar(key)}:"
            kind = type(value)
            if kind is str:
                append(f"{head} {_string(value)}")
            elif kind is float:
                append(f"{head} {format_float(value)}")
            elif kind is int:
                append(f"{head} {value!r}")
            elif kind is dict or kind is list or kind is tuple or isinstance(value, (dict, list, tuple)):
                if value:
                    append(head)
                    _block(value, inner, out, cache)
                else:
                    append(head + (" {}" if isinstance(value, dict) else " []"))
            else:
                append(f"{head} {format_scalar(value)}")
        return
    for item in node:
        kind = type(item)
        if kind is str:
            append(f"{pad}- {_string(item)}")
        elif kind is float:
            append(f"{pad}- {format_float(item)}")
        elif kind is dict or kind is list or kind is tuple or isinstance(item, (dict, list, tuple)):
            if item:
                start = len(out)
                _block(item, inner, out, cache)
                out[start] = f"{pad}- {out[start][len(inner):]}"
            else:
                append(f"{pad}- " + ("{}" if isinstance(item, dict) else "[]"))
        else:
            append(f"{pad}- {format_scalar(item)}")


def dump_canonical(data: Any, *, cache: dict[int, dict[str, list[str]]] | None = None) -> str:
    """Plain data as canonical YAML text (ends with a newline).

    Args:
        data: ``dict``/``list``/``tuple``/scalars, arbitrarily nested.
        cache: ``{id(node): {}}`` for sub-trees shared by many documents;
            their text is rendered once per indentation. The caller keeps
            those nodes alive and unchanged while the cache is in use.

    Returns:
        The YAML text; ``yaml.load(text) == data`` for ruamel.yaml (safe
        loader, YAML 1.2), tuples read back as lists.

    Raises:
        TypeError: ``data`` holds something else (a set, an object...).
    """
    if isinstance(data, (dict, list, tuple)):
        if not data:
            return ("{}" if isinstance(data, dict) else "[]") + "\n"
        out: list[str] = []
        _block(data, "", out, cache)
        out.append("")
        return "\n".join(out)
    return format_scalar(data) + "\n"


def json_default(obj: Any) -> Any:
    """Turn the non-JSON values that reach JSON text into JSON values
    (``default=`` of :func:`json.dumps`).

    numpy scalars and arrays (anything with ``tolist``), dates and datetimes
    (ISO 8601), sets (sorted lists) and paths (strings); duck typing, so no
    numpy import is needed.

    Raises:
        TypeError: anything else.
    """
    if hasattr(obj, "tolist"):
        return obj.tolist()
    if isinstance(obj, (_dt.datetime, _dt.date, _dt.time)):
        return obj.isoformat()
    if isinstance(obj, (set, frozenset)):
        return sorted(obj, key=repr)
    if hasattr(obj, "__fspath__"):
        return str(obj)
    raise TypeError(f"value of type {type(obj).__name__} cannot be stored as JSON: {obj!r}")


def canonical_json(value: Any) -> str:
    """The canonical JSON text of ``value``: sorted keys, no whitespace, UTF-8
    characters kept, shortest float representation. Content hashes (run
    seeds, run versions in the store, manifests) are computed from it.

    NaN and infinities are refused: NaN is not equal to itself, so a text
    holding it cannot identify a value (and it is not JSON).

    Raises:
        TypeError: ``value`` holds something that has no JSON form.
        ValueError: ``value`` holds NaN or an infinity.
    """
    return _CANONICAL_JSON.encode(value)


#: what ``json.dumps(value, sort_keys=True, ...)`` builds on every call, built once
_CANONICAL_JSON = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False,
                                  default=json_default)


def readable_level(level: Any) -> Any:
    """A factor level as people read it (tables, plots, ``design.csv``,
    exports): numbers and strings unchanged, a list of keys joined with
    ``+`` (``["learner"]`` -> ``learner``), any other structure as compact
    JSON with sorted keys, ``None`` unchanged."""
    if isinstance(level, list) and all(isinstance(x, str) for x in level):
        return "+".join(level)
    if isinstance(level, (list, dict)):
        return json.dumps(level, sort_keys=True, separators=(",", ":"))
    return level
