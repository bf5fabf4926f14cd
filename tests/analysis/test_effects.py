"""The analysis against a campaign with known effects (synthetic.py)."""

from __future__ import annotations

import json
import math

import pytest
from click.testing import CliRunner
from synthetic import REPETITIONS, truth

from xdoe.analysis import analyze, parse_response, render
from xdoe.cli._xrun import main as xrun
from xdoe.errors import InputError
from xdoe.results import load


@pytest.fixture(scope="module")
def frame(campaign):
    return load(campaign["store"], "synthetic")


@pytest.fixture(scope="module")
def result(frame):
    return analyze(frame)


def test_load_has_one_row_per_episode_and_factor_columns(frame) -> None:
    assert sorted(frame.attrs["xdoe_factors"]) == ["inter", "null", "strong"]
    assert len(frame) == 8 * REPETITIONS * 16
    assert {"strong", "null", "inter", "reward", "objective", "episode", "run"} <= set(frame.columns)


def test_strong_factor_ranks_first_and_null_is_not_significant(result) -> None:
    names = [f.name for f in result.factors]
    assert names[0] == "strong"
    strong = result.factors[0]
    assert strong.p < 0.01 and strong.eta_sq > 0.9
    assert strong.effect == pytest.approx(13.0, abs=1.0)  # 10 + 6/2 averaged over inter
    null = next(f for f in result.factors if f.name == "null")
    assert null.p > 0.05
    assert [lv.level for lv in strong.levels] == [0, 1] and all(lv.n == 4 * REPETITIONS for lv in strong.levels)
    low = strong.levels[1]
    assert low.ci_low < low.mean < low.ci_high


def test_interaction_is_detected(result) -> None:
    by = {tuple(sorted(i.factors)): i for i in result.interactions}
    assert by[("inter", "strong")].p < 0.01
    assert by[("inter", "null")].p > 0.01


def test_best_point_and_estimates_match_the_truth(result, frame) -> None:
    assert result.statistic == "iqm" and result.experiment == "synthetic"
    assert result.best is result.points[0]
    assert result.best.levels == {"strong": 1, "inter": 1, "null": result.best.levels["null"]}
    # a run's score is the mean of 16 episodes of N(truth, 1): sd 0.25 per run
    for point in result.points:
        true = truth(point.levels["strong"], point.levels["null"], point.levels["inter"])
        assert point.estimate == pytest.approx(true, abs=1.0), point
        assert point.n == REPETITIONS and point.values.shape == (REPETITIONS,)
        # percentile intervals over runs never leave the runs' range
        assert point.values.min() <= point.ci_low <= point.estimate <= point.ci_high <= point.values.max()
    worst = result.points[-1]
    assert worst.improvement[0] == 1.0  # the best beats every run of the worst
    assert any("repetition" in w for w in result.warnings)  # 3 < 5


def test_ranking_best_and_improvement_use_one_statistic(frame) -> None:
    for statistic in ("iqm", "mean", "median"):
        a = analyze(frame, statistic=statistic)
        estimates = [p.estimate for p in a.points]
        assert estimates == sorted(estimates, reverse=True)
        assert a.best.improvement is None and all(p.improvement is not None for p in a.points[1:])
        assert a.to_dict()["best"]["statistic"] == statistic


def test_same_seed_same_intervals(frame, result) -> None:
    again = analyze(frame)
    assert [(p.ci_low, p.ci_high) for p in again.points] == [(p.ci_low, p.ci_high) for p in result.points]
    other = analyze(frame, seed=1)  # 12 runs per level: the resamples differ with the seed
    assert ([(lv.ci_low, lv.ci_high) for lv in other.factors[0].levels]
            != [(lv.ci_low, lv.ci_high) for lv in result.factors[0].levels])


