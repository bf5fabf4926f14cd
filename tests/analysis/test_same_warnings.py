"""The design points table is one table wherever it is shown, and so are its
warnings: ``xrun results`` (and ``results_table``, its notebook form) says
what ``xrun analyze``, the report and the dashboard say of the same points --
below 5 repetitions, their intervals and probabilities of improvement mean
little. ``xrun results`` said nothing of it."""

from __future__ import annotations

import json

from click.testing import CliRunner

from xdoe.analysis import analyze, results_table
from xdoe.cli._xrun import main as xrun
from xdoe.results import load


def test_results_warns_as_analyze_does_of_its_points(campaign) -> None:
    frame = load(campaign["store"], "synthetic")
    few = [w for w in analyze(frame).warnings if "repetition(s) per design point" in w]
    assert len(few) == 1 and "only 3 repetition(s)" in few[0]  # 8 points x 3 repetitions
    table = results_table(frame)
    assert few[0] in table.warnings
    assert f"warning: {few[0]}" in table._repr_html_()
    shown = CliRunner().invoke(xrun, ["results", str(campaign["dir"]), "--store", campaign["store"]])
    assert shown.exit_code == 0, shown.output
    assert f"warning: {few[0]}" in shown.stderr
    data = json.loads(CliRunner().invoke(xrun, ["analyze", str(campaign["dir"]), "--store", campaign["store"],
                                                "--format", "json"]).stdout)
    points_notes = [w for w in data["warnings"] if "repetition" in w or "left out" in w]
    assert sorted(points_notes) == sorted(table.warnings)
