"""D-optimal designs by Fedorov's exchange algorithm over a candidate set.

Our own code, because pydoe's ``optimal_design`` builds polynomial models of
numeric factors only: it has no contrast coding of categorical factors, no
interactions-only model and no conditional factors, and its exchange
algorithms draw from numpy's global random state. Here the candidate set is
every valid combination (conditional factors collapsed,
:func:`~xdoe.design._conditional.apply_conditions`) of the categorical levels
and, for continuous factors, the coded values ``-1, 1`` (``-1, 0, 1`` for
the quadratic model); the model matrix is
:func:`~xdoe.design._diagnostics.model_matrix`.

Algorithm (Fedorov 1972, *Theory of Optimal Experiments*; Atkinson, Donev &
Tobias 2007, *Optimum Experimental Designs, with SAS*, ch. 12): from a
seeded random start of ``runs`` distinct candidates, repeatedly make the
exchange of a design point ``i`` for a candidate ``j`` that multiplies
``det(X'X)`` by the most, ``1 + Delta(i, j)`` with
``Delta = d(j) - d(i) - d(i) d(j) + d(i, j)^2`` and ``d(a, b) = x_a' (X'X)^-1 x_b``,
until no exchange gains more than ``1e-9``; the best of a few starts is kept.
Tests check the result against the D-efficiency of the known optimum (the
two-level full factorial / fraction for the linear model).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np

from xdoe.design._conditional import apply_conditions
from xdoe.design._diagnostics import model_matrix
from xdoe.design._common import check_factors, factorial_indices, rng_from, size_of, spec_of
from xdoe.design._design import Design
from xdoe.design._factors import Factor
from xdoe.errors import DesignError

if TYPE_CHECKING:
    from xdoe.documents import DesignSpec

__all__ = ["d_optimal", "candidates", "MAX_CANDIDATES"]

MAX_CANDIDATES = 100_000
STARTS = 4


def kinds_of(factors: Sequence[Factor]) -> list[int]:
    """Per factor ``0`` (continuous) or its number of levels."""
    return [0 if f.levels is None else len(f.levels) for f in factors]


def candidates(factors: Sequence[Factor], model: str) -> tuple[np.ndarray, np.ndarray]:
    """``(points, active)`` of every valid combination: level indices and, for
    continuous factors, unit positions ``0, 1`` (``0, 0.5, 1`` for ``quadratic``).

    Raises:
        DesignError: more than :data:`MAX_CANDIDATES` combinations.
    """
    grids = [np.arange(len(f.levels), dtype=float) if f.levels is not None
             else (np.array([0.0, 0.5, 1.0]) if model == "quadratic" else np.array([0.0, 1.0])) for f in factors]
    size = int(np.prod([len(g) for g in grids]))
    if size > MAX_CANDIDATES:
        raise DesignError(f"d_optimal: {size} candidate combinations > {MAX_CANDIDATES}; use fewer factors or levels")
    index = factorial_indices([len(g) for g in grids])
    points = np.column_stack([grids[j][index[:, j]] for j in range(len(grids))]) if grids else np.zeros((1, 0))
    if any(f.when for f in factors):
        return apply_conditions(factors, points)
    return points, np.ones(points.shape, dtype=bool)


def coded_of(factors: Sequence[Factor], points: np.ndarray) -> np.ndarray:
    """Coded values (``2 u - 1``; level ``i`` of ``k`` at ``2 i / (k - 1) - 1``)."""
    out = np.array(points, float, copy=True)
    for j, f in enumerate(factors):
        if f.levels is not None:
            k = len(f.levels)
            out[:, j] = out[:, j] / (k - 1) if k > 1 else 0.5
    return 2 * out - 1


def _exchange(x: np.ndarray, start: np.ndarray) -> tuple[np.ndarray, float]:
    chosen = start.copy()
    p = x.shape[1]
    for _ in range(50 * len(chosen)):
        xd = x[chosen]
        m = xd.T @ xd
        sign, logdet = np.linalg.slogdet(m)
        if sign <= 0:
            m = m + 1e-8 * np.eye(p)  # a singular start: a ridge until the exchanges make it regular
        inv = np.linalg.inv(m)
        dj = np.einsum("ij,jk,ik->i", x, inv, x)  # d(j) of every candidate
        dij = xd @ inv @ x.T  # d(i, j): design point x candidate
        di = dj[chosen]
        delta = dj[None, :] - di[:, None] - di[:, None] * dj[None, :] + dij**2
        delta[:, chosen] = -np.inf  # distinct points
        i, j = np.unravel_index(int(np.argmax(delta)), delta.shape)
        if delta[i, j] <= 1e-9:
            break
        chosen[i] = j
    sign, logdet = np.linalg.slogdet(x[chosen].T @ x[chosen])
    return chosen, (logdet if sign > 0 else -np.inf)


def d_optimal(factors: Sequence[Factor], spec: DesignSpec | Mapping[str, Any] | None = None,
              seed: np.random.SeedSequence | int = 0) -> Design:
    """A D-optimal design (Fedorov 1972; Atkinson, Donev & Tobias 2007, ch.
    12): ``runs`` distinct points of every valid combination that maximise
    ``det(X'X)`` of the ``model`` (``linear``, ``interactions`` or
    ``quadratic``, default linear), best of four seeded exchange starts.

    Args:
        factors: the factors (conditional factors collapsed in the candidates).
        spec: ``{"runs": N, "model": M}``; ``runs`` is required.
        seed: int or ``SeedSequence`` driving the random starts.

    Returns:
        A :class:`~xdoe.design.Design` (method ``d_optimal``): ``(runs, d)``
        level indices / unit positions and the active mask, in candidate
        order; ``info`` ``{"model": M}``.

    Raises:
        DesignError: no ``runs``, fewer runs than model terms, more runs than
            candidates, or too many candidates.
    """
    factors = check_factors(factors)
    spec = spec_of("d_optimal", spec)
    runs, model = size_of(spec, "runs"), spec.get("model", "linear")
    pts, active = candidates(factors, model)
    kinds = kinds_of(factors)
    x, terms = model_matrix(coded_of(factors, pts), [f.name for f in factors], kinds, model, active)
    if runs < len(terms):
        raise DesignError(f"d_optimal: the {model} model has {len(terms)} terms; runs must be at least that, "
                          f"got {runs}")
    if runs > len(pts):
        raise DesignError(f"d_optimal: runs {runs} > the {len(pts)} valid candidate combinations")
    rng = rng_from(seed)
    best, best_det = None, -np.inf
    for _ in range(STARTS):
        chosen, logdet = _exchange(x, rng.choice(len(pts), size=runs, replace=False))
        if logdet > best_det + 1e-9:
            best, best_det = chosen, logdet
    if best is None or not np.isfinite(best_det):
        raise DesignError(f"d_optimal: the {model} model is not estimable from the candidates in {runs} runs")
    order = np.sort(best)
    return Design(factors, "d_optimal", f"d_optimal: {runs} runs for the {model} model (Fedorov exchange over every "
                  "valid combination)", pts[order], active[order], info={"model": model})
