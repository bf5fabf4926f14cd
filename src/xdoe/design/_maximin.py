"""Maximin designs: space-filling point sets that maximise the minimum
pairwise distance in the unit cube (levels scaled as in ``Design.unit()``).

Two algorithms, chosen by the factors:

* **All factors categorical** -- a balanced subset of the full factorial
  (:func:`_categorical_maximin`), chosen by a *threshold ladder*: a
  *min-conflicts* local search with tabu (Minton et al. 1992, Artificial
  Intelligence 58) picks ``n`` points of a candidate *pool* whose level
  counts are balanced within one and whose pairwise distances all exceed the
  best minimum distance found so far; every success raises that threshold.
  A pool is skipped when its conflict graph provably has no ``n`` compatible
  points (vertex-cover bounds, :meth:`_Pool.may_hold`). The pools:

  1. *Code pools* (:mod:`xdoe.design._codes`) when the level counts share a
     divisor ``q >= 2``: the grid points whose residues mod ``q`` lie in a
     coset of a Z_q-linear code, i.e. Construction A (Conway & Sloane,
     *Sphere Packings, Lattices and Groups*, ch. 5) with codes of large
     squared-Lee (Euclidean) weight (Hammons et al. 1994, IEEE Trans. Inf.
     Theory 40, for Z4 codes). Every point pair is at least the code's
     minimum weight apart and every level is used equally often, so only the
     few points beyond ``n`` have to be dropped in a balanced way. With all
     level counts equal, a short ladder over the grid started from the best
     code design (``_REFINE_STEPS`` moves a rung) then looks for better.
  2. Otherwise (mixed level counts, or no usable code) the general search as
     well: pools are random lattice cosets ``{x : A x = b (mod m)}`` of the
     level grid and the full factorial itself (a seeded random sample of it
     when it exceeds ``_FULL_POOL_LIMIT`` points).

* **Some factor continuous** -- a maximin Latin hypercube optimised with the
  enhanced stochastic evolutionary algorithm (ESE) of Jin, Chen & Sudjianto
  (2005), "An efficient algorithm for constructing optimal design of computer
  experiments", J. Stat. Plann. Inference 134, 268-287
  (:func:`_ese`), minimising the phi_p criterion of Morris & Mitchell (1995)
  with ``p = 50`` and keeping the design of largest exact minimum distance.
  Continuous columns are cell centres ``(i + 0.5) / n``; categorical columns
  hold the balanced levels ``floor(i k / n)``. ESE only exchanges two entries
  of one column, so every column keeps its values: one point per cell and
  balanced levels by construction.

Every random choice comes from the ``seed`` argument; the budgets are
iteration counts, never wall-clock time, so results are reproducible.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from xdoe.design._codes import code_pools
from xdoe.design._common import balanced_levels, check_factors, check_n, pdist, rng_from, squareform
from xdoe.design._factorial import factorial_indices
from xdoe.design._factors import Factor
from xdoe.errors import DesignError

__all__ = ["maximin"]

_FULL_POOL_LIMIT = 1 << 17  # enumerate full factorials up to this many points
_SAMPLE_POOL = 1 << 14  # else search a random sample of this many points
_LATTICE_TRIES = 96  # random lattice cosets tried per design
_LATTICE_CAP = 8  # lattice pools hold at most this many times n points
_LATTICE_KEEP = 2  # best lattice pools of each size searched
_FALLBACK_POOL = 4096  # the min-conflicts search over the grid sees at most max(this, 8 n) points
_MATRIX_LIMIT = 2048  # pools up to this size get a pairwise distance matrix
_EPS = 1e-9
_CODE_LIMIT = 2048  # largest Z_k-linear code (points) used as a pool
_CODE_ITERATIONS = 200  # column replacements of the generator search
_COSET_TRIES = 8  # shifts b of the code compared
_REFINE_STEPS = 64  # moves per rung of the grid search started from a code design


def maximin(
    factors: Sequence[Factor],
    n: int,
    seed: np.random.SeedSequence | int = 0,
) -> np.ndarray:
    """A maximin design of ``n`` points over ``factors``.

    All categorical: ``n`` distinct points of the full factorial, level
    counts of every factor within one of each other, chosen to maximise the
    minimum distance of the unit-scaled levels (cosets of Z_k-linear codes
    -- Construction A, Conway & Sloane ch. 5 -- and lattice-coset pools plus
    a min-conflicts threshold search; see the module docstring). ``n`` equal
    to the full factorial size returns the full factorial. For example 50
    of the 4096 points of 6 factors x 4 levels reach minimum distance
    ``sqrt(6)/3 = 0.816``, 200 of them ``2/3``.

    Some factor continuous: an ESE-optimised maximin Latin hypercube
    (Jin, Chen & Sudjianto 2005) with continuous positions at cell centres
    ``(i + 0.5) / n`` and balanced categorical columns.

    Returns:
        ``(n, d)`` float64: level indices for categorical columns, unit
        positions for continuous ones. The same ``seed`` gives the same array.

    Raises:
        DesignError: ``n < 1``, or all factors categorical and ``n`` larger
            than the full factorial.
    """
    factors = check_factors(factors)
    n = check_n(n, "maximin")
    d = len(factors)
    if d == 0:
        return np.zeros((n, 0), dtype=np.float64)
    rng = rng_from(seed)
    if all(f.levels is not None for f in factors):
        ks = [len(f.levels) for f in factors]  # type: ignore[arg-type]
        return _categorical_maximin(ks, n, rng).astype(np.float64)
    return _mixed_maximin(factors, n, rng)


# --------------------------------------------------------------------------
# categorical: balanced maximin subset of the full factorial


def _unit_levels(idx: np.ndarray, ks: np.ndarray) -> np.ndarray:
    den = np.maximum(ks - 1, 1)
    return np.where(ks > 1, idx / den, 0.5)


def _categorical_maximin(ks: Sequence[int], n: int, rng: np.random.Generator) -> np.ndarray:
    """Level indices ``(n, d)`` (int64), rows sorted lexicographically."""
    total = full_size_from(ks)
    if n > total:
        raise DesignError(
            f"maximin cannot pick {n} distinct points from a full factorial of {total} points"
        )
    if n == total:
        return factorial_indices(ks)
    ks_arr = np.asarray(ks, dtype=np.int64)
    space = _LevelSpace(ks_arr, n)
    steps = max(64, n)
    best: np.ndarray | None = None  # level indices of the best balanced subset
    t_best = -1.0  # all pairwise squared unit distances must exceed this

    for pool in _code_pools(ks_arr, n, rng):
        first = 4 * steps if best is None else steps
        best, t_best = _ladder(pool, ks_arr, space, best, t_best, rng, first, steps)
    active = ks_arr[ks_arr > 1]
    same_k = len(active) > 0 and bool((active == active[0]).all())
    if best is not None and same_k:
        # equal level counts: the code designs are strong; a short grid
        # search started from the best one looks for a better design
        if math.isfinite(t_best):
            best, t_best = _refine(best, t_best, ks_arr, space, total, rng)
    else:
        # mixed level counts (or no code pool): the general search, which
        # only keeps designs better than a code design found above
        if total <= _FULL_POOL_LIMIT:
            grid = factorial_indices(ks)
        else:
            grid = _sample_grid(ks_arr, max(_SAMPLE_POOL, 4 * n), total, rng)
        units = _unit_levels(grid, ks_arr)
        pools = [grid[members] for members in _lattice_pools(grid, units, ks_arr, n, rng)]
        # the general fallback: the whole grid, or a random part of a large one
        fallback = max(_FALLBACK_POOL, 8 * n)
        if len(grid) <= fallback:
            pools.append(grid)
        else:
            pools.append(grid[np.sort(rng.choice(len(grid), size=fallback, replace=False))])
        for number, pool in enumerate(pools):
            # the grid pool gets a larger budget when no pool gave a balanced subset
            last_chance = best is None and number == len(pools) - 1
            best, t_best = _ladder(
                pool, ks_arr, space, best, t_best, rng, 4 * steps if last_chance else steps, steps
            )
    if best is None:
        # many factors: balance is hard for the subset search; fall back to
        # ESE over balanced columns (balanced by construction, phi_p pushes
        # coinciding points apart)
        out = _balanced_columns_maximin(ks_arr, n, rng)
    else:
        out = best
    order = np.lexsort(out.T[::-1])
    return out[order]


def _ladder(
    points: np.ndarray,
    ks: np.ndarray,
    space: _LevelSpace,
    best: np.ndarray | None,
    t_best: float,
    rng: np.random.Generator,
    first_steps: int,
    steps: int,
    start: np.ndarray | None = None,
) -> tuple[np.ndarray | None, float]:
    """Threshold ladder over one pool of candidate ``points`` (level indices):
    look for a balanced ``n``-subset whose pairwise squared unit distances
    all exceed ``t_best`` (``first_steps`` moves), and after each success
    raise ``t_best`` to the new minimum distance and look again (``steps``
    moves). Returns the best subset (or the given ``best``) and its threshold."""
    units = _unit_levels(points, ks)
    pool = _Pool(units, points + space.offsets)
    if not pool.may_hold(space.n, t_best):
        return best, t_best
    found = _find_subset(pool, space, t_best, rng, first_steps, start=start)
    while found is not None:
        best = points[found]
        t_best = float(pdist(units[found], "sqeuclidean").min()) + _EPS if space.n > 1 else math.inf
        if not math.isfinite(t_best) or not pool.may_hold(space.n, t_best):
            break
        found = _find_subset(pool, space, t_best, rng, steps, start=found)
    return best, t_best


def _code_pools(ks: np.ndarray, n: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Construction A pools (:func:`xdoe.design._codes.code_pools`) as
    candidate points ``(size, d)`` (level indices) when the level counts of
    the factors with more than one level have a common divisor ``q >= 2``
    (all equal, the common case, or e.g. 2, 4 and 6 levels); one-level
    factors stay at level 0. Empty otherwise."""
    active = np.flatnonzero(ks > 1)
    if n < 2 or len(active) < 2 or int(np.gcd.reduce(ks[active])) < 2:
        return []
    out = []
    for pts in code_pools(ks[active], n, rng, _CODE_LIMIT, _CODE_ITERATIONS, _COSET_TRIES):
        points = np.zeros((len(pts), len(ks)), dtype=np.int64)
        points[:, active] = pts
        out.append(points)
    return out