def test_json_shape(result) -> None:
    data = json.loads(render(result, "json"))
    assert set(data) == {"experiment", "response", "agent", "statistic", "goal", "goal_from", "runs", "factors",
                         "interactions", "points", "best", "warnings", "methods", "screening"}
    assert data["experiment"] == "synthetic" and data["runs"] == 8 * REPETITIONS
    assert (data["goal"], data["goal_from"]) == ("maximize", "default")  # a fixed design declares no direction
    f = data["factors"][0]
    # a replicated two-level full factorial: the screening model (pure error), one row per contrast
    keys = {"name", "kind", "within", "levels", "method", "effect", "t", "F", "df", "p", "eta_sq", "active", "aliases"}
    assert set(f) == keys and f["method"] == "pure error" and f["kind"] == "two-level"
    assert set(data["interactions"][0]) == keys - {"kind", "within", "levels"} | {"factors"}
    assert set(data["methods"]) == {"factors", "interactions", "points"}
    assert set(data["points"][0]) == {"design_point", "design_points", "levels", "n", "statistic", "estimate", "ci_low", "ci_high",
                                      "scores", "prob_improvement_of_best"}
    assert set(f["levels"][0]) == {"level", "mean", "ci_low", "ci_high", "n"}
    assert data["best"] == data["points"][0]
    assert data["response"] == "testing:objective:mean"


def test_formats_render(result) -> None:
    assert "strong" in render(result, "table")
    assert render(result, "markdown").count("|---|") >= 3
    import csv as csv_module
    import io

    rows = list(csv_module.DictReader(io.StringIO(render(result, "csv"))))
    tables = [r["table"] for r in rows]
    # everything the table shows: 3 factors x 2 levels, the interactions, the 8 design points
    assert tables.count("factor") == 3 * 2 and tables.count("point") == 8
    assert tables.count("interaction") == len(result.interactions)
    assert {r["experiment"] for r in rows} == {"synthetic"}
    best = next(r for r in rows if r["table"] == "point")
    assert float(best["estimate"]) == pytest.approx(result.best.estimate)
    md = render(result, "markdown")
    assert "P(best > point)" in md and "synthetic" in md


def test_response_parsing() -> None:
    assert parse_response("testing:reward:median").metric == "reward"
    assert parse_response(None).stat == "mean"
    assert parse_response("testing:objective>0").metric == "objective>0"
    assert parse_response("::iqm").stat == "iqm"
    with pytest.raises(InputError):
        parse_response("x:score>1")
    with pytest.raises(InputError):
        parse_response("a:b:c:d")
    with pytest.raises(InputError):
        parse_response("x:objective:mode")


