"""xgen augment --replicate-to N (issue 37, item 4): exactly the missing
repetitions, existing files untouched, seeds as with ``repetitions: N``."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from click.testing import CliRunner
from dummy_study import dummy_study

from xdoe.cli._xgen import main as xgen


def _generate(tmp_path: Path, name: str, repetitions: int) -> tuple[Path, Path]:
    doc = tmp_path / f"{name}.yaml"
    data = dummy_study("seq", 3, {"method": "full_factorial"}, {n: {"levels": [0, 1]} for n in "abc"},
                       output="out")
    data["repetitions"] = repetitions
    doc.write_text(yaml.safe_dump(data))
    out = tmp_path / name
    result = CliRunner().invoke(xgen, ["generate", str(doc), "-o", str(out), "-q"])
    assert result.exit_code == 0, result.output
    return doc, out


def _runs(out: Path) -> dict[str, dict]:
    return {p.name: yaml.safe_load(p.read_text()) for p in sorted(out.glob("run-*.yaml"))}


def test_replicate_to_adds_the_missing_repetitions_with_the_seeds_of_repetitions_n(tmp_path):
    doc, out = _generate(tmp_path, "pilot", 2)
    before = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in out.glob("run-*.yaml")}
    assert len(before) == 8 * 2
    result = CliRunner().invoke(xgen, ["augment", str(doc), "-o", str(out), "--replicate-to", "5"])
    assert result.exit_code == 0, result.output
    after = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in out.glob("run-*.yaml")}
    assert {k: v for k, v in after.items() if k in before} == before  # bytes and mtimes
    assert len(after) == 8 * 5
    runs = list(_runs(out).values())
    per_point: dict[int, list[int]] = {}
    for r in runs:
        per_point.setdefault(r["design_point"]["index"], []).append(r["design_point"]["repetition"])
    assert {k: sorted(v) for k, v in per_point.items()} == {i: [0, 1, 2, 3, 4] for i in range(8)}
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["design"]["runs"] == 40
    # the same study generated with repetitions: 5 from the start: the same (point, repetition) -> seed
    _, full = _generate(tmp_path, "full", 5)

    def seeds(folder: Path) -> dict:
        return {(r["design_point"]["index"], r["design_point"]["repetition"]): r["seed"]
                for r in _runs(folder).values()}

    assert seeds(out) == seeds(full)
    # nothing more to add; and generate keeps the block
    again = CliRunner().invoke(xgen, ["augment", str(doc), "-o", str(out), "--replicate-to", "5"])
    assert again.exit_code != 0 and "nothing to add" in again.output
    regen = CliRunner().invoke(xgen, ["generate", str(doc), "-o", str(out), "-q"])
    assert regen.exit_code == 0, regen.output
    assert len(list(out.glob("run-*.yaml"))) == 40


def test_replicate_to_respects_max_total_runs(tmp_path):
    doc, out = _generate(tmp_path, "pilot", 2)
    result = CliRunner().invoke(xgen, ["augment", str(doc), "-o", str(out), "--replicate-to", "5",
                                       "--max-total-runs", "30"])
    assert result.exit_code != 0 and "max_total_runs" in result.output
    assert len(list(out.glob("run-*.yaml"))) == 16


def test_replicate_to_works_on_a_grid_of_three_level_factors(tmp_path):
    """A factor of three levels is coded 2 i / (k - 1) - 1: the augmentation
    replays it (it used to refuse every level other than the two ends)."""
    doc = tmp_path / "grid.yaml"
    data = dummy_study("grid", 3, {"method": "full_factorial"}, {"a": {"levels": [1, 2, 3]}, "b": {"levels": [0, 1]}},
                       output="out")
    data["repetitions"] = 1
    doc.write_text(yaml.safe_dump(data))
    out = tmp_path / "grid"
    assert CliRunner().invoke(xgen, ["generate", str(doc), "-o", str(out), "-q"]).exit_code == 0
    result = CliRunner().invoke(xgen, ["augment", str(doc), "-o", str(out), "--replicate-to", "3"])
    assert result.exit_code == 0, result.output
    runs = list(_runs(out).values())
    assert len(runs) == 6 * 3
    levels = {(r["design_point"]["index"], r["design_point"]["repetition"]): r["design_point"]["levels"]["a"]
              for r in runs}
    assert all(levels[(i, k)] == levels[(i, 0)] for i in range(6) for k in (1, 2))
