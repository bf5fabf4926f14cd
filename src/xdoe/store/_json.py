"""JSON as the store writes it: canonical text and the content hash of a run document."""

from __future__ import annotations

import hashlib
import json
from typing import Any, Callable

from xdoe.documents import canonical_json, json_default

__all__ = ["canonical_json", "json_default", "compact_json", "pretty_json", "document_hash", "fast_encoder"]


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


def fast_encoder(**options: Any) -> Callable[[Any], str]:
    """``json.JSONEncoder(**options).encode`` for encoding many small values.

    The same text (the same C function writes it), but CPython's C encoder is
    built once instead of on every call, which costs more than encoding a
    small dict of a step. Circular references are then caught by the
    recursion limit instead of a ``markers`` dict: such a value gets the plain
    encoder's ``ValueError`` all the same. Without the C accelerator (or with
    ``indent``, or a C encoder of another signature) this is
    ``JSONEncoder.encode`` itself.
    """
    encoder = json.JSONEncoder(**options)
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None or encoder.indent is not None:
        return encoder.encode
    strings = json.encoder.encode_basestring_ascii if encoder.ensure_ascii else json.encoder.encode_basestring
    try:  # the arguments JSONEncoder.iterencode passes, markers aside
        chunks = make(None, encoder.default, strings, None, encoder.key_separator,
                      encoder.item_separator, encoder.sort_keys, encoder.skipkeys, encoder.allow_nan)
        probe = {"b": [1, 2.5, None, True, "\u00e9"], "a": {}}
        if "".join(chunks(probe, 0)) != encoder.encode(probe):
            return encoder.encode
    except TypeError:  # another Python's C encoder: keep the plain one
        return encoder.encode

    def encode(value: Any) -> str:
        try:
            return "".join(chunks(value, 0))
        except RecursionError:  # circular (or too deep): the plain encoder's error
            return encoder.encode(value)

    return encode
