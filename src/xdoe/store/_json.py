"""JSON as the store writes it: canonical text and the content hash of a run document."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from xdoe.documents import canonical_json, json_default

__all__ = ["canonical_json", "json_default", "compact_json", "pretty_json", "document_hash"]


#: ``chunks(value, 0)``: the text of ``json.dumps(value, sort_keys=True, separators=(",", ":"),
#: ensure_ascii=False, default=json_default)`` in pieces, by json's own encoder of those options
#: made once: ``json.dumps`` with options makes a new one per call and reaches it through two
#: Python functions (half the cost of an episode's extras cell). Made without the check for
#: cycles (a per-call dict of the containers being written): a cyclic value fails with
#: ``RecursionError`` instead of ``ValueError`` (it has no JSON either way), and the one encoder
#: serves every thread.
_chunks = (json.encoder.c_make_encoder(None, json_default, json.encoder.encode_basestring, None, ":", ",",
                                       True, False, True)
           if json.encoder.c_make_encoder is not None  # an interpreter without json's C part: its Python one
           else json.JSONEncoder(check_circular=False, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                                 default=json_default).iterencode)


def compact_json(value: Any) -> str:
    """Compact JSON for stored payloads (sensors, actions, extras...): sorted
    keys, no spaces, non-ASCII characters as they are.

    Like :func:`canonical_json` but NaN and infinities are allowed (written as
    ``NaN``/``Infinity``, which Python's :mod:`json` reads back).

    Raises:
        TypeError: a value JSON cannot hold (:func:`json_default` refuses it).
        RecursionError: a value that contains itself.
    """
    return "".join(_chunks(value, 0))


def pretty_json(value: Any) -> str:
    """Readable JSON for metadata files: indent 2, sorted keys, final newline."""
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, default=json_default) + "\n"


def document_hash(document: Any) -> str:
    """sha256 (64 lowercase hex digits) of the canonical JSON of a run document.

    Two documents have the same hash exactly when they are equal as JSON data,
    whatever their key order or YAML formatting.
    """
    return hashlib.sha256(canonical_json(document).encode("utf-8")).hexdigest()
