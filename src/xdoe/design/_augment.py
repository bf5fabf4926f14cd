"""Sequential experimentation: the points of a block ``xgen augment`` adds
to a generated (and perhaps already run) design.

* ``foldover``: the mirror image of the two-level points (every sign
  reversed; with a factor, only its column), which de-aliases main effects
  from two-factor interactions (Box & Hunter 1961; Montgomery 2012, 8.5).
* ``axial``: ``2 k`` axial points at ``±alpha`` and centre points, turning a
  two-level factorial with centre points into a central composite design in
  two blocks (Box & Wilson 1951); alpha ``rotatable`` = ``F^(1/4)`` (``F``
  cube points), ``orthogonal`` = the orthogonal-blocking alpha
  ``sqrt(F (2 k + n_s0) / (2 (F + n_c0)))`` (Box & Hunter 1957; Montgomery
  2012, 11.4.3), or ``faced`` = 1.
* ``add``: ``n`` points chosen one at a time, each the candidate of a
  scrambled Sobol' set (``scipy.stats.qmc``, seeded from the document's seed
  and the block number) farthest from every point so far (greedy maximin).
* ``replicate``: copies of chosen design points, each run ``repetitions`` times.
* ``steepest_ascent``: the path of steepest ascent (or descent) of the
  fitted first-order model, ``confirm``: one point, the predicted optimum,
  run ``repetitions`` times; both placed by the model
  (:func:`xdoe.analysis._sequential.sequential_step`; Montgomery 2012,
  11.2), their coded points given in ``how`` (``{"coded": [{factor:
  value}]}``). A continuous factor moved past its range is widened like an
  axial point's (:func:`xdoe.design._classic.coded_design`); its coding
  (natural values at coded -1 and +1) stays the design's. A factor of two
  numeric levels listed low first moves as the range between them
  (:func:`movable_levels`); other factors with levels stay at a level.
* ``replicate_to``: no new point; repetitions ``r..N-1`` of every point that
  has ``r < N`` runs (``xgen augment --replicate-to N``, after ``xrun plan``):
  the new runs keep their points' indices and copies, so their seeds are
  those of the same document with ``repetitions: N`` (run numbers differ:
  they come after the existing runs).

This module makes a block's coded points (:func:`new_points`) and the design
of the points and blocks together (:func:`from_coded`); numbering the new runs
and recording the blocks in the manifest is the run-file writer's
(:mod:`xdoe.design.runfiles`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from xdoe.design._classic import coded_design
from xdoe.design._conditional import inactive_as_nan
from xdoe.design._factors import Factor
from xdoe.errors import InputError

__all__ = ["new_points", "movable_levels", "from_coded"]


def _cube(coded: np.ndarray) -> np.ndarray:
    return np.all(np.isin(coded, (-1.0, 1.0)), axis=1)


def _unique_rows(rows: np.ndarray) -> np.ndarray:
    seen, out = set(), []
    for r in rows:
        key = np.round(r, 9).tobytes()
        if key not in seen:
            seen.add(key)
            out.append(r)
    return np.array(out, float).reshape(-1, rows.shape[1])


def new_points(how: dict[str, Any], coded: np.ndarray, names: list[str], kinds: list[int], seed: int,
               block: int, *, factors: Sequence[Factor] = ()) -> np.ndarray:
    """The coded points of a new block.

    With conditional factors (``factors``, some with ``when``), the points
    respect the conditions as a generated design does
    (:func:`xdoe.design._conditional.inactive_as_nan`): an inactive factor
    is NaN in ``coded`` and in the block. ``add`` collapses its candidates
    before choosing (a copy of an existing point is never the farthest);
    ``replicate`` copies points as they are; ``confirm`` and
    ``steepest_ascent`` drop the values of factors their point leaves
    inactive (and need no value there); ``foldover`` and ``axial`` are
    refused (reversing or moving a parent changes which factors apply;
    :func:`xdoe.design.runfiles.augment_runs` names the factor and its
    condition first).

    Args:
        how: ``{"foldover": FACTOR or None}``, ``{"axial": {"alpha", "center"}}``,
            ``{"add": n}``, ``{"replicate": [points], "repetitions": k}``,
            ``{"steepest_ascent": {"steps", "coded": [{factor: value}], ...}}``
            or ``{"confirm": {"coded": {factor: value}, ...}, "repetitions": n}``.
        coded: ``(n, d)`` coded values of every design point so far.
        names: the factors; kinds: per factor 0 (continuous) or its number of levels.
        seed: the document's seed; block: the new block's number.
        factors: the design's factors when some are conditional (``when``);
            empty: no conditions.

    Returns:
        ``(m, d)`` coded points (NaN where a conditional factor is inactive).

    Raises:
        InputError: the design does not allow it (no two-level points to
            fold, a factor with levels for axial points, an unknown factor or point).
    """
    conditional = any(f.when for f in factors)
    if conditional and ("foldover" in how or "axial" in how):
        raise InputError(f"--{next(iter(how))} is not defined on a design with conditional factors")

    def inactive(rows: np.ndarray) -> np.ndarray:
        return inactive_as_nan(factors, rows) if conditional else rows

    if "foldover" in how:
        cube = _unique_rows(coded[_cube(coded)])
        if not len(cube):
            raise InputError("--foldover needs two-level design points (coded -1/+1 in every factor)")
        factor = how["foldover"]
        if factor is None:
            return -cube
        if factor not in names:
            raise InputError(f"--foldover {factor}: no such factor (factors: {', '.join(names)})")
        out = cube.copy()
        out[:, names.index(factor)] *= -1
        return out
    if "axial" in how:
        levels = [n for n, k in zip(names, kinds) if k]
        if levels:
            raise InputError(f"--axial needs continuous factors (range), but {levels[0]!r} has levels")
        cube = _unique_rows(coded[_cube(coded)])
        if not len(cube):
            raise InputError("--axial needs a two-level factorial (coded -1/+1 points) to add axial points to")
        d, f = coded.shape[1], len(cube)
        n_c0 = int(np.sum(np.all(coded == 0, axis=1)))
        spec = how["axial"]
        n_s0 = n_c0 if spec.get("center") is None else int(spec["center"])
        alpha = {"rotatable": f ** 0.25, "faced": 1.0,
                 "orthogonal": float(np.sqrt(f * (2 * d + n_s0) / (2 * (f + n_c0))))}[spec.get("alpha", "rotatable")]
        star = np.zeros((2 * d, d))
        for j in range(d):
            star[2 * j, j], star[2 * j + 1, j] = -alpha, alpha
        return np.vstack([star, np.zeros((n_s0, d))])
    if "add" in how:
        from scipy.stats import qmc

        n = int(how["add"])
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(24, block)))
        m = max(256, 64 * n)
        cand = 2 * qmc.Sobol(coded.shape[1], scramble=True, rng=rng).random(m) - 1
        for j, k in enumerate(kinds):
            if k:  # a categorical factor: its nearest level
                cand[:, j] = np.rint((cand[:, j] + 1) / 2 * (k - 1)) * 2 / (k - 1) - 1 if k > 1 else 0.0
        # an inactive factor (NaN) sits at coded -1, where a generated design's collapsed coordinate is
        cand = inactive(cand)
        rows, cand, coded = cand, np.nan_to_num(cand, nan=-1.0), np.nan_to_num(coded, nan=-1.0)
        span = np.maximum(np.ptp(coded, axis=0), 2.0) if len(coded) else np.full(coded.shape[1], 2.0)
        scaled = cand / span
        # each candidate's squared distance to its nearest point so far, updated point by point
        # (O(m d) memory and O(n m d) time, not a candidates x points matrix per step)
        d2 = np.full(m, np.inf)
        for row in coded / span:
            np.minimum(d2, ((scaled - row) ** 2).sum(axis=1), out=d2)
        chosen = []
        for _ in range(n):
            best = int(np.argmax(d2))
            chosen.append(rows[best])
            np.minimum(d2, ((scaled - scaled[best]) ** 2).sum(axis=1), out=d2)
        return np.array(chosen)
    if "replicate_to" in how:  # no new point: more repetitions of the existing ones
        return np.zeros((0, coded.shape[1]))
    for key in ("steepest_ascent", "confirm"):  # placed by the fitted model (xdoe.analysis._sequential)
        if key in how:
            given = how[key]["coded"]
            given = given if isinstance(given, list) else [given]
            rows = np.array([[np.nan if p.get(n) is None else float(p[n]) for n in names] for p in given],
                            float).reshape(-1, len(names))
            needed = ~np.isnan(inactive(np.where(np.isnan(rows), 0.0, rows)))  # the factors active there
            missing = [names[j] for j in np.nonzero((needed & np.isnan(rows)).any(axis=0))[0]]
            if missing:
                raise InputError(f"--{key.replace('_', '-')}: no coded value of factor {missing[0]!r}")
            return inactive(rows)
    points = how["replicate"]
    bad = [p for p in points if not 0 <= p < len(coded)]
    if bad:
        raise InputError(f"--replicate: no design point {bad[0]} (points 0..{len(coded) - 1})")
    return coded[points]


def movable_levels(levels: Sequence[Any] | None) -> bool:
    """Two numeric levels listed low first: a factor a path of steepest
    ascent may move off its levels (as the range ``[low, high]``)."""
    if levels is None or len(levels) != 2:
        return False
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in levels):
        return False
    return float(levels[0]) < float(levels[1])


def _movable(factor: Any, column: np.ndarray) -> Any:
    """``factor``, or -- a factor of two numeric levels, low first, that a
    block puts at coded values other than ±1 (a path of steepest ascent) --
    the continuous factor ``range: [low, high]`` (integer when both levels
    are), whose coded -1 and +1 are the same two levels."""
    if factor.levels is None or not movable_levels(factor.levels) or np.all(np.abs(np.abs(column) - 1) < 1e-9):
        return factor
    low, high = factor.levels
    return Factor(factor.name, low=low, high=high, integer=isinstance(low, int) and isinstance(high, int),
                  when=factor.when)


def from_coded(factors: Sequence[Factor], coded: np.ndarray) -> tuple[tuple[Factor, ...], np.ndarray, tuple[float, ...]]:
    """``(factors, points, scale)`` of the coded points of a design and its
    blocks (:func:`~xdoe.design._classic.coded_design`), a factor of two
    numeric levels moved off them where a block needs it (:func:`movable_levels`).

    Raises:
        DesignError: a factor with levels at a coded value none of its levels has.
    """
    coded = np.asarray(coded, float)
    return coded_design([_movable(f, coded[:, j]) for j, f in enumerate(factors)], coded)
