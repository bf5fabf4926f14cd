"""The README's study end to end: xgen expands experiments/taxi.yaml, xrun runs
every run document; the trained Q-learner must beat the random agent in the
test phase by a wide margin, and the analysis must say so (agent first, alpha
nested within the learner)."""

from __future__ import annotations

from pathlib import Path
from statistics import mean

import pytest

from xdoe.design.runfiles import generate
from xdoe.execution import run
from xdoe.store import Store

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_taxi_study_learner_beats_random(tmp_path):
    generate(ROOT / "experiments" / "taxi.yaml", tmp_path / "runs")
    files = sorted((tmp_path / "runs").glob("run-*.yaml"))
    assert len(files) == 6  # learner x 2 alphas + random once (when:), 2 repetitions
    test_rewards: dict[str, list[float]] = {"learner": [], "random": []}
    with Store(f"sqlite:///{tmp_path / 'xrun.sqlite'}") as store:
        for path in files:
            result = run(path, store=store, results=tmp_path / "results")
            assert result.ok, result.traceback
            assert [p.mode for p in result.phases] == ["train", "test"]
            for agent, value in result.mean_rewards("test").items():
                test_rewards[agent].append(value)
        assert len(store.runs.instances(status="finished")) == 6
        from xdoe.analysis import analyze
        from xdoe.results import load

        result = analyze(load(store, "taxi-study"))
    assert [f.name for f in result.factors] == ["agent", "alpha"]
    assert result.factors[0].p < 0.01 and result.factors[1].kind == "nested"
    assert result.factors[1].within == "agent=learner"
    assert result.best.levels["agent"] == "learner"
    assert len(test_rewards["learner"]) == 4 and len(test_rewards["random"]) == 2
    # random: about -4 per step for 60 steps; a trained taxi earns around +5
    assert mean(test_rewards["random"]) < -150
    assert min(test_rewards["learner"]) > mean(test_rewards["random"]) + 100
    assert mean(test_rewards["learner"]) > -20
