"""The one rule for a factor's ``levels`` (and a schedule factor's): no
level twice (used by the experiment document's checks and by
:class:`xdoe.design.Factor`)."""

from __future__ import annotations

import json
from typing import Any, Sequence

__all__ = ["repeated_level"]


def repeated_level(levels: Sequence[Any]) -> tuple[int, Any] | None:
    """``(index, level)`` of the first level of ``levels`` (JSON-able
    values) equal to an earlier one of the same type, or ``None`` when all
    differ. ``1``, ``1.0`` and ``true`` are three levels (a run document
    writes each as itself, and a component may tell them apart); mappings
    compare whatever their key order. A repeated level would make a factor
    that does not vary (``[1, 1]``) or a design that runs one setting twice
    as often as the others."""
    seen: set[str] = set()
    for index, level in enumerate(levels):
        key = json.dumps([type(level).__name__, level], sort_keys=True, default=repr)
        if key in seen:
            return index, level
        seen.add(key)
    return None
