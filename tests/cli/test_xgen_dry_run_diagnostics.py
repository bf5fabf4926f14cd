"""``xgen generate --dry-run`` prints the same lines whatever the process
imported before: the model diagnostics of every design but a grid full
factorial (whose are known: D-efficiency 100 %, no correlation). Before, a
full factorial's dry run printed them only when numpy happened to be loaded."""

from __future__ import annotations

from pathlib import Path

import numpy  # noqa: F401 - loaded before the dry run, as in a caller that uses numpy
from click.testing import CliRunner
from ruamel.yaml import YAML

from xdoe.cli._xgen import main

ROOT = Path(__file__).resolve().parents[2]


def _dry_run(document: Path | dict, tmp_path: Path) -> str:
    if isinstance(document, dict):
        path = tmp_path / "doc.yaml"
        with open(path, "w", encoding="utf-8") as fh:
            YAML().dump(document, fh)
        document = path
    result = CliRunner().invoke(main, ["generate", str(document), "--dry-run", "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert not (tmp_path / "out").exists()
    return result.output


def test_a_full_factorial_prints_no_model_diagnostics_even_with_numpy_loaded(tmp_path: Path) -> None:
    output = _dry_run(ROOT / "experiments" / "dummy.yaml", tmp_path)
    assert "method: full_factorial" in output
    assert "D-efficiency" not in output


def test_a_latin_hypercube_prints_its_model_diagnostics(tmp_path: Path) -> None:
    doc = YAML(typ="safe").load((ROOT / "experiments" / "dummy.yaml").read_text(encoding="utf-8"))
    doc["factors"] = {"length": {"range": [5, 50], "integer": True}}
    doc["design"], doc["max_runs"] = "lhs", 8
    output = _dry_run(doc, tmp_path)
    assert "method: lhs" in output
    assert "D-efficiency" in output


def test_a_fraction_by_resolution_says_when_a_higher_resolution_costs_no_more_runs(tmp_path: Path) -> None:
    doc = YAML(typ="safe").load((ROOT / "experiments" / "taxi-screen.yaml").read_text(encoding="utf-8"))
    doc["factors"]["extra"] = {"levels": [0, 1]}  # 8 factors: 16 runs reach IV when III is asked
    doc["design"] = {"method": "fractional_factorial", "resolution": 3}
    output = _dry_run(doc, tmp_path)
    assert "16 points, minimum aberration, resolution IV at no extra runs (asked III)" in output
    assert "runs: 16, resolution IV" in output
