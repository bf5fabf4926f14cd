"""Space-filling metrics of designs given in the unit hypercube."""

from __future__ import annotations

import numpy as np

__all__ = ["min_distance", "centred_l2_discrepancy"]


def min_distance(unit_points: np.ndarray) -> float:
    """Minimum pairwise Euclidean distance of ``unit_points`` (shape ``(n, d)``).

    Returns ``inf`` for fewer than two points and ``0.0`` for points with no
    columns (all points coincide). Uses a k-d tree nearest-neighbour query
    (``scipy.spatial.cKDTree``): O(n log n) time and O(n) memory, so it also
    works for designs of 10^5-10^6 points, where all pairwise distances
    would not fit in memory.
    """
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
    x = np.asarray(unit_points, dtype=float)
    if x.ndim != 2:
        raise ValueError(f"unit_points must have shape (n, d), got {x.shape}")
    if x.shape[0] == 0 or x.shape[1] == 0:
        return float("nan")
    from scipy.stats import qmc  # imported when needed (slow to import)

    return float(qmc.discrepancy(np.clip(x, 0.0, 1.0), method="CD"))
