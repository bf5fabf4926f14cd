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

:func:`search_generator` finds a good ``A`` by a seeded column-exchange
search (a fixed iteration budget, never wall-clock time, so the same
generator state gives the same code). :func:`code_pools` extends the idea
to a ring ``Z_q`` with ``q`` dividing the level counts (Construction A over
``Z_q``: each residue is lifted to its ``k / q`` levels; points that share
residues are at least ``q`` apart in some coordinate), picks the shift ``b``
of largest true minimum distance among a few seeded candidates and returns
the candidate pools used by :func:`xdoe.design.maximin`.
"""

from __future__ import annotations

import math

import numpy as np

from xdoe.design._common import factorial_indices, pdist

__all__ = ["squared_lee", "code_rank", "search_generator", "codewords", "lattice_points", "code_pools"]

_PAIR_LIMIT = 1 << 20  # pairs of points compared (pdist) to choose a coset shift


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


def lattice_points(ks: np.ndarray, q: int, words: np.ndarray, shift: np.ndarray) -> np.ndarray:
    """Grid points ``x`` (``0 <= x_i < ks[i]``) with ``x mod q`` in the coset
    ``(shift + words) mod q`` of a Z_q code (``q`` divides every ``ks[i]``):
    shape ``(len(words) * prod(ks // q), d)`` int64, each residue ``rho`` of
    coordinate ``i`` lifted to its ``ks[i] // q`` levels ``rho, rho + q, ...``
    (when every ``ks[i] == q``, the coset itself)."""
    residues = (words + shift) % q
    if (ks == q).all():
        return residues
    d = words.shape[1]
    lifts = factorial_indices([int(k) // q for k in ks]) * q
    return (residues[:, None, :] + lifts[None, :, :]).reshape(-1, d)


def code_pools(
    ks: np.ndarray,
    n: int,
    rng: np.random.Generator,
    limit: int,
    iterations: int,
    tries: int,
) -> list[np.ndarray]:
    """Candidate point sets ``(size, d)`` (level indices, ``n <= size <=
    limit``) of the grid ``0 <= x_i < ks[i]`` (every ``ks[i] >= 2``) from
    Construction A over ``Z_q`` for every common divisor ``q >= 2`` of the
    level counts: the grid points whose residues mod ``q`` lie in a coset of
    a Z_q-linear code ``C`` of the smallest rank ``r >= 1`` with
    ``q**r prod(ks / q) >= n`` (and ``r < d``; rank 0 would leave levels
    unused). Two points differ by a non-zero codeword mod ``q`` (squared
    distance in level units at least its squared-Lee weight) or by a
    non-zero multiple of ``q`` (at least ``q**2``), so the minimum squared
    level distance is at least ``min(w(C), q**2)`` -- ``w(C)`` when every
    ``ks[i] == q`` -- and every level of every coordinate is used equally
    often. ``C`` comes from :func:`search_generator` (``iterations`` column
    replacements), the shift from ``tries`` seeded candidates scored by
    their true minimum distance after scaling levels to ``[0, 1]`` (ties:
    fewest pairs at it). Returns one pool per usable ``q``, ascending ``q``.
    """
    ks = np.asarray(ks, dtype=np.int64)
    d = len(ks)
    scale = 1.0 / (ks - 1)
    common = int(np.gcd.reduce(ks))
    pools: list[np.ndarray] = []
    for q in range(2, common + 1):
        if common % q:
            continue
        lift = math.prod(int(k) // q for k in ks)
        if lift > limit:
            continue
        r = max(1, code_rank(q, -(-n // lift)))
        if r >= d or lift * q**r > limit:
            continue
        a, _ = search_generator(q, d, r, rng, iterations)
        words = codewords(q, a)
        size = lift * len(words)
        pairs = size * (size - 1) // 2
        best: np.ndarray | None = None
        best_key: tuple[float, int] = (-1.0, 0)
        for t in range(max(1, min(tries, _PAIR_LIMIT // max(pairs, 1)))):
            shift = np.zeros(d, dtype=np.int64) if t == 0 else rng.integers(0, q, size=d)
            points = lattice_points(ks, q, words, shift)
            d2 = pdist(points * scale, "sqeuclidean")
            low = float(d2.min())
            key = (round(low, 9), -int(np.count_nonzero(d2 < low + 1e-9)))
            if key > best_key:
                best, best_key = points, key
        assert best is not None
        pools.append(best)
    return pools
