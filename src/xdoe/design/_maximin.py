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
  points (vertex-cover bounds, :meth:`xdoe.design._maximin_search.Pool.may_hold`). The pools:

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
  (:func:`xdoe.design._maximin_ese.ese`), minimising the phi_p criterion of Morris & Mitchell (1995)
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
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np

from xdoe.design._codes import code_pools
from xdoe.design._common import check_factors, check_n, factorial_indices, pdist, rng_from, size_of, spec_of
from xdoe.design._design import Design
from xdoe.design._factors import Factor
from xdoe.design._maximin_ese import mixed_maximin
from xdoe.design._maximin_search import (
    EPS,
    find_subset,
    lattice_pools,
    LevelSpace,
    Pool,
    sample_grid,
    unit_levels,
)
from xdoe.errors import DesignError

if TYPE_CHECKING:
    from xdoe.documents import DesignSpec

__all__ = ["maximin"]

_FULL_POOL_LIMIT = 1 << 17  # enumerate full factorials up to this many points
_SAMPLE_POOL = 1 << 14  # else search a random sample of this many points
_FALLBACK_POOL = 4096  # the min-conflicts search over the grid sees at most max(this, 8 n) points
_CODE_LIMIT = 2048  # largest Z_k-linear code (points) used as a pool
_CODE_ITERATIONS = 200  # column replacements of the generator search
_COSET_TRIES = 8  # shifts b of the code compared
_REFINE_STEPS = 64  # moves per rung of the grid search started from a code design


def maximin(
    factors: Sequence[Factor],
    spec: DesignSpec | Mapping[str, Any] | None = None,
    seed: np.random.SeedSequence | int = 0,
) -> Design:
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

    Args:
        factors: the factors (unique names).
        spec: ``{"n": N}``, the number of points (required).
        seed: int or ``SeedSequence``; the same seed gives the same design.

    Returns:
        A :class:`~xdoe.design.Design` (method ``maximin``); ``points``
        ``(n, d)`` float64: level indices for categorical columns, unit
        positions for continuous ones.

    Raises:
        DesignError: no ``n``, ``n < 1``, or all factors categorical and
            ``n`` larger than the full factorial.
    """
    factors = check_factors(factors)
    n = check_n(size_of(spec_of("maximin", spec)), "maximin")
    return Design(factors, "maximin", f"maximin design of {n} points", maximin_points(factors, n, seed))


def maximin_points(factors: tuple[Factor, ...], n: int, seed: np.random.SeedSequence | int) -> np.ndarray:
    """The ``(n, d)`` points of :func:`maximin`."""
    d = len(factors)
    if d == 0:
        return np.zeros((n, 0), dtype=np.float64)
    rng = rng_from(seed)
    if all(f.levels is not None for f in factors):
        ks = [len(f.levels) for f in factors]  # type: ignore[arg-type]
        return _categorical_maximin(ks, n, rng).astype(np.float64)
    return mixed_maximin(factors, n, rng)


# --------------------------------------------------------------------------
# categorical: balanced maximin subset of the full factorial


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
    space = LevelSpace(ks_arr, n)
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
            grid = sample_grid(ks_arr, max(_SAMPLE_POOL, 4 * n), total, rng)
        units = unit_levels(grid, ks_arr)
        pools = [grid[members] for members in lattice_pools(grid, units, ks_arr, n, rng)]
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
    space: LevelSpace,
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
    units = unit_levels(points, ks)
    pool = Pool(units, points + space.offsets)
    if not pool.may_hold(space.n, t_best):
        return best, t_best
    found = find_subset(pool, space, t_best, rng, first_steps, start=start)
    while found is not None:
        best = points[found]
        t_best = float(pdist(units[found], "sqeuclidean").min()) + EPS if space.n > 1 else math.inf
        if not math.isfinite(t_best) or not pool.may_hold(space.n, t_best):
            break
        found = find_subset(pool, space, t_best, rng, steps, start=found)
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
    space: LevelSpace,
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
        sample = sample_grid(ks, size, total, rng)
        taken = {row.tobytes() for row in best}
        sample = sample[[row.tobytes() not in taken for row in sample]]
        pool = np.concatenate([best, sample])
        start = np.arange(len(best))
    return _ladder(pool, ks, space, best, t_best, rng, _REFINE_STEPS, _REFINE_STEPS, start=start)


def _balanced_columns_maximin(ks: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    factors = [Factor(f"f{j}", levels=tuple(range(int(k)))) for j, k in enumerate(ks)]
    out = np.rint(mixed_maximin(factors, n, rng)).astype(np.int64)
    if len(np.unique(out, axis=0)) < n:
        raise DesignError(f"maximin found no balanced set of {n} distinct points; lower max_runs")
    return out


def full_size_from(ks: Sequence[int]) -> int:
    return math.prod(int(k) for k in ks)
