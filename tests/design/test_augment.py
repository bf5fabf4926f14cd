"""xgen augment (issue 24): fold-over, axial points, space-filling points and
replicates added as a block; existing run files keep their bytes and mtimes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
import yaml
from click.testing import CliRunner
from dummy_study import dummy_study

from xdoe.cli._xgen import main as xgen


def _doc(design, factors):
    return dummy_study("seq", 3, design, factors, output="out")


def _setup(tmp_path: Path, design, factors) -> tuple[Path, Path]:
    doc = tmp_path / "exp.yaml"
    doc.write_text(yaml.safe_dump(_doc(design, factors)))
    out = tmp_path / "out"
    result = CliRunner().invoke(xgen, ["generate", str(doc), "-o", str(out), "-q"])
    assert result.exit_code == 0, result.output
    return doc, out


def _state(out: Path) -> dict[str, tuple[bytes, int]]:
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(out.glob("run-*.yaml"))}


def _augment(doc: Path, out: Path, *args: str) -> str:
    result = CliRunner().invoke(xgen, ["augment", str(doc), "-o", str(out), *args])
    assert result.exit_code == 0, result.output
    return result.output


def _manifest(out: Path) -> dict:
    return json.loads((out / "manifest.json").read_text())


TWO = {n: {"levels": [0, 1]} for n in "abcdefg"}


def test_foldover_of_a_resolution_iii_design_keeps_files_and_reaches_resolution_iv(tmp_path):
    doc, out = _setup(tmp_path, {"method": "fractional_factorial", "resolution": 3}, TWO)
    before = _state(out)
    assert len(before) == 8
    os.utime(out / "run-seq-0000.yaml", ns=(1_000_000_000, 1_000_000_000))  # an old mtime, to see it kept
    before = _state(out)
    text = _augment(doc, out, "--foldover")
    assert "added 8, kept 8" in text and "resolution 4" in text
    after = _state(out)
    assert {k: v for k, v in after.items() if k in before} == before  # bytes and mtimes
    assert sorted(after) == [f"run-seq-{k:04d}.yaml" for k in range(16)]
    doe = _manifest(out)["design"]["doe"]
    blocks = doe["info"]["blocks"]
    assert [(b["block"], b["first_point"], b["first_run"], b["points"]) for b in blocks] == [(0, 0, 0, 8), (1, 8, 8, 8)]
    assert doe["diagnostics"]["resolution"] == 4  # Montgomery 8.5: a full fold-over of a III design is IV
    new = yaml.safe_load((out / "run-seq-0008.yaml").read_text())
    assert new["design_point"]["index"] == 8
    # generating the same document again keeps the block (up to date), nothing retired
    result = CliRunner().invoke(xgen, ["generate", str(doc), "-o", str(out)])
    assert result.exit_code == 0 and "up to date" in result.output
    assert _state(out) == after


def test_single_factor_foldover_de_aliases_that_factor(tmp_path):
    doc, out = _setup(tmp_path, {"method": "fractional_factorial", "resolution": 3}, TWO)
    _augment(doc, out, "--foldover", "a")
    aliases = _manifest(out)["design"]["doe"]["diagnostics"]["aliases"]
    assert "a" not in aliases  # a is clear of every two-factor interaction
    assert any(k in aliases for k in "bcdefg")


def test_axial_turns_factorial_with_centre_points_into_a_rotatable_ccd(tmp_path):
    factors = {"x": {"range": [0, 10]}, "z": {"range": [1, 3]}}
    doc, out = _setup(tmp_path, {"method": "fractional_factorial", "resolution": 5, "center": 2}, factors)
    before = _state(out)
    _augment(doc, out, "--axial")
    after = _state(out)
    assert {k: v for k, v in after.items() if k in before} == before and len(after) == 6 + 4 + 2
    manifest = _manifest(out)
    assert manifest["method"] == "central_composite"
    coded = np.array([p["coded"] for p in manifest["design"]["doe"]["points"]])
    assert np.abs(coded).max() == pytest.approx(4 ** 0.25)  # rotatable: F^(1/4), F = 4 cube points
    seeds = [yaml.safe_load(p.read_text())["seed"] for p in sorted(out.glob("run-*.yaml"))]
    assert len(set(seeds)) == len(seeds)  # four centre points, four seeds


def test_orthogonal_blocking_alpha(tmp_path):
    factors = {"x": {"range": [0, 10]}, "z": {"range": [1, 3]}}
    doc, out = _setup(tmp_path, {"method": "fractional_factorial", "resolution": 5, "center": 2}, factors)
    _augment(doc, out, "--axial", "--alpha", "orthogonal", "--center", "2")
    coded = np.array([p["coded"] for p in _manifest(out)["design"]["doe"]["points"]])
    # Montgomery 11.4.3: alpha = sqrt(F (2k + n_s0) / (2 (F + n_c0))) = sqrt(4 * 6 / 12) = sqrt(2)
    assert np.abs(coded).max() == pytest.approx(2 ** 0.5)


def test_add_space_filling_points_and_replicate(tmp_path):
    factors = {"x": {"range": [0, 10]}, "z": {"range": [1, 3]}}
    doc, out = _setup(tmp_path, {"method": "sobol", "n": 8}, factors)
    _augment(doc, out, "--add", "4")
    coded = np.array([p["coded"] for p in _manifest(out)["design"]["doe"]["points"]])
    assert len(coded) == 12 and len({tuple(r) for r in coded.round(9)}) == 12
    old, new = coded[:8], coded[8:]
    nearest = np.sqrt(((new[:, None] - old[None]) ** 2).sum(axis=2)).min(axis=1)
    assert nearest.min() > 0.1  # away from the existing points
    before = _state(out)
    _augment(doc, out, "--replicate", "0,3", "--repetitions", "2")
    after = _state(out)
    assert {k: v for k, v in after.items() if k in before} == before and len(after) == 12 + 4
    docs = [yaml.safe_load((out / f"run-seq-{k:04d}.yaml").read_text()) for k in range(12, 16)]
    assert [d["design_point"]["index"] for d in docs] == [12, 13, 12, 13]
    assert docs[0]["design_point"]["levels"] == yaml.safe_load((out / "run-seq-0000.yaml").read_text())[
        "design_point"]["levels"]
    assert len({d["seed"] for d in docs}) == 4
    assert _manifest(out)["design"]["runs"] == 16  # 12 points x 1 + 2 points x 2


def test_augment_refusals(tmp_path):
    doc, out = _setup(tmp_path, {"method": "fractional_factorial", "resolution": 3}, TWO)
    for args, message in ((["--axial"], "continuous"), (["--foldover", "q"], "no such factor"),
                          (["--replicate", "99"], "no design point 99"), ([], "exactly one")):
        result = CliRunner().invoke(xgen, ["augment", str(doc), "-o", str(out), *args])
        assert result.exit_code == 2 and message in result.output, result.output
    result = CliRunner().invoke(xgen, ["augment", str(doc), "-o", str(tmp_path / "none"), "--foldover"])
    assert result.exit_code == 2 and "xgen generate first" in result.output
