"""The min-conflicts subset search behind categorical maximin designs
(:mod:`xdoe.design._maximin`): candidate *pools* (a seeded random sample of a
large grid, random lattice cosets ``{x : A x = b (mod m)}``), level balance
bookkeeping and the tabu min-conflicts search for a balanced ``n``-subset whose
pairwise distances all exceed a threshold (Minton et al. 1992, Artificial
Intelligence 58). Every random choice comes from the ``rng`` argument.
"""

from __future__ import annotations

import numpy as np

from xdoe.design._common import pdist, squareform

_LATTICE_TRIES = 96  # random lattice cosets tried per design
_LATTICE_CAP = 8  # lattice pools hold at most this many times n points
_LATTICE_KEEP = 2  # best lattice pools of each size searched
_MATRIX_LIMIT = 2048  # pools up to this size get a pairwise distance matrix
EPS = 1e-9


def unit_levels(idx: np.ndarray, ks: np.ndarray) -> np.ndarray:
    den = np.maximum(ks - 1, 1)
    return np.where(ks > 1, idx / den, 0.5)


def sample_grid(ks: np.ndarray, size: int, total: int, rng: np.random.Generator) -> np.ndarray:
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


def lattice_pools(
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


class LevelSpace:
    """Level bookkeeping: global level ids and balance bounds for ``n`` points."""

    def __init__(self, ks: np.ndarray, n: int) -> None:
        self.offsets = np.concatenate([[0], np.cumsum(ks)[:-1]]).astype(np.int64)
        self.n_levels = int(ks.sum())
        self.floor = np.repeat(n // ks, ks)
        self.ceil = np.repeat(-(-n // ks), ks)
        self.n = n


class Pool:
    """Candidate points: unit coordinates and global level ids."""

    def __init__(self, units: np.ndarray, levels: np.ndarray) -> None:
        self.units = units
        self.levels = levels
        self.size = len(units)
        self.matrix = squareform(pdist(units, "sqeuclidean")) if self.size <= _MATRIX_LIMIT else None
        # large pools: single rows on demand as |u|^2 + |u_p|^2 - 2 u.u_p (one
        # matrix-vector product; rounding ~1e-15, far below the EPS margin
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


def find_subset(
    pool: Pool,
    space: LevelSpace,
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
