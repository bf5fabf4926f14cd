"""Space-filling metrics of designs given in the unit hypercube.

numpy and scipy are imported when a metric is computed, not with this
module; a full factorial's figures come in closed form
(:func:`factorial_figures`), in plain Python for columns of up to
:data:`PURE_MAX_LEVELS` levels, so writing one loads neither numpy nor
``scipy.stats`` (~0.07 s and ~0.7 s of start-up).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    import numpy as np

__all__ = ["min_distance", "centred_l2_discrepancy", "factorial_figures", "factorial_min_distance",
           "factorial_discrepancy", "PURE_MAX_LEVELS"]

#: columns of up to this many levels get their discrepancy terms in plain Python (the same
#: floats as numpy, checked for every k up to it); larger ones are computed with numpy
PURE_MAX_LEVELS = 128


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
    factors of :func:`factorial_figures`), the very floats the numpy
    formulation :func:`_column_means_numpy` gives: the same positions
    (``numpy.linspace``: ``i * (1 / (k - 1))``, the last one ``1.0``), the
    same operations in the same order, and the sums added as numpy adds them
    (:func:`_numpy_sum`). Above :data:`PURE_MAX_LEVELS` levels the k x k
    terms are left to numpy."""
    if k > PURE_MAX_LEVELS:
        return _column_means_numpy(k)
    if k > 1:
        step = 1.0 / (k - 1)
        a = [i * step + 0.0 for i in range(k)]
        a[-1] = 1.0
    else:
        a = [0.5]
    centred = [abs(x - 0.5) for x in a]
    f = [1.0 + 0.5 * c - 0.5 * (c * c) for c in centred]  # numpy's c**2 is c*c (np.square)
    g = [1.0 + 0.5 * ci + 0.5 * cj - 0.5 * abs(ai - aj) for ai, ci in zip(a, centred) for aj, cj in zip(a, centred)]
    return _numpy_sum(f) / k, _numpy_sum(g) / (k * k)


def _column_means_numpy(k: int) -> tuple[float, float]:
    """:func:`_column_means` with numpy arrays (used above :data:`PURE_MAX_LEVELS` levels)."""
    import numpy as np

    a = np.linspace(0.0, 1.0, k) if k > 1 else np.array([0.5])
    centred = np.abs(a - 0.5)
    single = float(np.mean(1.0 + 0.5 * centred - 0.5 * centred**2))
    pairs = float(np.mean(1.0 + 0.5 * centred[:, None] + 0.5 * centred[None, :]
                          - 0.5 * np.abs(a[:, None] - a[None, :])))
    return single, pairs


def _numpy_sum(values: list[float]) -> float:
    """``numpy.sum`` of a float64 vector, bit for bit: numpy's pairwise
    summation (``pairwise_sum`` in numpy/_core/src/umath/loops_utils.h.src):
    below 8 terms a plain loop; up to 128 eight running sums, combined
    pairwise, then the rest; above, the two halves (the first a multiple of
    8 long) summed recursively; then added to the reduction's start, 0.0.
    Error O(log n) ulp instead of the O(n) of a plain loop."""
    return 0.0 + _pairwise(values, 0, len(values))


def _pairwise(a: list[float], lo: int, n: int) -> float:
    if n < 8:
        total = 0.0
        for i in range(lo, lo + n):
            total += a[i]
        return total
    if n <= 128:
        r0, r1, r2, r3, r4, r5, r6, r7 = a[lo:lo + 8]
        end = lo + n - n % 8
        for i in range(lo + 8, end, 8):
            r0 += a[i]
            r1 += a[i + 1]
            r2 += a[i + 2]
            r3 += a[i + 3]
            r4 += a[i + 4]
            r5 += a[i + 5]
            r6 += a[i + 6]
            r7 += a[i + 7]
        total = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
        for i in range(end, lo + n):
            total += a[i]
        return total
    half = n // 2
    half -= half % 8
    return _pairwise(a, lo, half) + _pairwise(a, lo + half, n - half)
