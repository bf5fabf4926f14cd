"""What a DoE user checks before spending compute: model matrix, D-efficiency,
the largest correlation between model terms, resolution and aliases.

* Model matrix (coded units): intercept; per factor its coded column
  (continuous and two-level factors), or ``k - 1`` sum-to-zero contrast
  columns (a categorical factor of ``k > 2`` levels); ``interactions`` adds
  products of two factors' columns, ``quadratic`` also the squares of
  continuous columns (Montgomery, *Design and Analysis of Experiments*, 8th
  ed. 2012, ch. 10-11).
* D-efficiency: ``100 det(X'X / n)^(1/p)`` (pydoe ``d_efficiency``), 100 for an
  orthogonal two-level design of the linear model; 0 when the model is not
  estimable.
* Largest correlation: the largest absolute Pearson correlation between two
  non-constant model columns (0 for an orthogonal design).
* Resolution of a regular two-level fraction: the length of the shortest word
  of its defining relation (the smallest set of columns whose product is
  constant), Box & Hunter 1961.
* Aliases up to two-factor interactions: every main effect and two-factor
  interaction with the terms whose contrast column equals (``B*C``) or
  negates (``-B*C``) its own; a non-regular design (Plackett-Burman) gets its
  partial aliases with the correlation coefficient.
"""

from __future__ import annotations

import itertools
import math
from typing import Any, Sequence

import numpy as np

__all__ = ["MODELS", "model_matrix", "d_efficiency", "max_correlation", "resolution", "aliases", "diagnostics"]

MODELS = ("linear", "interactions", "quadratic")
#: most subsets of columns searched for the shortest defining word
_WORD_SEARCH = 200_000


def _main_columns(coded: np.ndarray, kinds: Sequence[int], active: np.ndarray | None
                  ) -> list[tuple[int, str, np.ndarray]]:
    """``(factor index, suffix, column)`` of the main-effect columns."""
    out = []
    for j, k in enumerate(kinds):
        col = coded[:, j].copy()
        on = np.ones(len(col), bool) if active is None else active[:, j]
        if k <= 2:  # continuous (0) or two-level (2): the coded column
            out.append((j, "", np.where(on, col, 0.0)))
            continue
        index = np.rint((col + 1) / 2 * (k - 1)).astype(int)
        for level in range(k - 1):  # sum-to-zero contrasts
            c = np.where(index == level, 1.0, np.where(index == k - 1, -1.0, 0.0))
            out.append((j, f"[{level}]", np.where(on, c, 0.0)))
    return out


def model_matrix(coded: np.ndarray, names: Sequence[str], kinds: Sequence[int], model: str = "linear",
                 active: np.ndarray | None = None) -> tuple[np.ndarray, list[str]]:
    """``(X, terms)``: the ``(n, p)`` model matrix of a coded design and its term names.

    Args:
        coded: ``(n, d)`` coded values (``[-1, 1]`` cube; a categorical factor
            of ``k`` levels at ``2 i / (k - 1) - 1``).
        names: the factors' names.
        kinds: per factor ``0`` continuous, else its number of levels.
        model: ``linear``, ``interactions`` or ``quadratic``.
        active: ``(n, d)`` bool, a conditional factor's coordinate where it
            does not apply counts as ``0``.
    """
    n = coded.shape[0]
    mains = _main_columns(np.asarray(coded, float), kinds, active)
    cols, terms = [np.ones(n)], ["1"]
    for j, suffix, c in mains:
        cols.append(c)
        terms.append(names[j] + suffix)
    if model in ("interactions", "quadratic"):
        for (j1, s1, c1), (j2, s2, c2) in itertools.combinations(mains, 2):
            if j1 != j2:
                cols.append(c1 * c2)
                terms.append(f"{names[j1]}{s1}*{names[j2]}{s2}")
    if model == "quadratic":
        for j, suffix, c in mains:
            if kinds[j] == 0:
                cols.append(c * c)
                terms.append(f"{names[j]}^2")
    return np.column_stack(cols), terms


def d_efficiency(x: np.ndarray) -> float:
    """``100 det(X'X / n)^(1/p)`` (pydoe ``d_efficiency``); 0 for a singular
    information matrix or fewer runs than terms."""
    n, p = x.shape
    if n < p or np.linalg.matrix_rank(x) < p:
        return 0.0
    import pydoe

    return float(pydoe.d_efficiency(x))


