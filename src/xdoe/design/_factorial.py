"""The full factorial design."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from xdoe.design._common import check_factors
from xdoe.design._factors import Factor
from xdoe.errors import DesignError

__all__ = ["full_factorial"]


def full_factorial(
    factors: Sequence[Factor],
    n: int | None = None,
    seed: np.random.SeedSequence | int = 0,
) -> np.ndarray:
    """Every combination of the levels of categorical ``factors``.

    Returns an array of shape ``(prod(k_i), d)`` of level indices (float64,
    exact integers) in :func:`itertools.product` order: the first factor
    varies slowest. ``n`` and ``seed`` are accepted for a signature shared
    with the other designs and ignored. Zero factors give one point with no
    columns.

    Raises:
        DesignError: a factor is continuous (full factorial needs levels).
    """
    factors = check_factors(factors)
    for f in factors:
        if f.levels is None:
            raise DesignError(
                f"full_factorial needs levels, but factor {f.name!r} is continuous "
                f"(range [{f.low}, {f.high}]); use design lhs or maximin"
            )
    ks = [len(f.levels) for f in factors]  # type: ignore[arg-type]
    if not ks:
        return np.zeros((1, 0), dtype=np.float64)
    return factorial_indices(ks).astype(np.float64)


def factorial_indices(ks: Sequence[int]) -> np.ndarray:
    """Integer level indices ``(prod(ks), len(ks))`` in product order."""
    total = int(np.prod(ks, dtype=np.int64)) if ks else 1
    if len(ks) == 0:
        return np.zeros((1, 0), dtype=np.int64)
    out = np.empty((total, len(ks)), dtype=np.int64)
    # mixed-radix decoding, vectorised (same order as itertools.product)
    idx = np.arange(total, dtype=np.int64)
    for j in range(len(ks) - 1, -1, -1):
        idx, out[:, j] = np.divmod(idx, ks[j])
    return out
