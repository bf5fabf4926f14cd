"""The one rule for a factor's ``levels``: no level twice (used by the
experiment document's model and by :class:`xdoe.design.Factor`)."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["repeated_level"]


def repeated_level(levels: Any) -> Any | None:
    """The first level of ``levels`` (a sequence of JSON-able values) equal
    to an earlier one of the same type, or ``None`` when all differ. ``1``,
    ``1.0`` and ``true`` are three levels (a run document writes each as
    itself, and a component may tell them apart); mappings compare whatever
    their key order. A repeated level would make a factor that does not vary
    (``[1, 1]``) or a design that runs one setting twice as if it were two."""
    seen: set[tuple[str, str]] = set()
    for level in levels:
        key = (type(level).__name__, json.dumps(level, sort_keys=True, default=str))
        if key in seen:
            return level
        seen.add(key)
    return None
