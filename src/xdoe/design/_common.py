"""Helpers shared by the design algorithms (seeds, level counts, checks).

numpy is imported where it is used: a full factorial is built and checked
without it (``xgen check`` start-up, issue 16).
"""

from __future__ import annotations

import math
import numbers
import sys
from typing import TYPE_CHECKING, Sequence

from xdoe.design._factors import Factor
from xdoe.errors import DesignError

if TYPE_CHECKING:
    import numpy as np


def _is_seed_sequence(seed: object) -> bool:
    np = sys.modules.get("numpy")  # not loaded: ``seed`` cannot be a SeedSequence
    return np is not None and isinstance(seed, np.random.SeedSequence)


def check_seed(seed: object) -> None:
    """Refuse a seed :func:`as_seed_sequence` would refuse, without importing numpy.

    Raises:
        DesignError: ``seed`` is neither a non-negative int nor a ``SeedSequence``.
    """
    if _is_seed_sequence(seed):
        return
    if isinstance(seed, numbers.Integral) and not isinstance(seed, bool) and seed >= 0:
        return
    raise DesignError(f"design seed must be a non-negative int or a numpy SeedSequence, got {seed!r}")


def as_seed_sequence(seed: np.random.SeedSequence | int, spawn_key: tuple[int, ...] = ()) -> np.random.SeedSequence:
    """``seed`` as a :class:`numpy.random.SeedSequence` (an int ``s`` gives
    ``SeedSequence(s, spawn_key=spawn_key)``; a ``SeedSequence`` is returned as is).

    Raises:
        DesignError: see :func:`check_seed`.
    """
    check_seed(seed)
    if _is_seed_sequence(seed):
        return seed  # type: ignore[return-value]
    import numpy as np

    return np.random.SeedSequence(int(seed), spawn_key=spawn_key)  # type: ignore[call-overload]


def rng_from(seed: np.random.SeedSequence | int) -> np.random.Generator:
    """A fresh generator derived only from ``seed``."""
    import numpy as np

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
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
        raise DesignError(f"{what} needs a number of design points n >= 1, got {n!r}")
    return int(n)


def full_size(factors: Sequence[Factor]) -> int:
    """Number of points of the full factorial of categorical ``factors``."""
    return math.prod(len(f.levels) for f in factors if f.levels is not None)


def balanced_levels(n: int, k: int) -> np.ndarray:
    """``n`` level indices ``floor(i k / n)`` for ``i = 0..n-1``: ascending,
    each of the ``k`` levels ``floor(n/k)`` or ``ceil(n/k)`` times."""
    import numpy as np

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
