"""Scrambled Sobol' and Halton designs via :mod:`scipy.stats.qmc`.

Sobol' (1967) sequences with Owen's scrambling (``qmc.Sobol``) and Halton
(1960) sequences with a random permutation scrambling (``qmc.Halton``), both
seeded from the document's seed. Categorical columns are mapped as in the
Latin hypercube (:func:`xdoe.design._lhs._map_categorical`): levels assigned
by rank in balanced blocks, so every level is used ``floor(n/k)`` or
``ceil(n/k)`` times.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from xdoe.design._common import check_factors, check_n, rng_from
from xdoe.design._factors import Factor
from xdoe.design._lhs import _map_categorical

__all__ = ["sobol", "halton"]


def _sequence(kind: str, factors: Sequence[Factor], n: int, seed: np.random.SeedSequence | int) -> np.ndarray:
    factors = check_factors(factors)
    n = check_n(n, kind)
    d = len(factors)
    if d == 0:
        return np.zeros((n, 0), dtype=np.float64)
    import warnings

    from scipy.stats import qmc

    engine = (qmc.Sobol if kind == "sobol" else qmc.Halton)(d, scramble=True, rng=rng_from(seed))
    with warnings.catch_warnings():  # Sobol' balance needs n = 2^m; the dry run says so
        warnings.simplefilter("ignore")
        u = engine.random(n)
    return _map_categorical(u, factors)


def sobol(factors: Sequence[Factor], n: int, seed: np.random.SeedSequence | int = 0) -> np.ndarray:
    """``n`` points of a scrambled Sobol' sequence (:class:`scipy.stats.qmc.Sobol`,
    Owen scrambling) over ``factors``: ``(n, d)`` float64, unit positions in
    ``[0, 1)`` for continuous columns, balanced level indices for categorical
    ones. Its balance properties hold for ``n`` a power of two.

    Raises:
        DesignError: ``n < 1`` or invalid factors.
    """
    return _sequence("sobol", factors, n, seed)


def halton(factors: Sequence[Factor], n: int, seed: np.random.SeedSequence | int = 0) -> np.ndarray:
    """``n`` points of a scrambled Halton sequence (:class:`scipy.stats.qmc.Halton`)
    over ``factors``; shapes as :func:`sobol`.

    Raises:
        DesignError: ``n < 1`` or invalid factors.
    """
    return _sequence("halton", factors, n, seed)
