"""JSON as the store writes it: canonical text and the content hash of a run document."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from xdoe.documents import canonical_json, json_default

__all__ = ["canonical_json", "json_default", "compact_json", "pretty_json", "document_hash"]


def compact_json(value: Any) -> str:
    """Compact JSON for stored payloads (sensors, actions, extras...).

    Like :func:`canonical_json` but NaN and infinities are allowed (written as
    ``NaN``/``Infinity``, which Python's :mod:`json` reads back).
    """
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      default=json_default)


def pretty_json(value: Any) -> str:
    """Readable JSON for metadata files: indent 2, sorted keys, final newline."""
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, default=json_default) + "\n"


def document_hash(document: Any) -> str:
    """sha256 (64 lowercase hex digits) of the canonical JSON of a run document.

    Two documents have the same hash exactly when they are equal as JSON data,
    whatever their key order or YAML formatting.
    """
    return hashlib.sha256(canonical_json(document).encode("utf-8")).hexdigest()
