"""Sequential experimentation: ``xgen augment`` adds a block of design points
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

Existing run files are never rewritten: the new runs are numbered after the
existing ones (run ``first_run + repetition * points + i`` of the block),
their design points after the existing points; a copy of an existing point
gets a seed of its own (:func:`xdoe.design._seeds.seed_levels`). The blocks
are recorded in the manifest (``design.doe.info.blocks``), so a later
``xgen generate`` of the same document into the folder keeps them, and the
analysis adds a block factor.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from xdoe.errors import InputError

__all__ = ["AugmentedRuns", "augment_runs", "with_blocks", "new_points"]


def _read_manifest(runs: Any, output: Path) -> dict | None:
    from xdoe.design._extend import layout_for

    layout = layout_for(Path(output), runs.layout)
    path = Path(output) / layout.manifest
    if not path.is_file():
        return None
    return json.loads(path.read_text(encoding="utf-8"))


def _blocks(manifest: dict | None) -> list[dict]:
    doe = ((manifest or {}).get("design") or {}).get("doe") or {}
    return list((doe.get("info") or {}).get("blocks") or [])


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
               block: int) -> np.ndarray:
    """The coded points of a new block.

    Args:
        how: ``{"foldover": FACTOR or None}``, ``{"axial": {"alpha", "center"}}``,
            ``{"add": n}``, ``{"replicate": [points], "repetitions": k}``,
            ``{"steepest_ascent": {"steps", "coded": [{factor: value}], ...}}``
            or ``{"confirm": {"coded": {factor: value}, ...}, "repetitions": n}``.
        coded: ``(n, d)`` coded values of every design point so far.
        names: the factors; kinds: per factor 0 (continuous) or its number of levels.
        seed: the document's seed; block: the new block's number.

    Raises:
        InputError: the design does not allow it (no two-level points to
            fold, a factor with levels for axial points, an unknown factor or point).
    """
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
            chosen.append(cand[best])
            np.minimum(d2, ((scaled - scaled[best]) ** 2).sum(axis=1), out=d2)
        return np.array(chosen)
    if "replicate_to" in how:  # no new point: more repetitions of the existing ones
        return np.zeros((0, coded.shape[1]))
    for key in ("steepest_ascent", "confirm"):  # placed by the fitted model (xdoe.analysis._sequential)
        if key in how:
            given = how[key]["coded"]
            given = given if isinstance(given, list) else [given]
            missing = [n for n in names if any(n not in p for p in given)]
            if missing:
                raise InputError(f"--{key.replace('_', '-')}: no coded value of factor {missing[0]!r}")
            return np.array([[float(p[n]) for n in names] for p in given], float).reshape(-1, len(names))
    points = how["replicate"]
    bad = [p for p in points if not 0 <= p < len(coded)]
    if bad:
        raise InputError(f"--replicate: no design point {bad[0]} (points 0..{len(coded) - 1})")
    return coded[points]


def _block_bound(how: dict[str, Any], points: int, d: int) -> tuple[str, int]:
    """The option that makes a block and the most points it can add, from
    ``how`` alone: ``--add N`` N, ``--replicate`` one per index, ``--axial``
    ``2 d`` plus its centre points (at most as many as the design has, unless
    ``--center``), ``--foldover`` at most one per design point."""
    if "add" in how:
        return f"--add {how['add']}", int(how["add"])
    if "steepest_ascent" in how:
        steps = int(how["steepest_ascent"]["steps"])
        return f"--steepest-ascent {steps}", steps
    if "confirm" in how:
        return f"--confirm {how.get('repetitions', 1)}", 1
    if "replicate" in how:
        return f"--replicate ({len(how['replicate'])} points)", len(how["replicate"])
    if "axial" in how:
        center = how["axial"].get("center")
        if center is not None:
            return f"--axial --center {center}", 2 * d + int(center)
        return "--axial", 2 * d + points
    return "--foldover", points


def _refuse_too_large(how: dict[str, Any], current: Any, d: int, limit: int, made: int | None = None) -> None:
    """Refuse a block whose runs, with the existing ones, exceed ``limit``
    (``made``: the points the block has, once made)."""
    if "replicate_to" in how:
        n = int(how["replicate_to"])
        added = sum(points * (n - reps) for _, points, reps in point_segments(current.blocks) if reps < n)
        if not added:
            raise InputError(f"--replicate-to {n}: every design point already has {n} or more runs; nothing to add")
        if len(current) + added <= limit:
            return
        raise InputError(f"--replicate-to {n}: {added} new runs; with the {len(current)} existing runs, "
                         f"{len(current) + added} in all, which exceeds max_total_runs {limit}; replicate to fewer, "
                         "or raise max_total_runs (xgen augment --max-total-runs) if you mean it")
    option, points = _block_bound(how, current.n_points, d)
    points = points if made is None else made
    reps = int(how.get("repetitions", current.repetitions))
    added = points * reps
    total = len(current) + added
    if total <= limit:
        return
    raise InputError(f"{option}: {points} new design points x {reps} repetition(s) = {added} runs; with the "
                     f"{len(current)} existing runs, {total} in all, which exceeds max_total_runs {limit}; add fewer points "
                     "or repetitions, or raise max_total_runs (xgen augment --max-total-runs) if you mean it")


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
    from xdoe.design._factors import Factor

    if factor.levels is None or not movable_levels(factor.levels) or np.all(np.abs(np.abs(column) - 1) < 1e-9):
        return factor
    low, high = factor.levels
    return Factor(factor.name, low=low, high=high, integer=isinstance(low, int) and isinstance(high, int),
                  when=factor.when)


def point_segments(records: list[dict]) -> list[tuple[int, int, int]]:
    """``(first point, points, repetitions)`` of each block that added points
    (the design first), its repetitions raised by later ``--replicate-to`` blocks."""
    out: list[list[int]] = []
    for r in records:
        how = r["how"]
        if isinstance(how, dict) and "replicate_to" in how:
            for seg in out:
                seg[2] = max(seg[2], int(how["replicate_to"]))
        else:
            out.append([int(r["first_point"]), int(r["points"]), int(r["repetitions"])])
    return [(a, b, c) for a, b, c in out]


class AugmentedRuns(Sequence):
    """The runs of a design and the blocks added to it: the design's own runs
    first (unchanged), then each block's (:class:`~xdoe.design.RunSequence`
    with its run and point offsets). ``design`` is the combined design (all
    points; the manifest's ``doe`` lists the blocks)."""

    def __init__(self, base: Any, blocks: list[tuple[dict, np.ndarray]]) -> None:
        from xdoe.design._classic import coded_design
        from xdoe.design._expand import factors_of
        from xdoe.design._design import Design

        sequence = type(base)  # xdoe.design.RunSequence (not imported: it imports this module)
        self.base = base
        self.experiment = base.experiment
        self.layout = base.layout
        self.repetitions = base.repetitions
        design = base.design
        # a full factorial (Design.grid) builds its arrays on first use: every point active
        if not design.is_grid and bool(np.any(~design.active)):
            raise InputError("xgen augment: a design with conditional factors cannot be augmented")
        width = len(design.factors)
        coded = [design.coded()] + [np.asarray(c, float).reshape(-1, width) for _, c in blocks]
        all_coded = np.vstack(coded)
        originals = {f.name: f for f in factors_of(self.experiment)}
        factors, points, scale = coded_design([_movable(originals[f.name], all_coded[:, j])
                                               for j, f in enumerate(design.factors)], all_coded)
        method = design.method
        records = [{"block": 0, "first_point": 0, "points": len(design), "first_run": 0, "runs": len(base),
                    "repetitions": base.repetitions, "how": "design"}]
        self.segments: list[tuple[int, Any]] = [(0, base)]
        # per block of points: [its design, first point, copies, repetitions so far] (for --replicate-to)
        parts: list[list[Any]] = [[design, 0, base._copies, base.repetitions]]
        first_point, first_run = len(design), len(base)
        seen: dict[bytes, int] = {}
        for row in np.round(design.coded(), 9):
            seen[row.tobytes()] = seen.get(row.tobytes(), 0) + 1
        for b, (how, block_coded) in enumerate(blocks, 1):
            if "replicate_to" in how:  # repetitions r..N-1 of every point with r < N: the seeds of `repetitions: N`
                n, start = int(how["replicate_to"]), first_run
                for entry in parts:
                    part_design, part_first, part_copies, reps = entry
                    if reps >= n:
                        continue
                    seq = sequence(self.experiment, part_design, repetitions=n, first_run=first_run,
                                   first_point=part_first, copies=part_copies, first_repetition=reps)
                    self.segments.append((first_run, seq))
                    first_run += len(seq)
                    entry[3] = n
                records.append({"block": b, "first_point": first_point, "points": 0, "first_run": start,
                                "runs": first_run - start, "repetitions": n, "how": how})
                continue
            if "axial" in how:
                method = "central_composite"
            n = len(block_coded)
            part = Design(factors, method, f"block {b}", points[first_point:first_point + n], None, scale,
                          design.info)
            copies = {}
            for i, row in enumerate(np.round(block_coded, 9)):
                key = row.tobytes()
                if seen.get(key):
                    copies[i] = seen[key]
                seen[key] = seen.get(key, 0) + 1
            reps = int(how.get("repetitions", base.repetitions))
            seq = sequence(self.experiment, part, repetitions=reps, first_run=first_run, first_point=first_point,
                              copies=copies)
            records.append({"block": b, "first_point": first_point, "points": n, "first_run": first_run,
                            "runs": len(seq), "repetitions": reps, "how": how})
            self.segments.append((first_run, seq))
            parts.append([part, first_point, copies, reps])
            first_point += n
            first_run += len(seq)
        info = {**(design.info or {}), "blocks": records}
        if method == "central_composite" and design.method != "central_composite":
            info["model"] = "quadratic"
        self.design = Design(factors, method, f"{design.reason}; augmented by {len(blocks)} block(s) "
                             f"(xgen augment): {first_point} points", points, None, scale, info)
        self.n_points = first_point
        self.blocks = records
        self._length = first_run

    def __len__(self) -> int:
        return self._length

    def _segment(self, k: int) -> tuple[Any, int]:
        if k < 0:
            k += self._length
        if not 0 <= k < self._length:
            raise IndexError(f"run {k} out of range (0..{self._length - 1})")
        for first, seq in reversed(self.segments):
            if k >= first:
                return seq, k - first
        raise IndexError(k)

    def __getitem__(self, k: int) -> dict:  # type: ignore[override]
        seq, local = self._segment(k)
        return seq[local]

    def __iter__(self) -> Iterator[dict]:
        for k in range(len(self)):
            yield self[k]

    def render(self, k: int) -> tuple[str, str, int, int, int, dict[str, Any]]:
        seq, local = self._segment(k)
        return seq.render(local)

    def dump(self, k: int) -> str:
        return self.render(k)[0]

    def file_name(self, k: int) -> str:
        return self.layout.run_file(k)


def _replay(runs: Any, blocks: list[dict], manifest: dict) -> AugmentedRuns:
    points = manifest["design"]["doe"]["points"]
    later = [b for b in blocks if b["block"] > 0]
    if later and later[0]["first_run"] != len(runs):
        raise InputError(f"the output was augmented (xgen augment) after a design of {later[0]['first_run']} runs, "
                         f"but the document now makes {len(runs)}: generate into a new folder, or restore the document")
    pairs = [(b["how"], np.array([p["coded"] for p in points[b["first_point"]:b["first_point"] + b["points"]]],
                                 float)) for b in later]
    return AugmentedRuns(runs, pairs)


def with_blocks(runs: Any, output: str | Path) -> Any:
    """``runs`` with the blocks ``xgen augment`` recorded in ``output``'s
    manifest (``runs`` itself when there are none)."""
    manifest = _read_manifest(runs, Path(output))
    blocks = _blocks(manifest)
    if not any(b["block"] > 0 for b in blocks):
        return runs
    return _replay(runs, blocks, manifest)  # type: ignore[arg-type]


def augment_runs(runs: Any, output: str | Path, how: dict[str, Any], *,
                 max_total_runs: int | None = None) -> AugmentedRuns:
    """The runs of ``output`` (its recorded blocks replayed) plus a new block
    made by ``how`` (see :func:`new_points`).

    Args:
        max_total_runs: refuse more runs in all (the existing ones and the
            block's); ``None``: the document's ``max_total_runs``.

    Raises:
        InputError: ``output`` holds no design of this document, the design
            does not allow ``how``, or the block would make more runs than
            ``max_total_runs`` (counted from ``how`` alone, before any point
            is made).
    """
    if runs.design.method == "optuna":  # its design points are the study's trials
        raise InputError("xgen augment: an optuna design grows by xrun optimize (each design point is a trial of "
                         "its study); raise its trials in the document instead")
    manifest = _read_manifest(runs, Path(output))
    if manifest is None:
        raise InputError(f"{output}: no manifest of this experiment: run xgen generate first")
    current = with_blocks(runs, output)
    if not isinstance(current, AugmentedRuns):
        current = AugmentedRuns(runs, [])
    design = current.design
    names = [f.name for f in design.factors]
    kinds = [0 if f.levels is None else len(f.levels) for f in design.factors]
    block = len(current.blocks)
    limit = runs.experiment.model.max_total_runs if max_total_runs is None else max_total_runs
    if "foldover" not in how:  # a fold-over has at most as many points as the design: counted once made
        _refuse_too_large(how, current, len(names), limit)
    coded = new_points(how, design.coded(), names, kinds, int(runs.experiment.model.seed), block)
    _refuse_too_large(how, current, len(names), limit, len(coded))
    pairs = [(b["how"], design.coded()[b["first_point"]:b["first_point"] + b["points"]])
             for b in current.blocks if b["block"] > 0]
    return AugmentedRuns(runs, pairs + [(how, coded)])
