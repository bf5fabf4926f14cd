"""Piped output keeps every column in full (issue 36): CliRunner is not a
terminal; long factor names and levels are never cut (``initia…``). The
report shows the experiment file relative to where it was made."""

import os
from pathlib import Path

from click.testing import CliRunner

from xdoe.analysis._report import shown_path
from xdoe.cli._xgen import main

ROOT = Path(__file__).resolve().parents[2]
DUMMY = ROOT / "experiments" / "dummy.yaml"
LONG = "initial_exploration_rate_of_the_learning_agent_during_training"


def test_the_dry_run_factor_table_piped_cuts_no_cell(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    levels = ", ".join(str(5 * k) for k in range(1, 15))
    text = DUMMY.read_text("utf-8").replace("length: {levels: [5, 10]}", f"{LONG}: {{levels: [{levels}]}}")
    doc = tmp_path / "long.yaml"
    doc.write_text(text.replace("${length}", "${" + LONG + "}"), "utf-8")
    result = CliRunner().invoke(main, ["generate", str(doc), "--dry-run", "-o", str(tmp_path / "o")])
    assert result.exit_code == 0, result.output
    assert "…" not in result.output
    assert LONG in result.output and levels in result.output and "categorical (14)" in result.output


def test_the_report_names_the_document_relative_to_where_it_was_made(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "experiments").mkdir()
    doc = tmp_path / "experiments" / "exp.yaml"
    monkeypatch.chdir(tmp_path)
    assert shown_path(doc) == os.path.join("experiments", "exp.yaml")
    assert not os.path.isabs(shown_path(ROOT / "experiments" / "dummy.yaml"))


def test_a_narrow_console_cuts_no_column_of_the_summary_or_the_status(tmp_path: Path, monkeypatch) -> None:
    """``COLUMNS=40 xrun experiment-start ... | cat`` and ``xrun status``: a
    table wider than the console is drawn as wide as its cells need (the
    terminal folds the lines), never with a column dropped or a number cut
    (``episod…``, ``0.99`` for ``0.99 s``, a status table without its rep,
    instance and started columns)."""
    import re

    from xdoe.cli._xrun import main as xrun

    monkeypatch.chdir(tmp_path)
    out = tmp_path / "o"
    assert CliRunner().invoke(main, ["generate", str(DUMMY), "-q", "-o", str(out), "repetitions=1"]).exit_code == 0
    store = f"sqlite:///{tmp_path / 's.sqlite'}"
    env = {"COLUMNS": "40"}
    start = CliRunner().invoke(xrun, ["experiment-start", str(out), "--store", store, "--results",
                                      str(tmp_path / "r"), "--no-laydown"], env=env)
    assert start.exit_code == 0, start.output
    assert "…" not in start.output
    assert "episodes" in start.output
    walls = re.findall(r"\d+\.\d\d s\b", start.output)
    assert len(walls) == 8, start.output  # every run's wall time with its unit
    for k in range(8):
        assert f"dummy-study-{k:04d}" in start.output
    status = CliRunner().invoke(xrun, ["status", str(out), "--store", store], env=env)
    assert status.exit_code == 0, status.output
    for header in ("run", "point", "rep", "status", "instance", "started (UTC)"):
        assert header in status.output, status.output
    for k in range(8):
        assert re.search(rf"dummy-study-{k:04d} .* finished .* \d{{4}}-\d\d-\d\d \d\d:\d\d:\d\d", status.output)
    # the analysis and the plan, drawn by xdoe.analysis: factor names and numbers whole, not folded to a
    # column of one or two characters
    analyze = CliRunner().invoke(xrun, ["analyze", str(out), "--store", store], env=env)
    assert analyze.exit_code == 0, analyze.output
    for name in ("0.environments", "0.sensors.random", "length", "first_three", "two-level"):
        assert name in analyze.output, analyze.output
    plan = CliRunner().invoke(xrun, ["plan", str(out), "--store", store], env=env)
    assert "observed" in plan.output and "missing" in plan.output, plan.output