def _refine(
    best: np.ndarray,
    t_best: float,
    ks: np.ndarray,
    space: _LevelSpace,
    total: int,
    rng: np.random.Generator,
) -> tuple[np.ndarray, float]:
    """Min-conflicts search over the grid (or a seeded random part of it
    holding ``best``) started from ``best``, for a balanced subset whose
    pairwise distances all exceed ``t_best``; ``_REFINE_STEPS`` moves per rung."""
    size = max(_FALLBACK_POOL, 8 * space.n)
    if total <= size:
        pool = factorial_indices([int(k) for k in ks])
        radix = np.cumprod(np.concatenate([[1], ks[:0:-1]]))[::-1]  # product-order place values
        start = best @ radix
    else:
        sample = _sample_grid(ks, size, total, rng)
        taken = {row.tobytes() for row in best}
        sample = sample[[row.tobytes() not in taken for row in sample]]
        pool = np.concatenate([best, sample])
        start = np.arange(len(best))
    return _ladder(pool, ks, space, best, t_best, rng, _REFINE_STEPS, _REFINE_STEPS, start=start)


def _balanced_columns_maximin(ks: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    factors = [Factor(f"f{j}", levels=tuple(range(int(k)))) for j, k in enumerate(ks)]
    out = np.rint(_mixed_maximin(factors, n, rng)).astype(np.int64)
    if len(np.unique(out, axis=0)) < n:
        raise DesignError(f"maximin found no balanced set of {n} distinct points; lower max_runs")
    return out


def full_size_from(ks: Sequence[int]) -> int:
    return math.prod(int(k) for k in ks)


def _sample_grid(ks: np.ndarray, size: int, total: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` distinct random points of a full factorial too large to enumerate."""
    seen: set[bytes] = set()
    rows: list[np.ndarray] = []
    while len(rows) < size:
        batch = rng.integers(0, ks, size=(size, len(ks)), dtype=np.int64)
        for row in batch:
            key = row.tobytes()
            if key not in seen:
                seen.add(key)
                rows.append(row)
                if len(rows) == size:
                    break
    return np.array(rows, dtype=np.int64)


def _lattice_pools(
    grid: np.ndarray, units: np.ndarray, ks: np.ndarray, n: int, rng: np.random.Generator
) -> list[np.ndarray]:
    """Indices of the best random lattice cosets ``{x : A x = b (mod m)}`` of
    ``grid`` holding between ``n`` and ``4 n`` points, best minimum distance
    first (ties: smaller pool first)."""
    size = len(grid)
    if n < 2 or size < 2 * n:
        return []
    moduli = sorted({2} | {int(k) for k in ks if k > 1})
    cap = max(_LATTICE_CAP * n, 64)
    budget = size / n  # index of the sublattice: |pool| ~ size / budget >= n
    found: list[tuple[float, int, int, np.ndarray]] = []
    keys: set[bytes] = set()
    for attempt in range(_LATTICE_TRIES):
        m = moduli[int(rng.integers(len(moduli)))]
        divisors = [g for g in range(1, m) if m % g == 0]
        rows = []
        index = 1
        while True:
            fit = [g for g in divisors if index * (m // g) <= budget]
            if not fit:
                break
            g = fit[int(rng.integers(len(fit)))]
            rows.append(g * rng.integers(0, m // g, size=len(ks)))
            index *= m // g
        if not rows:
            continue
        a = np.array(rows, dtype=np.int64)
        residues = (grid @ a.T) % m
        target = residues[int(rng.integers(size))]
        members = np.flatnonzero((residues == target).all(axis=1))
        if not n <= len(members) <= cap:
            continue
        key = members.tobytes()
        if key in keys:
            continue
        keys.add(key)
        md = float(pdist(units[members], "sqeuclidean").min())
        found.append((-md, len(members), attempt, members))
    found.sort(key=lambda item: item[:3])
    # the best pools of each size: a larger pool of slightly smaller minimum
    # distance often holds a better n-subset than a tight pool
    chosen: list[np.ndarray] = []
    per_size: dict[int, int] = {}
    for item in found:
        if per_size.get(item[1], 0) < _LATTICE_KEEP:
            per_size[item[1]] = per_size.get(item[1], 0) + 1
            chosen.append(item[3])
    return chosen


class _LevelSpace:
    """Level bookkeeping: global level ids and balance bounds for ``n`` points."""

    def __init__(self, ks: np.ndarray, n: int) -> None:
        self.offsets = np.concatenate([[0], np.cumsum(ks)[:-1]]).astype(np.int64)
        self.n_levels = int(ks.sum())
        self.floor = np.repeat(n // ks, ks)
        self.ceil = np.repeat(-(-n // ks), ks)
        self.n = n


class _Pool:
    """Candidate points: unit coordinates and global level ids."""

    def __init__(self, units: np.ndarray, levels: np.ndarray) -> None:
        self.units = units
        self.levels = levels
        self.size = len(units)
        self.matrix = squareform(pdist(units, "sqeuclidean")) if self.size <= _MATRIX_LIMIT else None
        # large pools: single rows on demand as |u|^2 + |u_p|^2 - 2 u.u_p (one
        # matrix-vector product; rounding ~1e-15, far below the _EPS margin
        # of every threshold)
        self.norms = (units**2).sum(axis=1)
        self.columns = np.ascontiguousarray(units.T)
        self.level_columns = np.ascontiguousarray(levels.T)

    def level_sum(self, table: np.ndarray) -> np.ndarray:
        """``table[levels].sum(axis=1)`` for every pool point, column by
        column (numpy reduces a short last axis slowly)."""
        out = np.zeros(self.size, dtype=table.dtype)
        for col in self.level_columns:
            out += table[col]
        return out

    def may_hold(self, n: int, t: float) -> bool:
        """False when no ``n`` pool points can have all pairwise squared
        distances ``> t``: the conflict graph (pairs at ``<= t``) then has no
        independent set of ``n`` points, because its smallest vertex cover
        exceeds ``size - n`` (a cover needs at least edges / max degree
        points, and at least one point of each edge of a matching; Konig).
        Always True without a distance matrix."""
        if self.matrix is None or t < 0:
            return True
        conflict = self.matrix <= t
        np.fill_diagonal(conflict, False)
        degree = np.count_nonzero(conflict, axis=1)
        top = int(degree.max())
        spare = self.size - n  # points that may be left out
        if top == 0:
            return True
        if int(degree.sum()) / (2 * top) > spare:
            return False
        # a greedy maximal matching is a lower bound on every vertex cover
        free = np.ones(self.size, dtype=bool)
        matched = 0
        for v in np.argsort(degree, kind="stable"):
            if not free[v]:
                continue
            partners = np.flatnonzero(conflict[v] & free)
            if len(partners):
                free[v] = free[partners[0]] = False
                matched += 1
                if matched > spare:
                    return False
        return True

    def rows(self, ps: np.ndarray) -> np.ndarray:
        """Squared distances ``(len(ps), size)`` of the points ``ps`` to the pool."""
        if self.matrix is not None:
            return self.matrix[ps]
        out = np.zeros((len(ps), self.size))
        for col in self.columns:
            out += (col[ps][:, None] - col[None, :]) ** 2
        return out

    def row(self, p: int) -> np.ndarray:
        if self.matrix is not None:
            return self.matrix[p]
        return (self.norms + self.norms[p]) - 2.0 * (self.units @ self.units[p])


def _find_subset(
    pool: _Pool,
    space: _LevelSpace,
    t: float,
    rng: np.random.Generator,
    steps: int,
    start: np.ndarray | None = None,
    tenure: int = 10,
    noise: float = 0.1,
) -> np.ndarray | None:
    """Min-conflicts tabu search for ``space.n`` pool indices with balanced
    level counts and every pairwise squared distance ``> t``.

    Cost = number of conflicting pairs + level-count excess over the balance
    bounds. A move removes the member with the largest cost share (tabu:
    not one added in the last ``tenure`` moves; with probability ``noise`` a
    random offending member) and adds the non-member of least added cost
    (tabu: not one removed in the last ``tenure`` moves). Returns the indices
    or ``None`` after ``steps`` moves without reaching cost 0.
    """
    n, size = space.n, pool.size
    levels = pool.levels
    selected = np.zeros(size, dtype=bool)
    conflicts = np.zeros(size, dtype=np.int64)  # conflicting members of each candidate
    counts = np.zeros(space.n_levels, dtype=np.int64)
    members: list[int] = []

    def add(q: int) -> None:
        members.append(q)
        selected[q] = True
        hit = pool.row(q) <= t
        hit[q] = False
        conflicts[hit] += 1
        counts[levels[q]] += 1

    def remove(i: int) -> int:
        p = members[i]
        members[i] = members[-1]
        members.pop()
        selected[p] = False
        hit = pool.row(p) <= t
        hit[p] = False
        conflicts[hit] -= 1
        counts[levels[p]] -= 1
        return p

    def best_addition(blocked: np.ndarray | None) -> int:
        cost = (counts >= space.ceil).astype(np.float64) - (counts < space.floor)
        delta = conflicts + pool.level_sum(cost)
        delta[selected] = np.inf
        if blocked is not None:
            delta[blocked] = np.inf
            if not np.isfinite(delta).any():
                delta = conflicts + pool.level_sum(cost)
                delta[selected] = np.inf
        low = delta.min()
        ties = np.flatnonzero(delta == low)
        return int(ties[rng.integers(len(ties))])

    if start is not None and len(start):
        start = np.asarray(start, dtype=np.int64)
        hit = pool.rows(start) <= t  # all start rows at once
        hit[np.arange(len(start)), start] = False
        conflicts += np.count_nonzero(hit, axis=0)
        selected[start] = True
        members.extend(start.tolist())
        np.add.at(counts, levels[start].ravel(), 1)
    while len(members) < n:
        add(best_addition(None))
    no_add = np.full(size, -1, dtype=np.int64)
    no_remove = np.full(size, -1, dtype=np.int64)
    for step in range(steps + 1):
        current = np.fromiter(members, dtype=np.int64, count=n)
        own = conflicts[current]
        over = counts > space.ceil
        if not own.any() and not over.any() and not (counts < space.floor).any():
            return current
        if step == steps:
            break
        share = over.astype(np.float64) - (counts <= space.floor)
        gain = own + share[levels[current]].sum(axis=1)
        if rng.random() < noise:
            bad = np.flatnonzero((own > 0) | over[levels[current]].any(axis=1))
            i = int(bad[rng.integers(len(bad))]) if len(bad) else int(rng.integers(n))
        else:
            allowed = no_remove[current] <= step
            if allowed.any():
                gain = np.where(allowed, gain, -np.inf)
            top = gain.max()
            ties = np.flatnonzero(gain == top)
            i = int(ties[rng.integers(len(ties))])
        p = remove(i)
        no_add[p] = step + tenure
        q = best_addition(no_add > step)
        add(q)
        no_remove[q] = step + tenure
    return None


# --------------------------------------------------------------------------
# continuous or mixed: ESE-optimised maximin Latin hypercube


def _mixed_maximin(factors: Sequence[Factor], n: int, rng: np.random.Generator) -> np.ndarray:
    d = len(factors)
    columns = []  # sorted unit values of each column
    for f in factors:
        if f.levels is None:
            columns.append((np.arange(n) + 0.5) / n)
        else:
            k = len(f.levels)
            columns.append(_unit_levels(balanced_levels(n, k), np.array([k])))
    from scipy.stats import qmc  # imported when needed (slow to import)

    start_u = qmc.LatinHypercube(d, scramble=True, rng=rng).random(n)
    ranks = np.argsort(np.argsort(start_u, axis=0, kind="stable"), axis=0, kind="stable")
    x = np.column_stack([columns[j][ranks[:, j]] for j in range(d)])
    if n > 1:
        x = _ese(x, rng)
    out = x.copy()
    for j, f in enumerate(factors):
        if f.levels is not None:
            k = len(f.levels)
            out[:, j] = np.rint(x[:, j] * (k - 1)) if k > 1 else 0.0
    return out


def _ese(
    x: np.ndarray,
    rng: np.random.Generator,
    p: float = 50.0,
    outer: int = 60,
) -> np.ndarray:
    """Enhanced stochastic evolutionary algorithm (Jin, Chen & Sudjianto 2005).

    Minimises phi_p = (sum_{i<j} d_ij^-p)^(1/p) over designs obtained from
    ``x`` (shape ``(n, d)``) by exchanging two entries of one column. Inner
    loop: ``M`` iterations, each trying ``J`` random exchanges in the current
    column (cycled) and accepting the best if ``phi_new - phi <= Th * U(0,1)``;
    outer loop: the threshold ``Th`` (initially 0.005 phi) is lowered while
    improving and raised to escape local optima, with the paper's constants
    (J = min(ne/5, 50), M = min(2 ne d / J, 100), ne = n(n-1)/2). Distances of
    the two changed rows are updated incrementally, vectorised over the J
    exchanges. Returns the visited design of largest exact minimum distance
    (ties: lowest phi_p).
    """
    x = x.copy()
    n, d = x.shape
    ne = n * (n - 1) // 2
    n_try = max(1, min(ne // 5, 50))
    n_inner = max(1, min(2 * ne * d // n_try, 100))
    dist2 = squareform(pdist(x, "sqeuclidean"))
    upper = np.triu_indices(n, 1)
    ref2 = float(dist2[upper].min())
    if ref2 <= 0:
        ref2 = float(dist2[upper][dist2[upper] > 0].min()) if (dist2[upper] > 0).any() else 1.0
    floor2 = ref2 * 1e-4
    half = p / 2.0

    def terms(sq: np.ndarray) -> np.ndarray:
        return (np.maximum(sq, floor2) / ref2) ** (-half)

    def full_terms() -> tuple[np.ndarray, float]:
        t = terms(dist2)
        np.fill_diagonal(t, 0.0)
        return t, float(t.sum() / 2)

    term, total = full_terms()
    phi = total ** (1 / p)
    best_x, best_md, best_phi = x.copy(), float(dist2[upper].min()), phi
    best_phi_seen = phi
    threshold = 0.005 * phi
    rows = np.arange(n)
    for it in range(outer):
        before = best_phi_seen
        accepted = improved = 0
        for inner in range(n_inner):
            c = (it * n_inner + inner) % d
            i1 = rng.integers(n, size=n_try)
            i2 = rng.integers(n - 1, size=n_try)
            i2 += i2 >= i1
            col = x[:, c]
            a, b = col[i1], col[i2]
            change = (b[:, None] - col[None, :]) ** 2 - (a[:, None] - col[None, :]) ** 2
            new1 = dist2[i1] + change
            new2 = dist2[i2] - change
            fixed = (rows[None, :] == i1[:, None]) | (rows[None, :] == i2[:, None])
            old = term[i1].sum(axis=1) + term[i2].sum(axis=1) - 2 * term[i1, i2]
            t1 = np.where(fixed, 0.0, terms(new1))
            t2 = np.where(fixed, 0.0, terms(new2))
            cand = total - old + t1.sum(axis=1) + t2.sum(axis=1)
            k = int(np.argmin(cand))
            new_phi = max(float(cand[k]), 0.0) ** (1 / p)
            if new_phi - phi > threshold * rng.random():
                continue
            j1, j2 = int(i1[k]), int(i2[k])
            r1, r2 = new1[k], new2[k]
            keep = dist2[j1, j2]
            r1[j1], r1[j2], r2[j2], r2[j1] = 0.0, keep, 0.0, keep
            dist2[j1], dist2[:, j1], dist2[j2], dist2[:, j2] = r1, r1, r2, r2
            tr1, tr2 = t1[k], t2[k]
            tk = term[j1, j2]
            tr1[j1], tr1[j2], tr2[j2], tr2[j1] = 0.0, tk, 0.0, tk
            term[j1], term[:, j1], term[j2], term[:, j2] = tr1, tr1, tr2, tr2
            x[j1, c], x[j2, c] = x[j2, c], x[j1, c]
            total, phi = float(cand[k]), new_phi
            accepted += 1
            if phi < best_phi_seen:
                best_phi_seen = phi
                improved += 1
            md = float(dist2[upper].min())
            if md > best_md + 1e-15 or (md >= best_md - 1e-15 and phi < best_phi):
                best_x, best_md, best_phi = x.copy(), md, phi
        term, total = full_terms()  # drop accumulated rounding
        phi = total ** (1 / p)
        ratio = accepted / n_inner
        if best_phi_seen < before:  # improving process
            if ratio > 0.1 and improved < accepted:
                threshold *= 0.8
            elif ratio <= 0.1:
                threshold /= 0.8
        else:  # exploration process
            if ratio < 0.1:
                threshold /= 0.7
            elif ratio > 0.8:
                threshold *= 0.9
    return best_x
