"""A two-level design whose every run of one corner failed (doe_truth.corner_truth):
the screening model cannot separate the factors any more, so ``xrun analyze``
answers with the type II ANOVA and says why; it crashed with ``KeyError: 'b'``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from doe_truth import LOST_CORNERS, corner_document, lost_corners_document

from xdoe.analysis import analyze, load_scores, parse_response
from xdoe.cli._xrun import main as xrun
from xdoe.design.runfiles import generate


def test_a_corner_whose_runs_all_failed_is_answered_by_the_anova(tmp_path: Path) -> None:
    out = tmp_path / "_outputs"
    generate(corner_document(), out)
    url = f"sqlite:///{out / 'xrun.sqlite'}"
    done = CliRunner().invoke(xrun, ["experiment-start", str(out), "--quiet", "--in-process", "--no-laydown",
                                     "--store", url, "--results", str(out / "results")])
    assert done.exit_code == 1, done.output  # the corner's three runs failed, the others ran
    result = CliRunner().invoke(xrun, ["analyze", str(out), "--format", "json"])
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout)
    assert body["runs"] == 9 and sorted(f["name"] for f in body["factors"]) == ["a", "b"]
    assert "type II ANOVA" in body["methods"]["factors"]
    (note,) = [w for w in body["warnings"] if "screening model cannot estimate" in w]
    assert "main effect of b" in note and "3 setting(s)" in note
    assert any("3 failed" in w for w in body["warnings"])
    # the dashboard's path (the database's scores, no output folder) answers the same
    store = analyze(load_scores(url, parse_response(None), "corner"))
    assert store.runs == 9 and any("screening model cannot estimate" in w for w in store.warnings)
    assert {f.name: f.effect for f in store.factors} == {f["name"]: f["effect"] for f in body["factors"]}


def test_the_effects_of_an_unbalanced_lost_corner_design_are_the_models_signed_ones(tmp_path: Path) -> None:
    """Three settings of a 2^3 lost: the ANOVA answers with each factor's signed effect, high - low in
    the design's level order, of the main-effects least-squares model (its estimated marginal means),
    as statsmodels fits it; before, the unsigned gap between the level means (biased: the runs of
    a = 1 all have b = c = 0)."""
    import numpy as np
    import pandas as pd
    import statsmodels.formula.api as smf

    from xdoe.analysis import run_table

    out = tmp_path / "_outputs"
    generate(lost_corners_document(), out)
    url = f"sqlite:///{out / 'xrun.sqlite'}"
    done = CliRunner().invoke(xrun, ["experiment-start", str(out), "--quiet", "--in-process", "--no-laydown",
                                     "--store", url, "--results", str(out / "results")])
    assert done.exit_code == 1, done.output
    body = json.loads(CliRunner().invoke(xrun, ["analyze", str(out), "--format", "json"]).stdout)
    assert body["runs"] == 10 and "type II ANOVA" in body["methods"]["factors"]
    assert "estimated marginal means" in body["methods"]["factors"]
    got = {f["name"]: f for f in body["factors"]}
    # statsmodels on the same runs: OLS of the main effects, each factor 1 at its high level
    table = run_table(load_scores(url, parse_response(None), "lost-corners"), parse_response(None))[0]
    high = {"a": 1, "b": 1, "c": 0}  # c lists [1, 0]: 0 is its high level
    coded = pd.DataFrame({f: (table[f].astype(float) == high[f]).astype(float) for f in high})
    coded["y"] = table["y"].to_numpy(float)
    fit = smf.ols("y ~ a + b + c", data=coded).fit()
    planted = {**LOST_CORNERS, "c": -LOST_CORNERS["c"]}
    for name in "abc":
        assert got[name]["kind"] == "two-level"
        assert got[name]["effect"] == pytest.approx(float(fit.params[name]), rel=1e-10, abs=1e-12)
        assert abs(got[name]["effect"] - planted[name]) < 1.0  # noise 0.5 per episode, 2 episodes a run
        assert [lv["level"] for lv in got[name]["levels"]] == ([1, 0] if name == "c" else [0, 1])
    # the biased gap of level means the ANOVA used to give is not the answer
    means = {lv["level"]: lv["mean"] for lv in got["a"]["levels"]}
    assert abs((means[1] - means[0]) - got["a"]["effect"]) > 0.1
    assert np.sign(got["b"]["effect"]) == -1 and np.sign(got["c"]["effect"]) == -1
    # the notebook API on the database's scores (the dashboard's path): the same effects
    store = analyze(load_scores(url, parse_response(None), "lost-corners"))
    assert {f.name: f.effect for f in store.factors} == {n: f["effect"] for n, f in got.items()}