def max_correlation(x: np.ndarray, terms: Sequence[str]) -> tuple[float, tuple[str, str] | None]:
    """The largest ``|r|`` between two non-constant columns of ``x`` (the
    intercept left out) and the pair of terms, ``(0.0, None)`` with fewer than two."""
    keep = [i for i in range(x.shape[1]) if terms[i] != "1" and np.ptp(x[:, i]) > 0]
    if len(keep) < 2:
        return 0.0, None
    r = np.abs(np.corrcoef(x[:, keep], rowvar=False))
    np.fill_diagonal(r, 0.0)
    i, j = np.unravel_index(int(np.argmax(r)), r.shape)
    if r[i, j] < 1e-12:
        return 0.0, None
    return float(r[i, j]), (terms[keep[i]], terms[keep[j]])


def _two_level_cube(coded: np.ndarray) -> np.ndarray | None:
    """The rows of ``coded`` at ±1 in every column (centre and axial points
    left out), ``None`` when there are none or a column is not two-level there."""
    rows = coded[np.all(np.isin(coded, (-1.0, 1.0)), axis=1)]
    if len(rows) == 0 or any(len(np.unique(rows[:, j])) != 2 for j in range(rows.shape[1])):
        return None
    return rows


def resolution(coded: np.ndarray) -> int | None:
    """The resolution of the two-level part of ``coded`` when it is a regular
    fraction (every product of columns is orthogonal to the others or
    constant): the fewest columns whose product is constant; ``None`` for a
    full factorial (no word), a non-regular design, or a search too large."""
    cube = _two_level_cube(np.asarray(coded, float))
    if cube is None:
        return None
    n, d = cube.shape
    bits = [sum(1 << int(i) for i in np.flatnonzero(cube[:, j] < 0)) for j in range(d)]  # Python ints: n may exceed 63
    full = (1 << n) - 1
    searched = 0
    for size in range(1, d + 1):
        for combo in itertools.combinations(range(d), size):
            searched += 1
            if searched > _WORD_SEARCH:
                return None
            x = 0
            for j in combo:
                x ^= bits[j]
            if x == 0 or x == full:
                return size
    return None


def aliases(coded: np.ndarray, names: Sequence[str]) -> dict[str, list[Any]]:
    """Per main effect and two-factor interaction (``"A"``, ``"A*B"``) the other
    terms of order at most two aliased with it in the two-level part of ``coded``:
    fully (``"B*C"``, ``"-B*C"``: equal or negated contrast) or, in a non-regular
    design, partially (``["B*C", -0.333]``: the correlation). Only terms with
    an alias are listed; empty without a two-level part."""
    cube = _two_level_cube(np.asarray(coded, float))
    if cube is None:
        return {}
    d = cube.shape[1]
    terms: list[tuple[str, np.ndarray]] = [(names[j], cube[:, j]) for j in range(d)]
    terms += [(f"{names[a]}*{names[b]}", cube[:, a] * cube[:, b]) for a, b in itertools.combinations(range(d), 2)]
    n = len(cube)
    mat = np.column_stack([c for _, c in terms])
    r = (mat.T @ mat) / n
    out: dict[str, list[Any]] = {}
    for i, (name, _) in enumerate(terms):
        row = []
        for j, (other, _) in enumerate(terms):
            if i == j or abs(r[i, j]) < 1e-9:
                continue
            if abs(abs(r[i, j]) - 1) < 1e-9:
                row.append(other if r[i, j] > 0 else f"-{other}")
            else:
                row.append([other, round(float(r[i, j]), 6)])
        if row:
            out[name] = row
    return out


def _figure(x: float) -> float | None:
    return None if not math.isfinite(x) else float(f"{x:.12g}")


def diagnostics(coded: np.ndarray, names: Sequence[str], kinds: Sequence[int], model: str,
                active: np.ndarray | None = None, *, two_level: bool = False, regular: bool = True) -> dict[str, Any]:
    """The dry-run and manifest figures of a design: ``model``, ``terms``
    (p), ``d_efficiency``, ``max_correlation`` with its ``correlated`` pair,
    and for a two-level design ``resolution`` and ``aliases``. A non-regular
    two-level design (``regular=False``: Plackett-Burman) has resolution 3
    by convention (main effects partially aliased with two-factor
    interactions; Montgomery 2012, 8.6.3)."""
    x, terms = model_matrix(coded, names, kinds, model, active)
    r, pair = max_correlation(x, terms)
    out: dict[str, Any] = {"model": model, "terms": len(terms), "d_efficiency": _figure(d_efficiency(x)),
                           "max_correlation": _figure(r), "correlated": list(pair) if pair else None}
    if two_level:
        out["resolution"] = resolution(coded) if regular else 3
        out["aliases"] = aliases(coded, names)
    return out
