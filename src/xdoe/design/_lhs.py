"""Latin hypercube designs (McKay, Beckman & Conover 1979) via scipy.stats.qmc."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np

from xdoe.design._common import check_factors, check_n, map_categorical, rng_from, size_of, spec_of
from xdoe.design._design import Design
from xdoe.design._factors import Factor

if TYPE_CHECKING:
    from xdoe.documents import DesignSpec

__all__ = ["latin_hypercube"]


def latin_hypercube(
    factors: Sequence[Factor],
    spec: DesignSpec | Mapping[str, Any] | None = None,
    seed: np.random.SeedSequence | int = 0,
) -> Design:
    """A Latin hypercube of ``n`` points over all ``factors`` (McKay, Beckman
    & Conover 1979).

    Built with :class:`scipy.stats.qmc.LatinHypercube` (scrambled, i.e. each
    continuous position is drawn uniformly *within* its cell: one point in
    each of the ``n`` cells ``[i/n, (i+1)/n)`` of every continuous column).
    A categorical column with ``k`` levels is stratified: the points are
    ranked by that column's LHS value and assigned levels in ascending
    blocks, so every level appears ``floor(n/k)`` or ``ceil(n/k)`` times.

    Args:
        factors: the factors (unique names).
        spec: ``{"n": N}``, the number of points (required).
        seed: int or ``SeedSequence``; the same seed gives the same design.

    Returns:
        A :class:`~xdoe.design.Design` (method ``lhs``); ``points`` ``(n, d)``
        float64: level indices for categorical columns, unit positions in
        ``[0, 1)`` for continuous ones.

    Raises:
        DesignError: no ``n``, ``n < 1`` or invalid factors.
    """
    factors = check_factors(factors)
    n = check_n(size_of(spec_of("lhs", spec)), "latin_hypercube")
    return Design(factors, "lhs", f"Latin hypercube of {n} points", lhs_points(factors, n, seed))


def lhs_points(factors: tuple[Factor, ...], n: int, seed: np.random.SeedSequence | int) -> np.ndarray:
    """The ``(n, d)`` points of :func:`latin_hypercube`."""
    d = len(factors)
    if d == 0:
        return np.zeros((n, 0), dtype=np.float64)
    rng = rng_from(seed)
    from scipy.stats import qmc  # scipy.stats takes ~0.5 s to import: only when a design needs it

    u = qmc.LatinHypercube(d, scramble=True, rng=rng).random(n)
    return map_categorical(u, factors)
