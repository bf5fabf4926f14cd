"""The one rule for naming a phase of a schedule: by its name, or by its
index in schedule order (``"0"``) when no phase has that name. Used by
responses (``PHASE:METRIC:STAT``), the database's scores, the curves, and
xgen's checks of an optuna design's ``response`` and of ``run_config.prune``."""

from __future__ import annotations

from typing import Sequence

__all__ = ["phase_named"]


def phase_named(name: str, phases: Sequence[str]) -> str | None:
    """The phase of ``phases`` (names in schedule order) that ``name``
    names: itself when it is one of them, else the phase at that index for
    an index text below their number (``"1"``), else ``None``."""
    if name in phases:
        return name
    if name.isdigit() and int(name) < len(phases):
        return phases[int(name)]
    return None
