"""Steepest ascent and confirmation runs (issue 37, item 3) on known truths,
through xgen augment, the executor, the store and xrun analyze:

* a planted plane (:func:`doe_truth.slope_truth`): the path climbs, its
  direction is b / |b| of statsmodels' first-order OLS to 1e-10 and its
  points are k S b / max|b| (Montgomery 2012, 11.2);
* a planted quadratic maximum (:func:`doe_truth.surface_truth`):
  confirmation runs at the stationary point are confirmed, the prediction
  interval is statsmodels' ``summary_frame`` ``obs_ci`` to 1e-10;
* a flat-topped quartic peak (:func:`doe_truth.quartic_truth`) that the
  second-order model fits at the design points but overshoots in between: not
  confirmed.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml
from click.testing import CliRunner

from doe_truth import (QUARTIC_AT, quartic_document, quartic_truth, run_folder, saddle_document,
                       screening_document, slope_document, slope_truth, surface_document)
from xdoe.cli._xgen import main as xgen
from xdoe.cli._xrun import main as xrun


def _campaign(tmp: Path, document: dict) -> tuple[Path, Path]:
    tmp.mkdir(parents=True, exist_ok=True)
    doc, out = tmp / "doc.yaml", tmp / "out"
    document["output"] = str(out)
    doc.write_text(yaml.safe_dump(document))
    result = CliRunner().invoke(xgen, ["generate", str(doc), "-q"])
    assert result.exit_code == 0, result.output
    run_folder(out)
    return doc, out


def _augment(doc: Path, *args: str) -> str:
    result = CliRunner().invoke(xgen, ["augment", str(doc), *args])
    assert result.exit_code == 0, result.output
    return result.output


def _run_new(out: Path, before: int) -> None:
    run_folder(out, sorted(out.glob("run-*.yaml"))[before:])


def _analyze(out: Path, fmt: str = "json") -> str:
    result = CliRunner().invoke(xrun, ["analyze", str(out), "--format", fmt])
    assert result.exit_code == 0, result.output
    return result.stdout


def _design_runs(out: Path) -> tuple[np.ndarray, np.ndarray]:
    """(coded x, y) of the design's own runs: what statsmodels refits."""
    from xdoe.analysis import Response, read_design, run_table
    from xdoe.results import load

    frame = load(f"sqlite:///{out / 'xrun.sqlite'}")
    table, _ = run_table(frame, Response())
    design = read_design(out, None)
    blocks = design["blocks"] or [{"block": 0, "first_point": 0, "points": len(design["points"])}]
    own = blocks[0]
    table = table[(table["design_point"] >= own["first_point"])
                  & (table["design_point"] < own["first_point"] + own["points"])]
    order = design["factors"]
    x = np.array([design["points"][int(p)]["coded"] for p in table["design_point"]], float)
    return x[:, [order.index("x1"), order.index("x2")]], table["y"].to_numpy(float)


@pytest.fixture(scope="module")
def slope(tmp_path_factory) -> dict:
    doc, out = _campaign(tmp_path_factory.mktemp("slope"), slope_document())
    before_json = json.loads(_analyze(out))
    before = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in out.glob("run-*.yaml")}
    printed = _augment(doc, "--steepest-ascent", "4")
    _run_new(out, len(before))
    return {"doc": doc, "out": out, "before": before, "before_json": before_json, "printed": printed,
            "json": json.loads(_analyze(out))}


def _block(out: Path, n: int = -1) -> dict:
    return json.loads((out / "manifest.json").read_text())["design"]["doe"]["info"]["blocks"][n]


def test_the_path_direction_is_b_over_norm_b_of_statsmodels_ols(slope):
    import statsmodels.api as sm

    x, y = _design_runs(slope["out"])
    b = np.asarray(sm.OLS(y, sm.add_constant(x)).fit().params)[1:]
    spec = _block(slope["out"])["how"]["steepest_ascent"]
    direction = np.array([spec["direction"]["x1"], spec["direction"]["x2"]])
    assert np.max(np.abs(direction - b / np.linalg.norm(b))) < 1e-10
    assert b[0] == pytest.approx(1.5, abs=0.05) and b[1] == pytest.approx(-1.0, abs=0.05)  # the planted slope
    # x_j(k) = k S b_j / max|b| (S = 1): x1, the largest |b|, moves one coded unit per step
    for k, point in enumerate(spec["coded"], 1):
        assert np.max(np.abs(np.array([point["x1"], point["x2"]]) - k * b / np.max(np.abs(b)))) < 1e-10
    assert spec["outside"] == [2, 3, 4] and spec["goal"] == "maximize"


