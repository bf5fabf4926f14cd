"""Hydra-style overrides of a run document (``KEY=VALUE``): the one
implementation is :mod:`xdoe.documents._overrides`, shared with ``xgen
generate``/``xgen check`` overrides of an experiment document."""

from __future__ import annotations

from xdoe.documents import (
    Move,
    Override,
    apply_overrides,
    describe_overrides,
    dotted,
    parse_override,
    parse_value,
    resolve_key,
)

__all__ = ["Move", "Override", "parse_override", "parse_value", "apply_overrides", "resolve_key",
           "describe_overrides", "dotted"]
