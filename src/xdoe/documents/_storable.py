"""What the store and the file system can hold: the one check that
``xgen check``, ``xgen generate`` and ``xrun experiment-check`` (and
``experiment-start``) share, so a document accepted by one is never refused
later, after the store was written.

Every value of a document must be plain data with a JSON form that SQLite
and PostgreSQL keep as it is:

* mappings (keys: strings, integers, finite floats, booleans or null),
  lists, strings, integers, finite floats, booleans and null; YAML's
  ``!!binary``, ``!!set``, ``!!omap`` pairs, timestamps (``2024-01-01``
  unquoted) and complex keys are refused (quote a date to keep it as text);
* integers within 64 bits (``-2**63 <= n < 2**63``: SQLite's and
  PostgreSQL's ``BIGINT``); seeds and design-point indices are stored as such;
* strings that are valid Unicode (no lone surrogate such as ``"\\ud800"``)
  without NUL characters (PostgreSQL's text refuses NUL, file names cannot
  hold it);
* no NaN or infinity (no JSON form; the store and results files could not
  record them).

Names that end up in file names, store keys and CSV exports (uids, agent
names, phase names, environment uids) have stricter rules:
:mod:`xdoe.documents._names`.
"""

from __future__ import annotations

import datetime as _dt
import math
from typing import Any

from xdoe.documents._yaml import YamlDocument

__all__ = ["INT64_MAX", "INT64_MIN", "find_unstorable", "refuse_unstorable"]

#: the largest and smallest integers the store holds (64-bit, SQLite's INTEGER and PostgreSQL's BIGINT)
INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)

_SCALARS = (str, int, float, bool, type(None))


def _kind(value: Any) -> str:
    """How the user wrote ``value`` in YAML, for the message."""
    if isinstance(value, (bytes, bytearray)):
        return "a !!binary value"
    if isinstance(value, (set, frozenset)) or type(value).__name__ == "CommentedSet":
        return "a !!set value"
    if isinstance(value, (_dt.date, _dt.datetime, _dt.time)):
        return f"a date/time value ({value.isoformat()})"
    if isinstance(value, tuple):
        return "a complex key or !!pairs value"
    return f"a {type(value).__name__} value"


def _bad_scalar(value: Any) -> str | None:
    """Why the scalar ``value`` cannot be stored, or ``None``."""
    kind = type(value)
    if kind is bool or value is None:
        return None
    if isinstance(value, int):
        if INT64_MIN <= value <= INT64_MAX:
            return None
        digits = len(str(abs(value))) if abs(value) < 10**4000 else "4000+"
        return (f"an integer of {digits} digits does not fit the store's 64-bit integers "
                f"(at most {INT64_MAX})")
    if isinstance(value, float):
        if math.isfinite(value):
            return None
        return (f"{value} is not a finite number (NaN and infinity cannot be stored or compared); "
                "use a finite value or a string")
    if isinstance(value, str):
        if "\x00" in value:
            return "a string holds a NUL character (\\0), which the store and file names cannot hold"
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return "a string holds a lone surrogate (e.g. \\ud800), which is not Unicode text"
        return None
    hint = "quote it to keep it as text" if isinstance(value, (_dt.date, _dt.time)) else \
        "use a string, number, boolean, list or mapping"
    return f"{_kind(value)} cannot be stored; {hint}"


def find_unstorable(data: Any, path: tuple[str | int, ...] = ()) -> tuple[tuple[str | int, ...], str] | None:
    """The key path of the first value of ``data`` that the store cannot hold
    and why (see the module docstring), or ``None``.

    Args:
        data: plain data (dicts, lists, scalars) as :func:`load_yaml` returns it.
        path: the key path of ``data`` in its document.
    """
    stack: list[tuple[tuple[str | int, ...], Any]] = [(path, data)]
    while stack:
        where, node = stack.pop()
        if isinstance(node, dict):
            for key in node:
                if not isinstance(key, _SCALARS):
                    return where, f"key {_kind(key)} cannot be stored; keys are strings"
                problem = _bad_scalar(key)
                if problem is not None:
                    return where + (key if isinstance(key, (str, int)) else str(key),), "key: " + problem
            stack.extend((where + (k,), v) for k, v in reversed(list(node.items())))
        elif isinstance(node, list):
            stack.extend((where + (i,), v) for i, v in reversed(list(enumerate(node))))
        else:
            problem = _bad_scalar(node)
            if problem is not None:
                return where, problem
    return None


def refuse_unstorable(source: YamlDocument, data: Any = None) -> None:
    """Raise a located :class:`~xdoe.errors.DocumentError` at the first value
    of ``data`` (default: the whole document) the store cannot hold."""
    found = find_unstorable(source.data if data is None else data)
    if found is not None:
        where, problem = found
        raise source.error(problem, where)
