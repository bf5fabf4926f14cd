"""JSON as the store writes it: canonical text and the content hash of a run document."""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
from typing import Any

__all__ = ["canonical_json", "compact_json", "pretty_json", "document_hash"]


def _default(obj: Any) -> Any:
    """Turn the non-JSON values that reach the store into JSON values.

    numpy scalars and arrays (anything with ``tolist``), dates and datetimes
    (ISO 8601), sets (sorted lists) and paths (strings). The store does not
    import numpy; duck typing is enough.
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
    characters kept, shortest float representation.

    Raises:
        TypeError: ``value`` holds something that has no JSON form.
        ValueError: ``value`` holds NaN or an infinity (not canonical JSON).
    """
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False, default=_default)


def compact_json(value: Any) -> str:
    """Compact JSON for stored payloads (sensors, actions, extras...).

    Like :func:`canonical_json` but NaN and infinities are allowed (written as
    ``NaN``/``Infinity``, which Python's :mod:`json` reads back).
    """
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      default=_default)


def pretty_json(value: Any) -> str:
    """Readable JSON for metadata files: indent 2, sorted keys, final newline."""
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, default=_default) + "\n"


def document_hash(document: Any) -> str:
    """sha256 (64 lowercase hex digits) of the canonical JSON of a run document.

    Two documents have the same hash exactly when they are equal as JSON data,
    whatever their key order or YAML formatting.
    """
    return hashlib.sha256(canonical_json(document).encode("utf-8")).hexdigest()

