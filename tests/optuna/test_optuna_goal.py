"""A study that declares ``direction: minimize`` is analysed with that goal
everywhere, without ``--goal`` (:func:`xdoe.analysis.resolve_goal` reads the
design record the results carry): the design points table's best is the
optuna section's best trial, and ``xrun results``, ``xrun plan``, the
notebook table and the dashboard's campaign page agree. The fixed-design
side (``--goal minimize``, the negated response): ``tests/analysis/test_response_goal.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import optuna_truth
from dummy_study import known_truth_study
from optimize_study import campaign, optimize
from xrun_output import invoke, json_of


@pytest.fixture(scope="module")
def branin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Branin's function (to minimise) optimised by TPE: 8 trials of 2 runs, in batches of 4."""
    design = {"method": "optuna", "sampler": "tpe", "trials": 8, "batch": 4, "direction": "minimize"}
    data = known_truth_study("branin", "optuna_truth:branin",
                             {name: {"range": list(r)} for name, r in optuna_truth.BRANIN_RANGES.items()}, design,
                             noise=0.1, seed=5, repetitions=2)
    doc, out = campaign(tmp_path_factory.mktemp("goal"), data)
    optimize(doc, out)
    return out


def test_the_design_points_best_is_the_optuna_sections_best_trial(branin: Path) -> None:
    data = json_of("analyze", str(branin), "--format", "json")
    assert (data["goal"], data["goal_from"]) == ("minimize", "design")
    adaptive = data["optuna"]
    assert adaptive["direction"] == "minimize" and adaptive["trials"] == 8
    best = data["best"]
    assert best["design_point"] == adaptive["best"]["trial"]
    assert best["estimate"] == pytest.approx(adaptive["best"]["value"])
    assert best["estimate"] == min(p["estimate"] for p in data["points"])
    assert adaptive["best"]["value"] == min(h["value"] for h in adaptive["history"])
    table = invoke("analyze", str(branin))
    assert "P(best < point); lower is better (goal: minimize, from the design's direction)" in table
    assert f"best trial {best['design_point']}:" in table
    assert f"best: design point {best['design_point']} (" in invoke("results", str(branin))
    # --goal overrides the design's direction (the optuna section still reports the study's)
    overridden = json_of("analyze", str(branin), "--goal", "maximize", "--format", "json")
    assert overridden["goal"] == "maximize" and overridden["best"]["estimate"] == max(
        p["estimate"] for p in data["points"])
    assert overridden["optuna"]["best"]["trial"] == best["design_point"]


def test_every_reader_takes_the_goal_from_the_design_record(branin: Path) -> None:
    from xdoe.analysis import Response, analyze, load_scores, pilot_plan, results_table
    from xdoe.results import load

    store = f"sqlite:///{branin / 'xrun.sqlite'}"
    best = json_of("analyze", str(branin), "--format", "json")["best"]["design_point"]
    frame = load(store)  # no manifest, no goal given: the store's record of the design
    assert results_table(frame).best.index == best
    assert analyze(load_scores(store, Response())).best.index == best  # as the dashboard computes it
    plan = pilot_plan(frame, trials=100, cap=10)
    assert plan.goal.direction == "minimize" and {c.a for c in plan.comparisons} == {best}
    assert json_of("plan", str(branin), "--format", "json", "--trials", "100", "--cap", "10")["goal"] == "minimize"


def test_the_dashboard_says_lower_is_better(branin: Path) -> None:
    pytest.importorskip("fastapi", reason="the dashboard extra is not installed")
    from fastapi.testclient import TestClient

    from xdoe.dashboard import Settings, create_app

    settings = Settings(store_url=f"sqlite:///{branin / 'xrun.sqlite'}", workdir=branin, token="t")
    base = f"http://127.0.0.1:{settings.port}"  # as a browser on this machine asks (tests/dashboard's client)
    with TestClient(create_app(settings), base_url=base, headers={"X-Xdoe-Token": "t", "Origin": base}) as client:
        page = client.get("/fragments/campaigns/branin/effects")
    assert page.status_code == 200
    best = json_of("analyze", str(branin), "--format", "json")["best"]
    line = page.text[page.text.index("<p class=\"best\">Best design point"):]
    line = line[:line.index("</p>")]
    assert "lower is better (goal: minimize, from the design&#39;s direction)" in line
    assert all(f"<code>{k} = {v}</code>" in line for k, v in best["levels"].items()), line


def test_each_response_of_a_study_takes_its_own_direction(tmp_path: Path) -> None:
    """Two responses, maximised and minimised: the analysed one's direction ranks the design points."""
    design = {"method": "optuna", "sampler": "nsga2", "trials": 6, "batch": 3,
              "response": ["testing:objective:mean", "testing:objective:max"], "direction": ["maximize", "minimize"]}
    doc, out = campaign(tmp_path, optuna_truth.document(design, repetitions=1))
    optimize(doc, out)
    first = json_of("analyze", str(out), "--format", "json")  # the default response is the first
    assert (first["goal"], first["optuna"]["direction"]) == ("maximize", "maximize")
    second = json_of("analyze", str(out), "-r", "testing:objective:max", "--format", "json")
    assert (second["goal"], second["goal_from"], second["optuna"]["direction"]) == ("minimize", "design", "minimize")
    estimates = [p["estimate"] for p in second["points"]]
    assert estimates == sorted(estimates) and second["best"]["design_point"] == second["optuna"]["best"]["trial"]


@pytest.mark.parametrize("stat", ["mean", "median"])
def test_the_design_points_are_ranked_by_the_stat_the_trials_were_told(tmp_path: Path, stat: str) -> None:
    """``stat: mean|median``: the design points table's estimates are the
    values the study was told, so its best is the best trial (before: IQM
    always, whose ranking of 3 or 4 runs can differ; ``--stat`` still
    chooses)."""
    from xdoe.design._optuna import OptunaSettings, open_study

    design = {"method": "optuna", "sampler": "random", "trials": 6, "batch": 3, "stat": stat}
    data = known_truth_study("quad", "optuna_truth:truth",
                             {name: {"range": list(r)} for name, r in optuna_truth.RANGES.items()}, design,
                             noise=2.0, seed=3, repetitions=4)
    doc, out = campaign(tmp_path, data)
    optimize(doc, out)
    told = {t.number: t.value for t in open_study(out / "optuna-quad.journal", "quad", OptunaSettings()).get_trials()}
    for command in ("analyze", "results"):
        result = json_of(command, str(out), "--format", "json") if command == "analyze" else None
        if result is None:
            assert f"best: design point {max(told, key=told.__getitem__)} (" in invoke(command, str(out))
            continue
        assert result["statistic"] == stat
        assert {p["design_point"]: p["estimate"] for p in result["points"]} == pytest.approx(told, rel=1e-12)
        assert result["best"]["design_point"] == result["optuna"]["best"]["trial"] == max(told, key=told.__getitem__)
    assert json_of("analyze", str(out), "--stat", "iqm", "--format", "json")["statistic"] == "iqm"