def test_the_path_climbs_and_its_runs_stay_out_of_the_screening_model(slope):
    data = slope["json"]
    path = data["steepest_ascent"]["path"]
    assert [r["step"] for r in path] == [1, 2, 3, 4]
    means = [r["mean"] for r in path]
    assert all(b > a + 1.0 for a, b in zip(means, means[1:]))  # climbs: about 2.1 per coded step of x1
    for r in path:
        assert r["n"] == 2
        assert r["mean"] == pytest.approx(slope_truth(r["natural"]["x1"], r["natural"]["x2"]), abs=0.1)
        assert r["natural"]["x1"] == pytest.approx(2 + r["coded"]["x1"], abs=1e-9)  # natural from the coding
        assert r["natural"]["x2"] == pytest.approx(2 + 2 * r["coded"]["x2"], abs=1e-9)
    assert [r["outside"] for r in path] == [False, True, True, True]
    # the screening model: the design's own 8 cube and 6 centre runs, the same as before the path
    assert data["screening"]["runs"] == 8 and data["screening"]["centre_points"] == 6
    assert data["screening"]["effects"] == slope["before_json"]["screening"]["effects"]
    x1 = next(f for f in data["factors"] if f["name"] == "x1")  # level means: of the model's runs too
    assert [lv["n"] for lv in x1["levels"]] == [4, 6, 4]
    text = _analyze(slope["out"], "table")
    assert "Path of steepest ascent" in text and "fitted on the design's own blocks only" in text
    md = _analyze(slope["out"], "markdown")
    assert "### Path of steepest ascent" in md


def test_existing_runs_are_untouched_and_the_path_is_numbered_after_them(slope):
    out = slope["out"]
    after = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in out.glob("run-*.yaml")}
    assert {k: v for k, v in after.items() if k in slope["before"]} == slope["before"]
    new = [yaml.safe_load((out / n).read_text()) for n in sorted(set(after) - set(slope["before"]))]
    assert len(new) == 8 and sorted(r["design_point"]["index"] for r in new) == [7, 7, 8, 8, 9, 9, 10, 10]
    seeds = [yaml.safe_load((out / n).read_text())["seed"] for n in after]
    assert len(set(seeds)) == len(seeds)
    assert "steps 2, 3, 4 leave the design's cube" in slope["printed"]


def test_minimising_walks_the_other_way(slope):
    printed = _augment(slope["doc"], "--steepest-ascent", "2", "--goal", "minimize", "--step", "0.5", "--dry-run")
    assert "path of steepest descent" in printed
    assert "point 11: x1 = -0.5 (1.5)" in printed and "point 12: x1 = -1 (1.0)" in printed
    # a two-level design confirms at its best predicted setting, by the model of the design's own blocks
    printed = _augment(slope["doc"], "--confirm", "2", "--dry-run")
    assert "confirmation runs at the best predicted design point" in printed
    assert "point 11: x1 = +1 (3.0), x2 = -1 (0.0)" in printed
    printed = _augment(slope["doc"], "--confirm", "2", "--dry-run", "--goal", "minimize")
    assert "point 11: x1 = -1 (1.0), x2 = +1 (4.0)" in printed


def test_a_descent_study_is_ranked_by_its_goal_and_a_later_confirmation_keeps_it(tmp_path):
    """After ``--steepest-ascent N --goal minimize`` the study minimises: xrun
    analyze ranks the lowest point best (one answer with the path's), and a
    later ``--confirm`` without ``--goal`` places at the predicted minimum."""
    doc, out = _campaign(tmp_path, slope_document())
    before = len(list(out.glob("run-*.yaml")))
    _augment(doc, "--steepest-ascent", "3", "--goal", "minimize")
    _run_new(out, before)
    analysis = json.loads(_analyze(out))
    assert (analysis["goal"], analysis["goal_from"]) == ("minimize", "augment")
    estimates = [p["estimate"] for p in analysis["points"]]
    assert estimates == sorted(estimates) and analysis["best"]["design_point"] == 9  # the path's last step: lowest
    table = _analyze(out, "table")
    assert "lower is better (goal: minimize, from xgen augment --goal)" in table
    added = len(list(out.glob("run-*.yaml"))) - before  # the title counts every run, the model its own
    assert f"fitted on {before} of the {before + added} runs" in " ".join(table.split())
    printed = _augment(doc, "--confirm", "2", "--dry-run")
    assert "point 10: x1 = -1 (1.0), x2 = +1 (4.0)" in printed  # the minimum, as with --goal minimize


