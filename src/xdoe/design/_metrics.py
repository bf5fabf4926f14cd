"""Space-filling metrics of designs given in the unit hypercube.

numpy and scipy are imported when a metric is computed, not with this
module; a full factorial's figures come in closed form
(:func:`factorial_figures`), so writing one does not load ``scipy.stats``
(~0.7 s of start-up).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    import numpy as np

__all__ = ["min_distance", "centred_l2_discrepancy", "factorial_figures", "factorial_min_distance",
           "factorial_discrepancy"]


def min_distance(unit_points: np.ndarray) -> float:
    """Minimum pairwise Euclidean distance of ``unit_points`` (shape ``(n, d)``).

    Returns ``inf`` for fewer than two points and ``0.0`` for points with no
    columns (all points coincide). Uses a k-d tree nearest-neighbour query
    (``scipy.spatial.cKDTree``): O(n log n) time and O(n) memory, so it also
    works for designs of 10^5-10^6 points, where all pairwise distances
    would not fit in memory.
    """
    import numpy as np

    x = np.asarray(unit_points, dtype=float)
    if x.ndim != 2:
        raise ValueError(f"unit_points must have shape (n, d), got {x.shape}")
    if x.shape[0] < 2:
        return float("inf")
    if x.shape[1] == 0:
        return 0.0
    from scipy.spatial import cKDTree  # imported when needed (slow to import)

    distances, _ = cKDTree(x).query(x, k=2)
    return float(distances[:, 1].min())


def centred_l2_discrepancy(unit_points: np.ndarray) -> float:
    """Centred L2 discrepancy (Hickernell 1998) of ``unit_points`` in
    ``[0, 1]^d`` via ``scipy.stats.qmc.discrepancy(method="CD")``; lower is
    more uniform. ``nan`` when there are no points or no columns."""
    import numpy as np

    x = np.asarray(unit_points, dtype=float)
    if x.ndim != 2:
        raise ValueError(f"unit_points must have shape (n, d), got {x.shape}")
    if x.shape[0] == 0 or x.shape[1] == 0:
        return float("nan")
    from scipy.stats import qmc  # imported when needed (slow to import)

    return float(qmc.discrepancy(np.clip(x, 0.0, 1.0), method="CD"))


def _check_levels(ks: Sequence[int]) -> None:
    if not ks or min(ks) < 1:
        raise ValueError(f"a full factorial needs at least one column of >= 1 levels, got {list(ks)}")


def factorial_min_distance(ks: Sequence[int]) -> float:
    """Minimum pairwise distance of the full factorial with ``ks[j]`` levels
    in column ``j`` (unit positions as in :func:`factorial_figures`): the
    nearest neighbour of a grid point is one level step away in one column,
    so it is ``min 1 / (k - 1)`` over the columns with ``k > 1`` (``inf``
    for a single point). O(d) time.

    Raises:
        ValueError: a level count below 1 or no columns.
    """
    _check_levels(ks)
    steps = [1.0 / (k - 1) for k in ks if k > 1]
    return min(steps) if steps else float("inf")


def factorial_discrepancy(ks: Sequence[int]) -> float:
    """Centred L2 discrepancy of the full factorial with ``ks[j]`` levels in
    column ``j`` (see :func:`factorial_figures`), in O(sum k^2) time.

    Raises:
        ValueError: a level count below 1 or no columns.
    """
    _check_levels(ks)
    single, pairs = 1.0, 1.0
    for k in ks:
        mean_f, mean_g = _column_means(k)
        single *= mean_f
        pairs *= mean_g
    return math.pow(13.0 / 12.0, len(ks)) - 2.0 * single + pairs


def factorial_figures(ks: Sequence[int]) -> tuple[float, float]:
    """``(min_distance, centred_l2_discrepancy)`` of the full factorial with
    ``ks[j]`` levels in column ``j`` (unit positions ``i / (k - 1)``, ``0.5``
    for one level), in O(sum k^2) time instead of O(n^2 d).

    The nearest neighbour of a grid point is one level step away in one
    column, so the minimum distance is ``min 1 / (k - 1)`` over columns with
    ``k > 1`` (``inf`` for a single point). The centred L2 discrepancy
    (Hickernell 1998, eq. 5.1c; the value ``scipy.stats.qmc.discrepancy``
    returns for ``method="CD"``, the squared discrepancy) is

        (13/12)^d - 2/n sum_i prod_k f(x_ik) + 1/n^2 sum_i,j prod_k g(x_ik, x_jk),
        f(a) = 1 + |a - 1/2|/2 - |a - 1/2|^2/2,
        g(a, b) = 1 + |a - 1/2|/2 + |b - 1/2|/2 - |a - b|/2,

    and on a product grid both sums factor into products over the columns of
    sums over their levels. ``tests/design/test_metrics.py`` checks both
    figures against scipy's general computation.

    Raises:
        ValueError: a level count below 1 or no columns.
    """
    return factorial_min_distance(ks), factorial_discrepancy(ks)


def _column_means(k: int) -> tuple[float, float]:
    """``(mean of f, mean of g)`` over one column of ``k`` levels (the
    factors of :func:`factorial_figures`), at the positions
    ``numpy.linspace(0, 1, k)`` (``0.5`` for one level), with numpy's sums."""
    import numpy as np

    a = np.linspace(0.0, 1.0, k) if k > 1 else np.array([0.5])
    centred = np.abs(a - 0.5)
    single = float(np.mean(1.0 + 0.5 * centred - 0.5 * centred**2))
    pairs = float(np.mean(1.0 + 0.5 * centred[:, None] + 0.5 * centred[None, :]
                          - 0.5 * np.abs(a[:, None] - a[None, :])))
    return single, pairs