def test_cli_results_and_analyze(campaign) -> None:
    runner = CliRunner()
    out = runner.invoke(xrun, ["results", str(campaign["dir"])])
    assert out.exit_code == 0, out.output
    assert "null=0, strong=1" in out.output and "best: design point" in out.output
    out = runner.invoke(xrun, ["analyze", str(campaign["dir"]), "--format", "json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert data["factors"][0]["name"] == "strong"
    out = runner.invoke(xrun, ["analyze", "--store", campaign["store"], "-e", "nope"])
    assert out.exit_code == 2 and "no experiment 'nope'" in out.output
    out = runner.invoke(xrun, ["analyze", str(campaign["dir"]), "-r", "nophase"])
    assert out.exit_code == 2 and "no phase 'nophase'" in out.output


def test_no_store_is_exit_2_and_no_episodes_exit_1(tmp_path) -> None:
    from xdoe.store import Store

    url = f"sqlite:///{tmp_path / 'empty.sqlite'}"
    out = CliRunner().invoke(xrun, ["analyze", "--store", url])
    assert out.exit_code == 2 and "no store at" in out.output
    assert not (tmp_path / "empty.sqlite").exists()  # reading never creates a store
    Store(url).close()
    out = CliRunner().invoke(xrun, ["analyze", "--store", url])
    assert out.exit_code == 1 and "no episodes" in out.output


def test_continuous_factor_gets_standardised_coefficient(frame) -> None:
    import numpy as np

    from xdoe.analysis._effects import _effects

    rng = np.random.default_rng(np.random.SeedSequence(3))
    import pandas as pd

    x = np.linspace(0.0, 1.0, 12)
    table = pd.DataFrame({"x": x, "y": 4 * x + rng.normal(0, 0.1, 12)})
    effects, _ = _effects(table, ["x"], {"x": "continuous"})
    assert effects[0].kind == "continuous" and effects[0].effect > 0.95 and effects[0].p < 0.01
    assert not math.isnan(effects[0].eta_sq)


def test_hand_written_run_without_design_point(tmp_path) -> None:
    from ruamel.yaml import YAML

    from xdoe.analysis.plots import plot_curves
    from xdoe.execution import run

    doc = {"uid": "hand", "schedule": [{"a": {
        "environments": [{"environment": {"name": "xdoe.environments:DummyEnvironment", "uid": "e",
                                          "params": {"length": 2, "sensors": 1, "actuators": 1}}}],
        "agents": [{"name": "x", "brain": {"name": "xdoe.agents:DummyBrain"}, "muscle": {"name": "xdoe.agents:DummyMuscle"},
                    "objective": {"name": "xdoe.agents:RewardObjective"}}],
        "simulation": {"name": "xdoe.simulation:VanillaSimController",
                       "conditions": [{"name": "xdoe.conditions:EnvironmentTerminationCondition"}]},
        "phase_config": {"mode": "train", "worker": 1, "episodes": 3}}}]}
    path = tmp_path / "hand.yaml"
    with open(path, "w") as fh:
        YAML().dump(doc, fh)
    url = f"sqlite:///{tmp_path / 's.sqlite'}"
    assert run(path, store=url, results=tmp_path / "r").ok
    frame = load(url)
    result = analyze(frame)
    assert result.factors == [] and result.points[0].index == -1 and result.points[0].n == 1
    assert any("no factor varies" in w for w in result.warnings)
    from xdoe.store import Store

    with Store(url, read_only=True) as store:
        assert plot_curves(store, tmp_path / "c.png").stat().st_size > 5_000


def _html_tables(text: str) -> tuple[list[str], list[tuple[str, list[str], list[list[str]]]]]:
    """The headings and the (caption, headers, rows) of every table in ``text``."""
    from html.parser import HTMLParser

    class Tables(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.headings: list[str] = []
            self.tables: list[tuple[str, list[str], list[list[str]]]] = []
            self.tag: str | None = None
            self.text = ""

        def handle_starttag(self, tag, attrs) -> None:
            if tag == "table":
                self.tables.append(("", [], []))
            if tag == "tr" and self.tables and self.tag != "thead":
                self.tables[-1][2].append([])
            if tag in ("h4", "caption", "th", "td"):
                self.text = ""
            if tag in ("thead", "tbody"):
                self.tag = tag

        def handle_data(self, data) -> None:
            self.text += data

        def handle_endtag(self, tag) -> None:
            if tag == "h4":
                self.headings.append(self.text)
            elif tag == "caption":
                self.tables[-1] = (self.text, *self.tables[-1][1:])
            elif tag == "th":
                self.tables[-1][1].append(self.text)
            elif tag == "td":
                self.tables[-1][2][-1].append(self.text)

    parser = Tables()
    parser.feed(text)
    return parser.headings, parser.tables


def test_the_notebook_display_shows_the_sections_the_cli_prints(result) -> None:
    from xdoe.analysis import sections

    headings, tables = _html_tables(result._repr_html_())
    assert headings == [result.title()]
    assert tables == [(title, headers, rows) for title, headers, rows in sections(result)]


def test_runs_of_one_setting_name_no_model_and_print_no_empty_table(frame) -> None:
    """Runs where no factor varies: nothing is fitted, so no table claims a
    model (the factor section is only its title, saying so); the design
    points keep their method."""
    one = frame[(frame["strong"] == 1) & (frame["null"] == 0) & (frame["inter"] == 0)].copy()
    one.attrs = dict(frame.attrs)
    a = analyze(one)
    assert a.factors == [] and a.interactions == []
    assert set(a.methods) == {"points"}
    assert "no factor varies across these runs: nothing to rank" in a.warnings
    text = render(a, "table")
    first = text.splitlines()[0]
    assert first.startswith("Factor effects (synthetic · response") and "none fitted: no factor varies" in first
    assert "ANOVA" not in text and "┃ rank" not in text
    assert "Design points ranked" in text
    html = a._repr_html_()
    assert "none fitted: no factor varies" in html and "<th>rank</th>" not in html