def test_confirmation_at_the_true_optimum_is_confirmed_and_its_interval_is_statsmodels(tmp_path):
    import statsmodels.api as sm

    doc, out = _campaign(tmp_path, surface_document())
    printed = _augment(doc, "--confirm", "3")
    assert "confirmation runs at the stationary point" in printed
    _run_new(out, 12)
    conf = json.loads(_analyze(out))["confirmation"]
    assert conf["verdict"] == "confirmed" and conf["n"] == 3 and conf["at"] == "stationary point"
    assert conf["pi"][0] <= conf["mean"] <= conf["pi"][1]
    assert conf["mean"] == pytest.approx(50.0, abs=0.1)
    # the model fitted without the confirmation runs, at the confirmation point, by statsmodels directly
    x, y = _design_runs(out)

    def terms(p: np.ndarray) -> np.ndarray:
        return np.column_stack([np.ones(len(p)), p[:, 0], p[:, 1], p[:, 0] ** 2, p[:, 1] ** 2, p[:, 0] * p[:, 1]])

    at = np.array([[conf["coded"]["x1"], conf["coded"]["x2"]]])
    frame = sm.OLS(y, terms(x)).fit().get_prediction(terms(at)).summary_frame(alpha=0.05)
    assert abs(conf["predicted"] - float(frame["mean"].iloc[0])) < 1e-10
    assert abs(conf["pi"][0] - float(frame["obs_ci_lower"].iloc[0])) < 1e-10
    assert abs(conf["pi"][1] - float(frame["obs_ci_upper"].iloc[0])) < 1e-10
    block = _block(out)
    assert block["how"]["confirm"]["at"] == "stationary point" and block["repetitions"] == 3 and block["points"] == 1
    # a second confirmation block: placed by the same model (the first block's runs are not in it), both listed
    _augment(out.parent / "doc.yaml", "--confirm", "2")
    _run_new(out, 15)
    data = json.loads(_analyze(out))
    assert [c["n"] for c in data["confirmations"]] == [3, 2] and data["confirmation"]["block"] == 2
    assert data["confirmations"][0]["pi"] == conf["pi"] and data["confirmation"]["coded"] == conf["coded"]


def test_a_wrong_model_is_not_confirmed_with_both_numbers(tmp_path):
    doc, out = _campaign(tmp_path, quartic_document())
    _augment(doc, "--confirm", "3")
    _run_new(out, 12)
    data = json.loads(_analyze(out))
    conf = data["confirmation"]
    assert conf["verdict"] == "not confirmed"
    assert conf["predicted"] > 54 and not conf["pi"][0] <= conf["mean"] <= conf["pi"][1]
    truth = quartic_truth(conf["natural"]["x1"], conf["natural"]["x2"])
    assert conf["mean"] == pytest.approx(truth, abs=0.1)  # the runs say the truth, the model overshoots
    assert abs(conf["coded"]["x1"] - QUARTIC_AT[0]) > 0.1  # and it puts the optimum in the wrong place
    text = _analyze(out, "table")
    assert "not confirmed" in text and f"{conf['mean']:.4g}" in text and f"{conf['pi'][0]:.4g}" in text
    assert "| not confirmed | 3 |" in _analyze(out, "markdown")
    assert "stationary point" in text and "Confirmation runs" in text


def test_a_saddle_is_confirmed_at_the_best_predicted_design_point(tmp_path):
    doc, _ = _campaign(tmp_path, saddle_document())
    printed = _augment(doc, "--confirm", "2", "--dry-run")
    assert "confirmation runs at the best predicted design point (the stationary point is a saddle" in printed


