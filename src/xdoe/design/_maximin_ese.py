"""Maximin Latin hypercubes for designs with a continuous factor: the
enhanced stochastic evolutionary algorithm (ESE) of Jin, Chen & Sudjianto
(2005), J. Stat. Plann. Inference 134, 268-287, minimising the phi_p criterion
of Morris & Mitchell (1995); see :mod:`xdoe.design._maximin`.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from xdoe.design._common import balanced_levels, pdist, squareform
from xdoe.design._factors import Factor
from xdoe.design._maximin_search import unit_levels


def mixed_maximin(factors: Sequence[Factor], n: int, rng: np.random.Generator) -> np.ndarray:
    d = len(factors)
    columns = []  # sorted unit values of each column
    for f in factors:
        if f.levels is None:
            columns.append((np.arange(n) + 0.5) / n)
        else:
            k = len(f.levels)
            columns.append(unit_levels(balanced_levels(n, k), np.array([k])))
    from scipy.stats import qmc  # imported when needed (slow to import)

    start_u = qmc.LatinHypercube(d, scramble=True, rng=rng).random(n)
    ranks = np.argsort(np.argsort(start_u, axis=0, kind="stable"), axis=0, kind="stable")
    x = np.column_stack([columns[j][ranks[:, j]] for j in range(d)])
    if n > 1:
        x = ese(x, rng)
    out = x.copy()
    for j, f in enumerate(factors):
        if f.levels is not None:
            k = len(f.levels)
            out[:, j] = np.rint(x[:, j] * (k - 1)) if k > 1 else 0.0
    return out


def ese(
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
