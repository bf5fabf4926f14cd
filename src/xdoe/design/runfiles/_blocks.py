"""Blocks of runs added by ``xgen augment`` (the points of each block:
:func:`xdoe.design.new_points`, which documents ``foldover``, ``axial``,
``add``, ``replicate``, ``steepest_ascent``, ``confirm`` and ``replicate_to``).

Existing run files are never rewritten: the new runs are numbered after the
existing ones (run ``first_run + repetition * points + i`` of the block),
their design points after the existing points; a copy of an existing point
gets a seed of its own (:func:`xdoe.design.runfiles._seeds.seed_levels`). The blocks
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

__all__ = ["AugmentedRuns", "CONDITIONAL_AUGMENTS", "augment_runs", "check_augment", "with_blocks"]


def _read_manifest(runs: Any, output: Path) -> dict | None:
    from xdoe.design.runfiles._extend import layout_for

    layout = layout_for(Path(output), runs.layout)
    path = Path(output) / layout.manifest
    if not path.is_file():
        return None
    return json.loads(path.read_text(encoding="utf-8"))


def _blocks(manifest: dict | None) -> list[dict]:
    doe = ((manifest or {}).get("design") or {}).get("doe") or {}
    return list((doe.get("info") or {}).get("blocks") or [])


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
    first (unchanged), then each block's (:class:`~xdoe.design.runfiles.RunSequence`
    with its run and point offsets). ``design`` is the combined design (all
    points; the manifest's ``doe`` lists the blocks).

    A block's coded rows may hold NaN: a conditional factor inactive at that
    point (an optuna batch; the manifest's ``coded`` holds ``null`` there),
    written at coordinate 0 with ``Design.active`` false, as ``make_design``
    collapses a conditional design; the design's own inactive coordinates
    count as NaN too, so a copy of a point is a copy of its active values."""

    def __init__(self, base: Any, blocks: list[tuple[dict, np.ndarray]]) -> None:
        from xdoe.design import Design, from_coded
        from xdoe.design.runfiles._expand import factors_of

        sequence = type(base)  # xdoe.design.runfiles.RunSequence (not imported: it imports this module)
        self.base = base
        self.experiment = base.experiment
        self.layout = base.layout
        self.repetitions = base.repetitions
        design = base.design
        width = len(design.factors)
        own = design.coded()
        if not design.is_grid:  # a full factorial (Design.grid) builds its arrays on first use: every point active
            own = np.where(design.active, own, np.nan)
        all_coded = np.vstack([own] + [np.asarray(c, float).reshape(-1, width) for _, c in blocks])
        all_active = ~np.isnan(all_coded)
        originals = {f.name: f for f in factors_of(self.experiment)}
        # an inactive coordinate is 0 (coded -1), as make_design collapses it
        factors, points, scale = from_coded([originals[f.name] for f in design.factors],
                                            np.where(all_active, all_coded, -1.0))
        points = np.where(all_active, points, 0.0)

        def key_of(row: np.ndarray) -> bytes:  # a point's coded values and which factors are active
            return np.round(row, 9).tobytes() + np.isnan(row).tobytes()

        method = design.method
        records = [{"block": 0, "first_point": 0, "points": len(design), "first_run": 0, "runs": len(base),
                    "repetitions": base.repetitions, "how": "design"}]
        self.segments: list[tuple[int, Any]] = [(0, base)]
        # per block of points: [its design, first point, copies, repetitions so far] (for --replicate-to)
        parts: list[list[Any]] = [[design, 0, base._copies, base.repetitions]]
        first_point, first_run = len(design), len(base)
        seen: dict[bytes, int] = {}
        for row in own:
            seen[key_of(row)] = seen.get(key_of(row), 0) + 1
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
            part = Design(factors, method, f"block {b}", points[first_point:first_point + n],
                          all_active[first_point:first_point + n], scale, design.info)
            copies = {}
            for i, row in enumerate(np.asarray(block_coded, float).reshape(-1, width)):
                key = key_of(row)
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
                             f"(xgen augment): {first_point} points", points, all_active, scale, info)
        self.n_points = first_point
        self.blocks = records
        self._length = first_run

    def __len__(self) -> int:
        return self._length

    def pairs(self) -> list[tuple[dict, np.ndarray]]:
        """``(how, coded)`` of every block after the design, as this object
        was made from (NaN where a conditional factor is inactive): the
        blocks to pass on with one more."""
        coded = np.where(self.design.active, self.design.coded(), np.nan)
        return [(b["how"], coded[b["first_point"]:b["first_point"] + b["points"]])
                for b in self.blocks if b["block"] > 0]

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


