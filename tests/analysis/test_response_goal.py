"""The response's goal, maximize or minimize (:func:`xdoe.analysis.resolve_goal`):
every ranking, "best" and probability of improvement reads it.

Known truth: :func:`synthetic.valley` plants its minimum at u=2, v=1 (true
mean 0, its neighbours 2, the corners 10) in a full factorial of 4 x 3
levels, 5 runs a point, each run's score the mean of 4 noisy episodes.
``--goal minimize`` must rank that point first, and its P(best < point)
must be the P(best > point) of the negated response and the Mann-Whitney U
of scipy. The optuna side (a design that declares ``direction:
minimize``): ``tests/optuna/test_optuna_goal.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from synthetic import VALLEY_MINIMUM, valley_campaign
from xdoe.analysis import Goal, analyze, parse_response, resolve_goal, results_table
from xdoe.cli._xrun import main
from xrun_output import invoke, json_of
from xdoe.errors import InputError
from xdoe.results import load


@pytest.fixture(scope="module")
def valley(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The valley campaign's output folder (its store ``xrun.sqlite`` inside)."""
    return valley_campaign(tmp_path_factory.mktemp("valley"))


def test_minimize_ranks_the_planted_minimum_first(valley: Path) -> None:
    data = json_of("analyze", str(valley), "--goal", "minimize", "--format", "json")
    assert (data["goal"], data["goal_from"]) == ("minimize", "option")
    assert data["best"]["levels"] == VALLEY_MINIMUM and data["best"] == data["points"][0]
    estimates = [p["estimate"] for p in data["points"]]
    assert estimates == sorted(estimates)  # lowest first
    assert data["points"][0]["prob_improvement_of_best"] is None
    assert "lower is better (--goal minimize)" in data["methods"]["points"]
    # the default (a fixed design declares no direction): the highest first, captions as before
    default = json_of("analyze", str(valley), "--format", "json")
    assert (default["goal"], default["goal_from"]) == ("maximize", "default")
    assert default["best"]["levels"]["u"] == 0 and default["best"]["estimate"] == max(estimates)
    table = invoke("analyze", str(valley), "--goal", "minimize")
    assert "P(best < point); lower is better (--goal minimize)" in table and "P(best > point)" not in table
    assert "P(best > point)" in invoke("analyze", str(valley)) and "lower is better" not in invoke(
        "analyze", str(valley))
    minimum = data["best"]["design_point"]
    results = invoke("results", str(valley), "--goal", "minimize")
    assert f"best: design point {minimum} (u=2, v=1)" in results and "P(best < point)" in results


def test_p_best_below_point_is_the_maximize_answer_of_the_negated_response(valley: Path) -> None:
    from scipy.stats import mannwhitneyu

    frame = load(f"sqlite:///{valley / 'xrun.sqlite'}")
    lowest = analyze(frame, goal="minimize")
    negated = frame.copy()
    negated["objective"] = -negated["objective"]
    highest = analyze(negated, goal="maximize")
    assert lowest.best.levels == VALLEY_MINIMUM and lowest.goal == Goal("minimize", "option")
    assert [p.index for p in lowest.points] == [p.index for p in highest.points]
    assert [p.improvement for p in lowest.points] == [p.improvement for p in highest.points]  # the same bootstrap
    assert [p.estimate for p in lowest.points] == pytest.approx([-p.estimate for p in highest.points])
    best = lowest.best
    for p in lowest.points[1:]:  # independently: U of the point's runs over n * m = P(best < point), ties one half
        u = mannwhitneyu(p.values, best.values).statistic
        assert p.improvement[0] == pytest.approx(u / (len(p.values) * len(best.values)))
    assert any(p.improvement[0] < 1 for p in lowest.points[1:])  # noisy neighbours: not a foregone answer
    # the notebook's table: the same ranking, its frame says which goal
    table = results_table(frame, goal="minimize")
    assert table.best.index == best.index and [p.index for p in table.points] == [p.index for p in lowest.points]
    assert table.to_frame().attrs["goal"] == "minimize"
    assert "P(best &lt; point)" in table._repr_html_()


def test_plan_with_goal_minimize_compares_against_the_lowest_point(valley: Path) -> None:
    fast = ("--format", "json", "--trials", "100", "--cap", "20")
    lowest = json_of("plan", str(valley), "--goal", "minimize", *fast)
    minimum = json_of("analyze", str(valley), "--goal", "minimize", "--format", "json")["best"]["design_point"]
    assert lowest["goal"] == "minimize" and len(lowest["comparisons"]) == 11
    for c in lowest["comparisons"]:  # a, the better point, is the lower by its mean
        assert c["point_a"] == minimum and c["mean_a"] < c["mean_b"]
        assert c["observed_delta"] == pytest.approx(c["mean_b"] - c["mean_a"])
    highest = json_of("plan", str(valley), *fast)
    assert highest["goal"] == "maximize" and all(c["point_a"] != minimum for c in highest["comparisons"])
    assert all(c["mean_a"] > c["mean_b"] for c in highest["comparisons"])
    corner = highest["comparisons"][0]["point_a"]  # the highest point against the lowest: a is the goal's better
    pair = json_of("plan", str(valley), "--goal", "minimize", "--compare", str(corner), str(minimum), *fast)
    assert [(c["point_a"], c["point_b"]) for c in pair["comparisons"]] == [(minimum, corner)]
    text = invoke("plan", str(valley), "--goal", "minimize", "--trials", "100", "--cap", "20")
    assert "a is the better point by its mean; lower is better (--goal minimize)" in text


def test_report_with_goal_minimize_ranks_the_lowest_first(valley: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    invoke("report", str(valley), "-o", str(out), "--goal", "minimize")
    html = out.read_text("utf-8")
    ranked = html[html.index('id="aggregates"'):]
    assert "P(best &lt; point); lower is better (--goal minimize)" in ranked
    first = ranked[ranked.index("<tr><td>"):]  # the first row after the header: the minimum, marked best
    assert first.startswith("<tr><td>") and " *</td><td>u=2, v=1</td>" in first[:first.index("</tr>")]


@pytest.mark.parametrize("command", ["results", "analyze", "plan", "report"])
def test_an_unknown_goal_is_refused(valley: Path, command: str) -> None:
    done = CliRunner().invoke(main, [command, str(valley), "--goal", "sideways"])
    assert done.exit_code == 2 and "sideways" in done.output


def test_resolve_goal_order() -> None:
    """--goal, else the design's direction for the analysed response, else maximize."""
    two = {"method": "optuna", "info": {"direction": ["maximize", "minimize"],
                                        "response": ["", "testing:steps:mean"]}}
    assert resolve_goal() == Goal("maximize", "default")
    assert resolve_goal(design={"method": "full_factorial"}) == Goal("maximize", "default")
    assert resolve_goal("minimize") == Goal("minimize", "option")
    assert resolve_goal("maximize", design={"method": "optuna", "info": {"direction": ["minimize"]}}) == Goal(
        "maximize", "option")
    assert resolve_goal(design={"method": "optuna", "info": {"direction": ["minimize"]}},
                        response=parse_response("testing:steps:max")) == Goal("minimize", "design")
    assert resolve_goal(design=two) == Goal("maximize", "design")  # the default response is the first
    assert resolve_goal(design=two, response=parse_response("testing:steps:mean")) == Goal("minimize", "design")
    assert resolve_goal(design=two, response=parse_response("testing:reward")) == Goal("maximize", "design")
    given = Goal("minimize", "design")
    assert resolve_goal(given) is given
    with pytest.raises(InputError, match="sideways"):
        resolve_goal("sideways")
