"""Issue 33, items 4, 6 and 10: sizes bounded from the options alone (the
design options' dry runs, ``xgen augment``), ``xgen augment`` on a plain
``design: full_factorial``, and every ``-o`` writer failing with one line
and nothing left behind. Each case failed before (a hang, an
``ArrayMemoryError`` or ``OSError`` traceback, a ``TypeError``, an empty
block recorded)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result
from dummy_study import dummy_study

from xdoe.cli._xgen import main as xgen

from hostile.cases import DUMMY


def _snapshot(root: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None) for p in root.rglob("*")}


def _one_error(result: Result, code: int, *fragments: str) -> str:
    assert result.exit_code == code, f"exit {result.exit_code}: {result.output}"
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    lines = [line for line in result.output.splitlines() if not line.startswith("warning: ")]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    assert "Traceback" not in result.output
    for fragment in fragments:
        assert fragment in lines[0], f"expected {fragment!r} in {lines[0]!r}"
    return lines[0]


# ----------------------------------------------------------------- design options, also with --dry-run


@pytest.mark.parametrize("design", [
    "{method: plackett_burman, center: 1000000000}",
    "{method: morris, trajectories: 1000000000}",
    "{method: sobol, n: 1099511627776}",
])
def test_a_design_option_too_large_is_refused_by_the_dry_run(design: str, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    doc = tmp_path / "doc.yaml"
    doc.write_text(DUMMY.read_text(encoding="utf-8").replace("design: auto", f"design: {design}"), encoding="utf-8")
    before = _snapshot(tmp_path)
    result = CliRunner().invoke(xgen, ["generate", str(doc), "--dry-run"])
    _one_error(result, 2, f"{doc}:12: design.", "exceeds max_total_runs 1000000")
    assert _snapshot(tmp_path) == before


# ----------------------------------------------------------------- xgen augment


def _generated(tmp_path: Path, design, factors) -> tuple[Path, Path]:
    doc = tmp_path / "exp.yaml"
    doc.write_text(yaml.safe_dump(dummy_study("seq", 3, design, factors, output="out")))
    out = tmp_path / "out"
    result = CliRunner().invoke(xgen, ["generate", str(doc), "-o", str(out), "-q"])
    assert result.exit_code == 0, result.output
    return doc, out


TWO = {n: {"levels": [0, 1]} for n in "abc"}
CONTINUOUS = {"x": {"range": [1, 5]}, "y": {"range": [5, 9]}}


@pytest.mark.parametrize(("design", "factors", "args", "fragments"), [
    ("full_factorial", TWO, ["--add", "1000000000"],
     ["--add 1000000000: 1000000000 new design points", "8 existing runs", "exceeds max_total_runs 1000000"]),
    ("full_factorial", TWO, ["--add", "1000000000", "--dry-run"], ["--add 1000000000", "exceeds max_total_runs"]),
    ("full_factorial", TWO, ["--replicate", "0,1", "--repetitions", "1000000"],
     ["--replicate (2 points)", "x 1000000 repetition(s)", "exceeds max_total_runs 1000000"]),
    ("full_factorial", TWO, ["--add", "5", "--max-total-runs", "12"], ["exceeds max_total_runs 12"]),
    ({"method": "fractional_factorial", "resolution": 3, "center": 2}, CONTINUOUS,
     ["--axial", "--center", "1000000000"], ["--axial --center 1000000000", "exceeds max_total_runs"]),
    ({"method": "fractional_factorial", "resolution": 3}, TWO, ["--foldover", "--max-total-runs", "6"],
     ["--foldover: 4 new design points", "exceeds max_total_runs 6"]),
    ("full_factorial", TWO, ["--replicate", ""], ["--replicate '': no design point given"]),
    ("full_factorial", TWO, ["--replicate", " , "], ["no design point given"]),
])
def test_augment_refuses_with_one_line_and_writes_nothing(design, factors, args, fragments, tmp_path: Path) -> None:
    doc, out = _generated(tmp_path, design, factors)
    before = _snapshot(tmp_path)
    result = CliRunner().invoke(xgen, ["augment", str(doc), "-o", str(out), *args])
    _one_error(result, 2, *fragments)
    assert _snapshot(tmp_path) == before


@pytest.mark.parametrize("args", [["--add", "2"], ["--replicate", "0,7"], ["--foldover"]])
def test_augment_of_a_plain_full_factorial(args: list[str], tmp_path: Path) -> None:
    doc, out = _generated(tmp_path, "full_factorial", TWO)
    result = CliRunner().invoke(xgen, ["augment", str(doc), "-o", str(out), *args])
    assert result.exit_code == 0, result.output
    blocks = json.loads((out / "manifest.json").read_text())["design"]["doe"]["info"]["blocks"]
    assert [b["block"] for b in blocks] == [0, 1] and blocks[1]["points"] >= 2
    assert len(list(out.glob("run-*.yaml"))) == 8 + blocks[1]["runs"]
    # the document generated again keeps the block
    again = CliRunner().invoke(xgen, ["generate", str(doc), "-o", str(out)])
    assert again.exit_code == 0 and "up to date" in again.output, again.output