#: the augmentations a design with conditional factors takes: no new geometry (copies of its points,
#: more repetitions, runs at one point) or points chosen among the collapsed candidates (--add)
CONDITIONAL_AUGMENTS = ("--replicate", "--replicate-to", "--add", "--confirm")


def check_augment(runs: Any, how: dict[str, Any]) -> None:
    """Refuse an augmentation the design does not take, from the kind of
    ``how`` alone (before a model is fitted or a point made).

    Args:
        runs: the document's :class:`~xdoe.design.runfiles.RunSequence`.
        how: the block (see :func:`~xdoe.design.new_points`); only its key counts.

    Raises:
        InputError: an optuna design (it grows by ``xrun optimize``).
        DocumentError: a fold-over, axial points or a path of steepest
            ascent of a design with conditional factors, located at the
            ``when`` of its first conditional factor: reversing or moving a
            parent factor changes which factors apply, so the mirror image,
            the star and the gradient are not defined; the message names
            the factor, its condition and :data:`CONDITIONAL_AUGMENTS`.
    """
    if runs.design.method == "optuna":  # its design points are the study's trials
        raise InputError("xgen augment: an optuna design grows by xrun optimize (each design point is a trial of "
                         "its study); raise its trials in the document instead")
    kind = next((k for k in ("foldover", "axial", "steepest_ascent") if k in how), None)
    factor = next((f for f in runs.design.factors if f.when), None)
    if kind is None or factor is None:
        return
    option = "--" + kind.replace("_", "-")
    condition = " and ".join(f"{parent} is {' or '.join(map(str, levels))}" for parent, levels in factor.when)
    what = {"foldover": "reversing its parent's sign changes which factors apply",
            "axial": "an axial point moves one factor alone, but a parent's moves change which factors apply",
            "steepest_ascent": "the first-order model has no coefficient of a factor that applies to some "
                               "points only"}[kind]
    variable = next((v for v in runs.experiment.variables if v.name == factor.name), None)
    path = (*variable.path, "when") if variable is not None else ()
    raise runs.experiment.error(f"{option} is not defined on a design with conditional factors ({what}): factor "
                                f"{factor.name!r} applies only when {condition}; such a design takes "
                                f"{', '.join(CONDITIONAL_AUGMENTS)}", path)


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
        DocumentError: ``how`` of a kind the design does not take
            (:func:`check_augment`). A design with conditional factors takes
            :data:`CONDITIONAL_AUGMENTS`, whose points respect the
            conditions: an inactive factor stays absent, as in ``xgen generate``.
    """
    check_augment(runs, how)
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
    from xdoe.design import new_points

    coded = new_points(how, np.where(design.active, design.coded(), np.nan), names, kinds,
                       int(runs.experiment.model.seed), block, factors=design.factors)
    _refuse_too_large(how, current, len(names), limit, len(coded))
    # as the manifest records them (xdoe.design.summary: 12 significant digits), so the runs written now are
    # the runs a later xgen generate or augment replays from it
    coded = np.array([[v if np.isnan(v) else float(f"{v:.12g}") for v in row] for row in coded],
                     float).reshape(coded.shape)
    return AugmentedRuns(runs, current.pairs() + [(how, coded)])