def test_steepest_ascent_refuses_what_it_cannot_do(tmp_path):
    # a response-surface design: no first-order screening model
    doc, _ = _campaign(tmp_path / "ccd", surface_document())
    result = CliRunner().invoke(xgen, ["augment", str(doc), "--steepest-ascent", "3"])
    assert result.exit_code == 2 and "needs the first-order model of a two-level design" in result.output
    # a campaign not run at all, and one half run
    doc = tmp_path / "fresh.yaml"
    data = slope_document()
    data["output"] = str(tmp_path / "fresh")
    doc.write_text(yaml.safe_dump(data))
    assert CliRunner().invoke(xgen, ["generate", str(doc), "-q"]).exit_code == 0
    result = CliRunner().invoke(xgen, ["augment", str(doc), "--steepest-ascent", "3", "--store",
                                       f"sqlite:///{tmp_path / 'none.sqlite'}"])
    assert result.exit_code == 2 and "xrun experiment-start" in result.output
    run_folder(tmp_path / "fresh", sorted((tmp_path / "fresh").glob("run-*.yaml"))[:5])
    result = CliRunner().invoke(xgen, ["augment", str(doc), "--steepest-ascent", "3"])
    assert result.exit_code == 2 and "5 of the design's 14 runs are recorded" in result.output
    # options that belong to the model-driven steps
    result = CliRunner().invoke(xgen, ["augment", str(doc), "--add", "2", "--step", "0.5"])
    assert result.exit_code == 2 and "--step S goes with --steepest-ascent" in result.output
    result = CliRunner().invoke(xgen, ["augment", str(doc), "--confirm", "2", "--repetitions", "3"])
    assert result.exit_code == 2 and "give no --repetitions" in result.output


def test_two_numeric_levels_move_as_their_range(tmp_path):
    """A screen of seven factors at levels [0.0, 1.0] (a planted a +3, c -2, f +1.5):
    the path moves them off their levels, the runs already written stay as they
    were, and the screening model and its coding do not change. (Levels [0, 1],
    both integers, would move as an integer factor: rounded, and at most one
    past the levels here.)"""
    document = screening_document()
    document["factors"] = {n: {"levels": [0.0, 1.0]} for n in document["factors"]}
    doc, out = _campaign(tmp_path, document)
    before_json = json.loads(_analyze(out))
    before = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in out.glob("run-*.yaml")}
    _augment(doc, "--steepest-ascent", "2")
    after = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in out.glob("run-*.yaml")}
    assert {k: v for k, v in after.items() if k in before} == before
    new = [yaml.safe_load((out / n).read_text()) for n in sorted(set(after) - set(before))]
    levels = {r["design_point"]["index"]: r["design_point"]["levels"] for r in new}
    assert levels[16]["a"] == pytest.approx(1.0) and levels[17]["a"] == pytest.approx(1.5)  # a: largest |b|, S = 1
    spec = _block(out)["how"]["steepest_ascent"]
    assert spec["held"] == {} and set(spec["moving"]) == set("abcdefg")
    _run_new(out, 16)
    data = json.loads(_analyze(out))
    assert data["screening"]["effects"] == before_json["screening"]["effects"]
    assert [r["mean"] > before_json["best"]["estimate"] for r in data["steepest_ascent"]["path"]] == [False, True]


def test_nothing_to_move_is_refused():
    from xdoe.analysis._sequential import steepest_path
    from xdoe.errors import InputError

    doe = {"analysis": "screening", "coding": {"a": {"minus": "x", "plus": "y"}, "b": {"minus": 1.0, "plus": 0.5}},
           "effects": [{"name": "a", "kind": "main", "effect": 2.0}, {"name": "b", "kind": "main", "effect": 1.0}]}
    with pytest.raises(InputError, match="give the factors to move a range"):
        steepest_path(doe, ["a", "b"], 2)


def test_factors_with_levels_are_held_at_their_better_level():
    from xdoe.analysis._sequential import steepest_path

    doe = {"analysis": "screening",
           "coding": {"a": {"minus": 1.0, "plus": 3.0, "scale": "linear"}, "c": {"minus": "x", "plus": "y"},
                      "d": {"minus": 0.0, "plus": 2.0, "scale": "log"}},
           "effects": [{"name": "a", "kind": "main", "effect": 2.0}, {"name": "c", "kind": "main", "effect": -6.0},
                       {"name": "d", "kind": "main", "effect": -1.0}]}
    path = steepest_path(doe, ["a", "c", "d"], 2, 0.5)
    assert path["held"] == {"c": -1.0} and path["moving"] == ["a", "d"]
    assert path["coded"] == [{"a": 0.5, "c": -1.0, "d": -0.25}, {"a": 1.0, "c": -1.0, "d": -0.5}]
    down = steepest_path(doe, ["a", "c", "d"], 1, 1.0, "minimize")
    assert down["held"] == {"c": 1.0} and down["coded"] == [{"a": -1.0, "c": 1.0, "d": 0.5}]
