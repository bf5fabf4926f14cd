"""The newcomer's sequence of issue 22 (bullet 2), on a small Taxi study: the
README's quick start (xgen generate, xrun experiment-start on
``_outputs/run-*.yaml``), then ``xrun branch`` of a design run with an
override, and a ``--no-run`` branch. The design's results, analysis and
status are unchanged by the branches; the children are not in the design's
glob; ``--include-branches`` shows them, labelled, on rows of their own."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from xdoe.cli._xgen import main as xgen_main
from xdoe.cli._xrun import main as xrun_main

ROOT = Path(__file__).resolve().parents[2]


def small_taxi(tmp_path: Path) -> Path:
    """experiments/taxi.yaml with 40 training and 5 test episodes (same design)."""
    text = (ROOT / "experiments" / "taxi.yaml").read_text(encoding="utf-8")
    text = text.replace("episodes: 1200}", "episodes: 40}").replace("episodes: 50}", "episodes: 5}")
    assert "episodes: 40}" in text and "episodes: 5}" in text
    path = tmp_path / "taxi.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def xrun(*args: str, code: int = 0) -> str:
    result = CliRunner().invoke(xrun_main, list(args))
    assert result.exit_code == code, result.output
    return result.stdout


def cells(table: str) -> list[list[str]]:
    """The design-point rows of an ``xrun results`` table, cell by cell."""
    return [[c.strip() for c in line.split("│")] for line in table.splitlines()
            if re.match(r"│\s+\d+( \*)? │", line)]


def design_files(tmp_path: Path) -> list[str]:
    return sorted(p.name for p in (tmp_path / "_outputs").glob("run-*.yaml"))  # the README's glob


@pytest.fixture
def study(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("XRUN_STORE", raising=False)
    monkeypatch.setenv("COLUMNS", "240")
    generated = CliRunner().invoke(xgen_main, ["generate", str(small_taxi(tmp_path))])
    assert generated.exit_code == 0, generated.output
    files = [str(Path("_outputs") / name) for name in design_files(tmp_path)]
    assert len(files) == 6
    xrun("experiment-start", "--quiet", *files)
    return tmp_path


def test_a_branch_leaves_the_designs_answer_unchanged(study: Path) -> None:
    results = xrun("results", "-e", "taxi-study")
    analysis = json.loads(xrun("analyze", "-e", "taxi-study", "--format", "json"))
    table = xrun("analyze", "-e", "taxi-study")
    assert "6 runs" in table and sorted(f["name"] for f in analysis["factors"]) == ["agent", "alpha"]
    # the newcomer branches a design run with an override, and writes one more without running it
    out = xrun("branch", "taxi-study-0000", "--set", "brain.params.alpha=x0.5", "--episodes", "20")
    assert "wrote _outputs/branches/run-taxi-study-0000_b01.yaml" in out
    xrun("branch", "taxi-study-0000:training", "--set", "+training.phase_config.checkpoint_every=1000",
         "--no-run")
    assert design_files(study) == [f"run-taxi-study-{i:04d}.yaml" for i in range(6)]
    assert sorted(p.name for p in (study / "_outputs" / "branches").iterdir()) == [
        "run-taxi-study-0000_b01.yaml", "run-taxi-study-0000_b02.yaml"]
    # the design's answer: the same runs, the same table, the same effects
    assert xrun("results", "-e", "taxi-study") == results
    assert xrun("results", "_outputs") == results
    assert json.loads(xrun("analyze", "-e", "taxi-study", "--format", "json")) == analysis  # alpha's effect too
    assert xrun("analyze", "-e", "taxi-study") == table
    # status: the design's six runs, all finished; the unrun child is not "missing"
    for args in (["_outputs"], ["-e", "taxi-study"], []):
        status = xrun("status", *args, "--format", "json")
        data = json.loads(status)
        assert data["counts"] == {"finished": 6, "running": 0, "failed": 0, "interrupted": 0, "missing": 0}
        assert data["all_finished"] and not any("_b0" in r["run"] for r in data["runs"])
    # the tree shows both children
    tree = xrun("tree")
    assert "taxi-study-0000_b01" in tree and "taxi-study-0000_b02" in tree
    # compared explicitly: the branch on a row of its own, labelled; the design rows as before
    shown = xrun("results", "-e", "taxi-study", "--include-branches")
    assert "6 runs + 1 branch (not in the design)" in " ".join(shown.split())
    branch_rows = [line for line in shown.splitlines() if "branch" in line and "│" in line]
    assert branch_rows and "taxi-study-0000_b01" in branch_rows[0]
    assert "brain.params.alpha=0.25" in re.sub(r"[│\s]+", "", shown.split("taxi-study-0000_b01")[1])
    design_rows = cells(results)
    assert len(design_rows) == 3 and design_rows == cells(shown)[:3]  # the same design rows, first
    with_branches = json.loads(xrun("analyze", "-e", "taxi-study", "--include-branches", "--format", "json"))
    design_points = with_branches.pop("points")
    assert with_branches == {k: v for k, v in analysis.items() if k != "points"}  # factors: the design's runs only
    assert design_points[:len(analysis["points"])] == analysis["points"]  # the design's points, first
    (branch,) = design_points[len(analysis["points"]):]
    assert branch["design_point"] == -1 and branch["n"] == 1 and "taxi-study-0000_b01" in branch["levels"]["branch"]
    compared = xrun("analyze", "-e", "taxi-study", "--include-branches")
    row = compared[compared.index("│ -1 "):]  # the branch's row (its label may wrap in the cell)
    assert "branch=taxi-study-0000_b01" in row.splitlines()[0] and "brain.params.alpha=0.25)" in row
    assert "6 runs" in compared and all(line in compared for line in table.splitlines()[:8])
    # the notebook display of the same table (xdoe.analysis.results_table): the design rows, then the branch
    from html_tables import parse_html

    from xdoe.analysis import results_table
    from xdoe.results import load

    page = parse_html(results_table(load("sqlite:///_outputs/xrun.sqlite", "taxi-study",
                                         include_branches=True))._repr_html_())
    assert page.caption.startswith("taxi-study · response ") and "6 runs + 1 branch (not in the design)" in page.caption
    assert page.rows[:3] == [row[1:-1] for row in cells(shown)[:3]]
    (html_branch,) = page.rows[3:]
    shown_branch = branch_rows[0].split("│")[1:-1]
    assert html_branch[0] == "branch" == shown_branch[0].strip() and html_branch[1].startswith("taxi-study-0000_b01")
    assert [html_branch[i] for i in (2, 3, 4, 5)] == [shown_branch[i].strip() for i in (2, 3, 4, 5)]
