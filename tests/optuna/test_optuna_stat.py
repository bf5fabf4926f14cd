"""A study that declares ``stat: median`` (``design: {method: optuna, stat:
median}``) is ranked by the median of each trial's runs in every output,
without ``--stat``: ``xrun analyze`` (json), ``xrun results``, ``xrun plan``,
``xrun report`` (its HTML parsed), the dashboard's JSON and the notebook API
name the same statistic and the same best trial, the optuna section's
(:func:`xdoe.analysis.resolve_statistic` reads the design record the results
carry). Before, only the command line read the design's ``stat``: the report
and the dashboard ranked the same study by IQM."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import optuna_truth
from dummy_study import known_truth_study
from html_tables import parse_html
from optimize_study import campaign, optimize
from xrun_output import invoke, json_of


@pytest.fixture(scope="module")
def medians(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The quadratic (to maximise) by random sampling: 6 trials of 3 runs with
    noise large enough that a trial's median and mean (= IQM of 3) differ."""
    design = {"method": "optuna", "sampler": "random", "trials": 6, "batch": 3, "stat": "median"}
    data = known_truth_study("medians", "optuna_truth:truth",
                             {name: {"range": list(r)} for name, r in optuna_truth.RANGES.items()}, design,
                             noise=3.0, seed=3, repetitions=3)
    doc, out = campaign(tmp_path_factory.mktemp("stat"), data)
    optimize(doc, out)
    return out


def _check_medians(points: list[dict]) -> None:
    for p in points:
        assert p["statistic"] == "median"
        assert p["estimate"] == pytest.approx(float(np.median(p["scores"])), rel=1e-12)


def test_every_output_ranks_by_the_designs_stat(medians: Path, tmp_path: Path) -> None:
    from xdoe.analysis import Response, analyze, load_scores, pilot_plan, results_table
    from xdoe.results import load

    data = json_of("analyze", str(medians), "--format", "json")
    assert data["statistic"] == "median" and data["optuna"]["stat"] == "median"
    _check_medians(data["points"])
    best = data["best"]["design_point"]
    assert best == data["optuna"]["best"]["trial"]
    assert data["best"]["estimate"] == pytest.approx(data["optuna"]["best"]["value"])
    # the medians rank differently from the means: the test tells the two apart
    means = {p["design_point"]: float(np.mean(p["scores"])) for p in data["points"]}
    assert [p["design_point"] for p in data["points"]] != sorted(means, key=lambda k: -means[k])

    assert f"best: design point {best} (" in invoke("results", str(medians))
    store = f"sqlite:///{medians / 'xrun.sqlite'}"
    frame = load(store)  # no manifest: the store's record of the design
    assert results_table(frame).analysis.statistic == "median" and results_table(frame).best.index == best
    notebook = analyze(load_scores(store, Response()))
    assert notebook.statistic == "median" and notebook.best.index == best
    assert "median" in notebook._repr_html_()
    assert pilot_plan(frame, trials=100, cap=10).comparisons[0].a == best
    # --stat still overrides the design's
    assert json_of("analyze", str(medians), "--stat", "iqm", "--format", "json")["statistic"] == "iqm"

    report = tmp_path / "report.html"
    invoke("report", str(medians), "-o", str(report))
    page = report.read_text("utf-8")
    assert "design points ranked by median over runs" in page
    tables = [parse_html("<table>" + t) for t in (c[:c.index("</table>")] + "</table>"
                                                  for c in page.split("<table>")[1:])]
    ranked = [t for t in tables if t.headers[:4] == ["point", "levels", "runs", "median"]]
    assert len(ranked) == 1, [t.headers for t in tables]
    assert ranked[0].rows[0][0] == f"{best} *"


def test_the_dashboards_json_is_the_commands(medians: Path) -> None:
    pytest.importorskip("fastapi", reason="the dashboard extra is not installed")
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "dashboard"))
    from dashboard_helpers import client

    from xdoe.dashboard import Settings

    settings = Settings(store_url=f"sqlite:///{medians / 'xrun.sqlite'}", workdir=medians, token="t")
    with client(settings) as c:
        answer = c.get("/api/campaigns/medians/analysis")
        unknown = c.get("/api/campaigns/no-such-study/analysis")
    assert answer.status_code == 200, answer.text
    got = answer.json()
    data = json_of("analyze", str(medians), "--format", "json")
    assert (got["experiment"], got["response"], got["runs"], got["statistic"]) == (
        data["experiment"], data["response"], data["runs"], "median")
    _check_medians(got["points"])
    assert got["best"]["design_point"] == data["best"]["design_point"]
    assert [(p["design_point"], p["n"], p["estimate"]) for p in got["points"]] == [
        (p["design_point"], p["n"], p["estimate"]) for p in data["points"]]
    # the adaptive design's answer too: the same best trial, history and importances (it had none)
    assert got["optuna"] == data["optuna"] and got["optuna"]["best"]["trial"] == data["optuna"]["best"]["trial"]
    assert unknown.status_code == 404
