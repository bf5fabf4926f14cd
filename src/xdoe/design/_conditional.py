"""Conditional factors: a factor with ``when`` applies only at the design
points where its parent factors take the named levels.

Every design method (full factorial, Latin hypercube, maximin) is built over
all factors as usual; :func:`apply_conditions` then marks the factor
*inactive* where a condition fails, sets its coordinate to ``0`` there, and
drops the points that became duplicates (first occurrence kept, order
preserved; an optuna design keeps them: its design point ``t`` is trial ``t``). So the full factorial of ``agent x alpha`` with ``alpha`` only
for ``agent=learner`` has ``learner x alpha`` points plus one ``random``
point, and a sampled design never runs the same valid combination twice.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from xdoe.design._factors import Factor
from xdoe.errors import DesignError

__all__ = ["allowed_levels", "applies", "apply_conditions", "check_conditions", "inactive_as_nan", "parents_first"]


def check_conditions(factors: Sequence[Factor]) -> None:
    """Raise :class:`DesignError` for a ``when`` naming an unknown or
    continuous factor, or conditions that form a cycle."""
    by_name = {f.name: f for f in factors}
    for f in factors:
        for parent, _levels in f.when:
            p = by_name.get(parent)
            if p is None or p.levels is None:
                raise DesignError(f"factor {f.name!r}: 'when' needs categorical factor {parent!r} in the design")
    seen: dict[str, int] = {}

    def visit(name: str) -> None:
        if seen.get(name) == 1:
            raise DesignError(f"the 'when' conditions of factor {name!r} form a cycle")
        if seen.get(name) == 2:
            return
        seen[name] = 1
        for parent, _ in by_name[name].when:
            visit(parent)
        seen[name] = 2

    for f in factors:
        visit(f.name)


def parents_first(factors: Sequence[Factor]) -> list[int]:
    """The factors' indices, every factor after the factors its ``when``
    names (otherwise in the given order)."""
    col = {f.name: j for j, f in enumerate(factors)}
    order: list[int] = []

    def add(j: int) -> None:
        if j in order:
            return
        for parent, _ in factors[j].when:
            add(col[parent])
        order.append(j)

    for j in range(len(factors)):
        add(j)
    return order


def allowed_levels(factors: Sequence[Factor], factor: Factor) -> list[tuple[int, list[int]]]:
    """``(parent column, the parent's level indices under which factor applies)``
    per condition of ``factor.when``."""
    col = {f.name: j for j, f in enumerate(factors)}
    out = []
    for parent, levels in factor.when:
        pj = col[parent]
        out.append((pj, [i for i, lv in enumerate(factors[pj].levels or ()) if lv in levels]))
    return out


def applies(factors: Sequence[Factor], factor: Factor, indices: dict[int, int]) -> bool:
    """Whether ``factor`` applies given the level indices of the active
    factors decided so far (column -> level index; a parent absent is
    inactive, so its children are too): one point of :func:`apply_conditions`."""
    return all(pj in indices and indices[pj] in allowed for pj, allowed in allowed_levels(factors, factor))


def apply_conditions(factors: Sequence[Factor], points: np.ndarray, *,
                     drop_duplicates: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Collapse inactive coordinates and drop duplicate points.

    Args:
        factors: the design's factors (``when`` on some of them).
        points: ``(n, d)`` design coordinates (level indices / unit positions).
        drop_duplicates: ``False`` keeps every point (an optuna design: point
            ``t`` is trial ``t``, and two trials may ask the same setting).

    Returns:
        ``(points, active)``: ``(m, d)`` float64 coordinates (``m <= n``;
        ``m == n`` without ``drop_duplicates``) and the ``(m, d)`` bool mask
        of active factors.
    """
    pts = np.array(points, dtype=np.float64, copy=True)
    n, d = pts.shape
    active = np.ones((n, d), dtype=bool)
    # parents before children: a child of an inactive parent is inactive
    for j in parents_first(factors):
        for pj, allowed in allowed_levels(factors, factors[j]):
            ok = np.isin(np.rint(pts[:, pj]).astype(np.int64), allowed) & active[:, pj]
            active[:, j] &= ok
        pts[~active[:, j], j] = 0.0
    if not drop_duplicates:
        return pts, active
    keep: list[int] = []
    seen: set[bytes] = set()
    for i in range(n):
        key = pts[i].tobytes() + active[i].tobytes()
        if key not in seen:
            seen.add(key)
            keep.append(i)
    return pts[keep], active[keep]


def inactive_as_nan(factors: Sequence[Factor], coded: np.ndarray) -> np.ndarray:
    """Coded points with NaN where a factor is inactive (:func:`apply_conditions`
    on the level indices the coded values of the categorical factors name).

    Args:
        factors: the design's factors (``when`` on some of them).
        coded: ``(n, d)`` coded values (-1..+1 for factors with levels;
            NaN: inactive already, a parent at NaN makes its children inactive).

    Returns:
        ``(n, d)`` float64: ``coded`` with NaN at every inactive coordinate.
    """
    coded = np.array(coded, dtype=np.float64, copy=True).reshape(-1, len(factors))
    index = np.zeros_like(coded)
    for j, f in enumerate(factors):
        if f.levels is not None and len(f.levels) > 1:
            index[:, j] = np.rint((np.nan_to_num(coded[:, j], nan=-1.0) + 1) / 2 * (len(f.levels) - 1))
    _, active = apply_conditions(factors, index, drop_duplicates=False)
    for j in parents_first(factors):  # a parent inactive already (NaN) silences its children too
        for pj, _ in allowed_levels(factors, factors[j]):
            active[:, j] &= ~np.isnan(coded[:, pj]) & active[:, pj]
    return np.where(active, coded, np.nan)
