"""Z_k-linear codes as well-spread, balanced point sets of a level grid.

A Z_k-linear code ``C`` of length ``d`` and rank ``r`` is the set of the
``k**r`` words ``u G mod k`` (``u`` in ``Z_k^r``) of a generator matrix
``G = [I_r | A]`` over the ring ``Z_k`` (any ``k >= 2``). Read as level
indices ``0..k-1``, every coset ``b + C`` reduced into ``{0..k-1}^d`` is a
set of ``k**r`` distinct grid points (a complete residue system of ``C``):

* *spread*: for two points ``x != y`` of a coset, ``c = (x - y) mod k`` is a
  non-zero codeword and ``|x_i - y_i|`` is ``c_i`` or ``k - c_i``, so the
  squared distance in level-index units is at least the *squared-Lee*
  (Euclidean) weight ``w(c) = sum_i min(c_i, k - c_i)**2``. Every coset keeps
  the minimum weight of ``C`` as a lower bound on its minimum squared
  distance (the grid analogue of Construction A, Conway & Sloane, *Sphere
  Packings, Lattices and Groups*, 3rd ed. 1999, ch. 5; Lee and Euclidean
  weights of Z4 codes: Hammons, Kumar, Calderbank, Sloane & Sole 1994, "The
  Z4-linearity of Kerdock, Preparata, Goethals, and related codes", IEEE
  Trans. Inf. Theory 40, 301-319). The bound is not tight: the grid is not
  cyclic (levels ``0`` and ``k-1`` are ``k-1`` apart, not one), which the
  choice of the shift ``b`` exploits.
* *balance*: a coordinate whose generator column generates ``Z_k`` (the gcd
  of its entries and ``k`` is 1) takes every level exactly ``k**(r-1)``
  times in ``C`` and in every coset.

:func:`search_generator` finds a good ``A`` by seeded hill climbing over its
entries (a fixed iteration budget, so the same generator gives the same
code); :func:`best_coset` picks the shift ``b`` of largest true minimum
distance among a few seeded candidates.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.spatial.distance import pdist

from xdoe.design._factorial import factorial_indices

__all__ = ["squared_lee", "search_generator", "codewords", "best_coset", "code_rank"]

_PAIR_LIMIT = 1 << 21  # true coset distances by pdist only up to this many pairs


def squared_lee(k: int) -> np.ndarray:
    """``(k,)`` int64 table ``min(c, k - c)**2`` of the squared-Lee weight of ``c`` in ``Z_k``."""
    c = np.arange(k, dtype=np.int64)
    return np.minimum(c, k - c) ** 2


def code_rank(k: int, n: int) -> int:
    """Smallest ``r`` with ``k**r >= n`` (``k >= 2``, ``n >= 1``)."""
    r, size = 0, 1
    while size < n:
        r, size = r + 1, size * k
    return r


def _generates(column: np.ndarray, k: int) -> bool:
    g = k
    for v in column.tolist():
        g = math.gcd(g, int(v))
    return g == 1


def search_generator(
    k: int, d: int, r: int, rng: np.random.Generator, iterations: int
) -> tuple[np.ndarray, int]:
    """Seeded column-exchange search for ``A`` (``(r, d - r)`` int64 over
    ``Z_k``) such that the code of ``G = [I_r | A]`` has a large minimum
    squared-Lee weight.

    The weight of codeword ``u G`` is ``w(u) + sum_j w(u . a_j)`` over the
    columns ``a_j`` of ``A``, so a table of ``w(u . a)`` for every admissible
    column ``a`` (one that generates ``Z_k``, which keeps every coordinate
    balanced) scores all replacements of one column at once. Score: (minimum
    weight over non-zero codewords, minus the number of codewords at that
    weight), larger is better. Each iteration replaces one column (cycled)
    by a best-scoring one, ties broken at random (sideways moves walk
    plateaus); after ``2 (d - r)`` iterations without a new best the search
    restarts from random columns. Stops early at the Plotkin-type bound
    (:func:`_plotkin`) or after ``16 (d - r) + 16`` iterations without a rise
    of the best minimum weight. Columns ``a`` and ``-a`` score alike
    (``w(-x) = w(x)``), so only one of each pair is tried.

    Returns ``(A, w)``: the best ``A`` visited within ``iterations`` column
    replacements and its minimum weight ``w``. Needs ``k >= 2`` and
    ``1 <= r < d``; the table holds ``k**(2 r)`` entries.
    """
    m = d - r
    lee = squared_lee(k).astype(np.int32)
    messages = factorial_indices([k] * r)
    coef = messages[1:]  # the non-zero messages u
    # admissible columns, one of each pair a, -a (same weights: w(-x) = w(x))
    radix = k ** np.arange(r - 1, -1, -1, dtype=np.int64)
    mirror = ((-messages) % k) @ radix
    keep = [_generates(col, k) and i <= mirror[i] for i, col in enumerate(messages)]
    options = messages[np.flatnonzero(keep)]
    table = lee[(coef @ options.T) % k].T  # (options, words)
    base = lee[coef].sum(axis=1)
    bound = _plotkin(k, d, r)
    scale = len(coef) + 1  # key = weight * scale - (codewords at that weight)
    stall = 16 * m + 16

    def key(w: np.ndarray) -> int:
        low = int(w.min())
        return low * scale - int(np.count_nonzero(w == low))

    cols = rng.integers(0, len(options), size=m)
    best_cols, best_key = cols.copy(), key(base + table[cols].sum(axis=0))
    stale = since_rise = 0
    for it in range(iterations):
        if -(-best_key // scale) >= bound or since_rise >= stall:
            break
        if stale >= 2 * m:
            cols = rng.integers(0, len(options), size=m)
            stale = 0
        j = it % m
        cand = (base + table[np.delete(cols, j)].sum(axis=0))[None, :] + table
        low = cand.min(axis=1)
        top = low.max()
        rows = np.flatnonzero(low == top)
        fewest = np.count_nonzero(cand[rows] == top, axis=1)
        ties = rows[fewest == fewest.min()]
        cols[j] = ties[rng.integers(len(ties))]
        top_key = int(top) * scale - int(fewest.min())
        since_rise += 1
        if top_key > best_key:
            if int(top) > -(-best_key // scale):
                since_rise = 0
            best_cols, best_key = cols.copy(), top_key
            stale = 0
        else:
            stale += 1
    a = options[best_cols].T.copy()
    return a, -(-best_key // scale)  # key = weight * scale - count, 0 < count < scale


def _plotkin(k: int, d: int, r: int) -> int:
    """Plotkin-type upper bound on the minimum squared-Lee weight of a
    balanced rank-``r`` code: the minimum is at most the mean weight of the
    non-zero codewords, ``d * mean(lee) * k**r / (k**r - 1)``."""
    size = k**r
    return int(d * int(squared_lee(k).sum()) * size // (k * (size - 1)))


def codewords(k: int, a: np.ndarray) -> np.ndarray:
    """All ``k**r`` codewords ``(k**r, d)`` int64 of ``G = [I_r | A]`` over ``Z_k``."""
    r = a.shape[0]
    coef = factorial_indices([k] * r)
    return np.concatenate([coef, (coef @ a) % k], axis=1)


def best_coset(
    k: int, words: np.ndarray, rng: np.random.Generator, tries: int
) -> tuple[np.ndarray, int]:
    """The coset ``(b + words) mod k`` of largest minimum squared distance
    (level-index units; ties: fewest pairs at that distance) among ``b = 0``
    and ``tries - 1`` seeded random shifts. Returns ``(points, d2)``; for
    codes too large to compare all pairs only ``b = 0`` is scored.
    """
    size = len(words)
    if size * (size - 1) // 2 > _PAIR_LIMIT:
        tries = 1
    best_pts: np.ndarray | None = None
    best_key: tuple[int, int] = (-1, 0)
    for t in range(max(1, tries)):
        b = np.zeros(words.shape[1], dtype=np.int64) if t == 0 else rng.integers(0, k, size=words.shape[1])
        pts = (words + b) % k
        if size < 2:
            return pts, 0
        d2 = pdist(pts, "sqeuclidean")
        low = int(round(d2.min()))
        key = (low, -int(np.count_nonzero(d2 < low + 0.5)))
        if key > best_key:
            best_pts, best_key = pts, key
    assert best_pts is not None
    return best_pts, best_key[0]
