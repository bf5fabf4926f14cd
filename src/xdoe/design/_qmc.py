"""Scrambled Sobol' and Halton designs via :mod:`scipy.stats.qmc`.

Sobol' (1967) sequences with Owen's scrambling (``qmc.Sobol``) and Halton
(1960) sequences with a random permutation scrambling (``qmc.Halton``), both
seeded from the document's seed. Categorical columns are mapped as in the
Latin hypercube (:func:`xdoe.design._common.map_categorical`): levels assigned
by rank in balanced blocks, so every level is used ``floor(n/k)`` or
``ceil(n/k)`` times.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np

from xdoe.design._common import check_factors, check_n, map_categorical, rng_from, size_of, spec_of
from xdoe.design._design import Design
from xdoe.design._factors import Factor

if TYPE_CHECKING:
    from xdoe.documents import DesignSpec

__all__ = ["sobol", "halton"]


def _sequence(kind: str, factors: Sequence[Factor], spec: DesignSpec | Mapping[str, Any] | None,
              seed: np.random.SeedSequence | int) -> Design:
    factors = check_factors(factors)
    n = check_n(size_of(spec_of(kind, spec)), kind)
    reason = f"{kind}: {n} scrambled points" + ("" if n & (n - 1) == 0 or kind == "halton"
                                                else " (not a power of two: Sobol' balance is lost)")
    d = len(factors)
    if d == 0:
        return Design(factors, kind, reason, np.zeros((n, 0), dtype=np.float64), info={})
    import warnings

    from scipy.stats import qmc

    engine = (qmc.Sobol if kind == "sobol" else qmc.Halton)(d, scramble=True, rng=rng_from(seed))
    with warnings.catch_warnings():  # Sobol' balance needs n = 2^m; the dry run says so
        warnings.simplefilter("ignore")
        u = engine.random(n)
    return Design(factors, kind, reason, map_categorical(u, factors), info={})


def sobol(factors: Sequence[Factor], spec: DesignSpec | Mapping[str, Any] | None = None,
          seed: np.random.SeedSequence | int = 0) -> Design:
    """``n`` points of a scrambled Sobol' sequence (Sobol' 1967;
    :class:`scipy.stats.qmc.Sobol`, Owen scrambling) over ``factors``.

    Args:
        factors: the factors (unique names).
        spec: ``{"n": N}``, the number of points (required; its balance
            properties hold for ``N`` a power of two).
        seed: int or ``SeedSequence`` of the scrambling.

    Returns:
        A :class:`~xdoe.design.Design` (method ``sobol``); ``points``
        ``(n, d)`` float64: unit positions in ``[0, 1)`` for continuous
        columns, balanced level indices for categorical ones.

    Raises:
        DesignError: no ``n``, ``n < 1`` or invalid factors.
    """
    return _sequence("sobol", factors, spec, seed)


def halton(factors: Sequence[Factor], spec: DesignSpec | Mapping[str, Any] | None = None,
           seed: np.random.SeedSequence | int = 0) -> Design:
    """``n`` points of a scrambled Halton sequence (Halton 1960;
    :class:`scipy.stats.qmc.Halton`); arguments, returns and errors as
    :func:`sobol` (method ``halton``).
    """
    return _sequence("halton", factors, spec, seed)
