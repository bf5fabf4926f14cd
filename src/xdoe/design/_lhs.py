"""Latin hypercube designs (McKay, Beckman & Conover 1979) via scipy.stats.qmc."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from xdoe.design._common import balanced_levels, check_factors, check_n, rng_from
from xdoe.design._factors import Factor

__all__ = ["latin_hypercube"]


def latin_hypercube(
    factors: Sequence[Factor],
    n: int,
    seed: np.random.SeedSequence | int = 0,
) -> np.ndarray:
    """A Latin hypercube of ``n`` points over all ``factors``.

    Built with :class:`scipy.stats.qmc.LatinHypercube` (scrambled, i.e. each
    continuous position is drawn uniformly *within* its cell: one point in
    each of the ``n`` cells ``[i/n, (i+1)/n)`` of every continuous column).
    A categorical column with ``k`` levels is stratified: the points are
    ranked by that column's LHS value and assigned levels in ascending
    blocks, so every level appears ``floor(n/k)`` or ``ceil(n/k)`` times.

    Returns:
        ``(n, d)`` float64: level indices for categorical columns, unit
        positions in ``[0, 1)`` for continuous ones. The same ``seed`` gives
        the same array.

    Raises:
        DesignError: ``n < 1`` or invalid factors.
    """
    factors = check_factors(factors)
    n = check_n(n, "latin_hypercube")
    d = len(factors)
    if d == 0:
        return np.zeros((n, 0), dtype=np.float64)
    rng = rng_from(seed)
    from scipy.stats import qmc  # scipy.stats takes ~0.5 s to import: only when a design needs it

    u = qmc.LatinHypercube(d, scramble=True, rng=rng).random(n)
    return _map_categorical(u, factors)


def _map_categorical(u: np.ndarray, factors: Sequence[Factor]) -> np.ndarray:
    """Replace each categorical column of ``u`` (values in distinct cells) by
    balanced level indices assigned by rank."""
    out = np.array(u, dtype=np.float64, copy=True)
    n = out.shape[0]
    for j, f in enumerate(factors):
        if f.levels is not None:
            ranks = np.argsort(np.argsort(out[:, j], kind="stable"), kind="stable")
            out[:, j] = balanced_levels(n, len(f.levels))[ranks]
    return out
