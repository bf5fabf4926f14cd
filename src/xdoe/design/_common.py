"""Helpers shared by the design algorithms (seeds, level counts, checks)."""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from xdoe.design._factors import Factor
from xdoe.errors import DesignError


def as_seed_sequence(seed: np.random.SeedSequence | int) -> np.random.SeedSequence:
    """``seed`` as a :class:`numpy.random.SeedSequence` (an int ``s`` gives ``SeedSequence(s)``)."""
    if isinstance(seed, np.random.SeedSequence):
        return seed
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) and seed >= 0:
        return np.random.SeedSequence(int(seed))
    raise DesignError(f"design seed must be a non-negative int or a numpy SeedSequence, got {seed!r}")


def rng_from(seed: np.random.SeedSequence | int) -> np.random.Generator:
    """A fresh generator derived only from ``seed``."""
    return np.random.default_rng(as_seed_sequence(seed))


def check_factors(factors: Sequence[Factor]) -> tuple[Factor, ...]:
    """Return ``factors`` as a tuple after checking types and unique names."""
    out = tuple(factors)
    seen: set[str] = set()
    for f in out:
        if not isinstance(f, Factor):
            raise DesignError(f"expected Factor objects, got {type(f).__name__}")
        if f.name in seen:
            raise DesignError(f"factor {f.name!r} is given twice")
        seen.add(f.name)
    return out


def check_n(n: object, what: str) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise DesignError(f"{what} needs a number of design points n >= 1, got {n!r}")
    return int(n)


def full_size(factors: Sequence[Factor]) -> int:
    """Number of points of the full factorial of categorical ``factors``."""
    return math.prod(len(f.levels) for f in factors if f.levels is not None)


def balanced_levels(n: int, k: int) -> np.ndarray:
    """``n`` level indices ``floor(i k / n)`` for ``i = 0..n-1``: ascending,
    each of the ``k`` levels ``floor(n/k)`` or ``ceil(n/k)`` times."""
    return (np.arange(n, dtype=np.int64) * k) // n


def pdist(x: np.ndarray, metric: str = "euclidean") -> np.ndarray:
    """:func:`scipy.spatial.distance.pdist`, imported on first use (scipy.spatial
    takes a noticeable time to import, and xgen refuses bad documents without it)."""
    from scipy.spatial.distance import pdist as _pdist

    return _pdist(x, metric)


def squareform(distances: np.ndarray) -> np.ndarray:
    """:func:`scipy.spatial.distance.squareform`, imported on first use."""
    from scipy.spatial.distance import squareform as _squareform

    return _squareform(distances)
