"""The notebook's :class:`xdoe.analysis.Analysis` of an adaptive (optuna)
study gives the answer ``xrun analyze`` gives, from the same function
(:func:`xdoe.analysis.adaptive_answer`): ``Analysis.adaptive``, the
``"optuna"`` key of ``to_dict()`` and its text and HTML forms. Before, only
the command line, the report and the dashboard stated it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import optuna_truth
from dummy_study import known_truth_study
from optimize_study import campaign, optimize
from xrun_output import json_of


@pytest.fixture(scope="module")
def quad(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The known-truth quadratic: 6 random trials of 2 runs, in batches of 3."""
    design = {"method": "optuna", "sampler": "random", "trials": 6, "batch": 3}
    data = known_truth_study("quad", "optuna_truth:truth",
                             {name: {"range": list(r)} for name, r in optuna_truth.RANGES.items()}, design,
                             noise=0.1, seed=3, repetitions=2)
    doc, out = campaign(tmp_path_factory.mktemp("notebook"), data)
    optimize(doc, out)
    return out


def test_the_notebook_states_the_answer_xrun_analyze_states(quad: Path) -> None:
    from xdoe.analysis import analyze, render
    from xdoe.results import load

    cli = json_of("analyze", str(quad), "--format", "json")
    result = analyze(load(f"sqlite:///{quad / 'xrun.sqlite'}"))  # the notebook: no store, no manifest given
    assert result.adaptive is not None and result.adaptive["trials"] == 6
    assert json.loads(json.dumps(result.adaptive)) == cli["optuna"]
    assert json.loads(render(result, "json")) == cli  # the whole JSON, "optuna" included
    best = result.adaptive["best"]
    assert best["trial"] == result.best.index  # the design points' best is the best trial
    assert f"best trial {best['trial']}:" in render(result, "table")
    assert "## adaptive design: optuna random" in render(result, "markdown")
    page = result._repr_html_()
    assert "adaptive design: optuna random, 6 complete trials told" in page and f"best trial {best['trial']}:" in page


def test_a_design_of_several_responses_reads_its_front_from_the_store(tmp_path: Path) -> None:
    """The Pareto front needs every response's scores: with ``store=`` the
    notebook's answer is the command's; without it the analysis says so."""
    from xdoe.analysis import analyze
    from xdoe.results import load

    design = {"method": "optuna", "sampler": "nsga2", "trials": 4, "batch": 2,
              "response": ["testing:objective:mean", "testing:objective:max"], "direction": ["maximize", "minimize"]}
    doc, out = campaign(tmp_path, optuna_truth.document(design, repetitions=1))
    optimize(doc, out)
    url = f"sqlite:///{out / 'xrun.sqlite'}"
    cli = json_of("analyze", str(out), "--format", "json")
    assert cli["optuna"]["pareto"]
    frame = load(url)
    assert json.loads(json.dumps(analyze(frame, store=url).adaptive)) == cli["optuna"]
    alone = analyze(frame)
    assert alone.adaptive is None and "optuna" not in alone.to_dict()
    assert any("analyze(frame, store=...)" in w for w in alone.warnings), alone.warnings
