"""Refusing designs too large for the machine before anything is built.

A full factorial grows as the product of the level counts (30 two-level
factors: 2^30 points, 240 GiB as a design matrix) and repetitions multiply
the runs again. :func:`check_design_size` counts the runs a design would have
from the level counts alone (Python integers: no overflow, no allocation) and
refuses more than a limit (``max_total_runs``, default
:data:`~xdoe.documents.DEFAULT_MAX_TOTAL_RUNS` = 10^6) with the count and
what to change.
"""

from __future__ import annotations

from typing import Sequence

from xdoe.design._common import full_size
from xdoe.design._factors import Factor
from xdoe.errors import DesignTooLarge

__all__ = ["design_points_bound", "check_design_size", "DesignTooLarge"]


def _product_text(ks: list[int]) -> str:
    """``[2, 2, 2, 3]`` as ``2^3 x 3`` (level counts, largest power first)."""
    counts: dict[int, int] = {}
    for k in ks:
        counts[k] = counts.get(k, 0) + 1
    parts = [f"{k}^{m}" if m > 1 else str(k) for k, m in sorted(counts.items(), key=lambda km: (-km[1], km[0]))]
    return " x ".join(parts)


def design_points_bound(factors: Sequence[Factor], max_runs: int | None) -> int | None:
    """The most design points :func:`~xdoe.design.make_design` can return
    for ``factors`` and the budget ``max_runs`` (``None`` or ``-1``: no
    budget): the full factorial size, capped by ``max_runs``; ``max_runs``
    with a continuous factor; ``None`` when that is unbounded (a continuous
    factor without ``max_runs``, which ``make_design`` refuses itself)."""
    budget = None if max_runs is None or max_runs == -1 else int(max_runs)
    if any(f.levels is None for f in factors):
        return budget
    size = full_size(factors)
    return size if budget is None else min(size, budget)


def check_design_size(factors: Sequence[Factor], *, max_runs: int | None, repetitions: int, limit: int) -> None:
    """Refuse a design of more than ``limit`` runs (design points x repetitions).

    Raises:
        DesignTooLarge: the count, the limit and what to change.
    """
    points = design_points_bound(factors, max_runs)
    if points is None:
        return
    total = points * repetitions
    if total <= limit:
        return
    if points > limit:
        levels = _product_text([len(f.levels) for f in factors if f.levels is not None and len(f.levels) > 1])
        what = f"a full factorial of {levels} = {points} design points" if max_runs in (None, -1) else f"{points} design points"
        raise DesignTooLarge(
            f"{what} x {repetitions} repetition(s) = {total} runs is more than max_total_runs {limit}; "
            "give max_runs (a budget of design points, e.g. max_runs: 100, for a space-filling subset) "
            "or fewer levels, or raise max_total_runs (xgen --max-total-runs) if you mean it",
            "points",
        )
    raise DesignTooLarge(
        f"{points} design points x {repetitions} repetitions = {total} runs is more than max_total_runs "
        f"{limit}; lower repetitions or max_runs, or raise max_total_runs (xgen --max-total-runs) if you mean it",
        "repetitions",
    )
