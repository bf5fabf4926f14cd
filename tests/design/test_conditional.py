"""Named schedule factors and conditional factors (``when:``)."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest

from xdoe.design import Factor, make_design
from xdoe.design.runfiles import prepare
from xdoe.documents import load_experiment
from xdoe.errors import DesignError, DocumentError

ROOT = Path(__file__).resolve().parents[2]


def base() -> dict:
    return {
        "uid": "c", "seed": 1, "repetitions": 1,
        "factors": {"alpha": {"levels": [0.1, 0.5], "when": {"agent": ["learner"]}}},
        "definitions": {
            "environments": {"e": {"environment": {"name": "xdoe.environments:DummyEnvironment", "uid": "e"}}},
            "agents": {
                "learner": {"name": "learner", "brain": {"name": "xdoe.agents:QLearningBrain",
                                                         "params": {"alpha": "${alpha}"}},
                            "muscle": {"name": "xdoe.agents:QLearningMuscle"}, "objective": {"name": "o:O"}},
                "random": {"name": "random", "brain": {"name": "xdoe.agents:DummyBrain"},
                           "muscle": {"name": "xdoe.agents:DummyMuscle"}, "objective": {"name": "o:O"}}},
            "simulation": {"v": {"name": "s:S"}},
            "phase_config": {"p": {"mode": "train", "worker": 1, "episodes": 1}},
        },
        "schedule": [{"t": {"environments": [["e"]], "agents": {"name": "agent", "levels": [["learner"], ["random"]]},
                            "simulation": ["v"], "phase_config": ["p"]}}],
    }


def test_named_schedule_factor_and_conditional_full_factorial() -> None:
    _exp, design, runs = prepare(base())
    assert [f.name for f in design.factors] == ["agent", "alpha"]
    levels = [runs.levels(i) for i in range(len(design))]
    assert levels == [{"agent": ["learner"], "alpha": 0.1}, {"agent": ["learner"], "alpha": 0.5},
                      {"agent": ["random"]}]
    doc = runs[2]
    assert doc["design_point"]["levels"] == {"agent": ["random"]}
    assert doc["schedule"][0]["t"]["agents"][0]["name"] == "random"
    assert runs[0]["schedule"][0]["t"]["agents"][0]["brain"]["params"]["alpha"] == 0.1


def test_arsenai_positional_names_still_work() -> None:
    data = base()
    data["schedule"][0]["t"]["agents"] = [["learner"], ["random"]]
    data["factors"]["alpha"]["when"] = {"0.agents": [["learner"]]}
    _exp, design, runs = prepare(data)
    assert [f.name for f in design.factors] == ["0.agents", "alpha"] and len(design) == 3


@pytest.mark.parametrize("method", ["full_factorial", "lhs", "maximin"])
def test_every_method_enumerates_only_valid_combinations(method: str) -> None:
    factors = [Factor("agent", levels=("learner", "random")),
               Factor("alpha", levels=(0.1, 0.5, 0.9), when=(("agent", ("learner",)),)),
               Factor("gamma", levels=(0.9, 0.99))]
    design = make_design(factors, method=method, max_runs=8, seed=3)
    points = [tuple(sorted(design.values(i).items())) for i in range(len(design))]
    assert len(points) == len(set(points))  # no valid combination twice
    for values in map(dict, points):
        assert ("alpha" in values) == (values["agent"] == "learner")
    if method == "full_factorial":
        assert len(design) == 3 * 2 + 2  # learner x alpha x gamma + random x gamma
    assert not design.active[:, 0].all() or design.active[:, 1].sum() < len(design)


def test_conditional_continuous_factor_with_lhs() -> None:
    factors = [Factor("agent", levels=("learner", "random")),
               Factor("alpha", low=0.01, high=1.0, scale="log", when=(("agent", ("learner",)),))]
    design = make_design(factors, method="lhs", max_runs=10, seed=0)
    assert all(design.points[i, 1] == 0.0 for i in range(len(design)) if not design.active[i, 1])
    assert sum(1 for i in range(len(design)) if "alpha" not in design.values(i)) == 1  # random once


def test_condition_errors() -> None:
    with pytest.raises(DesignError, match="cycle"):
        make_design([Factor("a", levels=(1, 2), when=(("b", (1,)),)),
                     Factor("b", levels=(1, 2), when=(("a", (1,)),))])
    data = base()
    data["factors"]["alpha"]["when"] = {"agnt": ["learner"]}
    with pytest.raises(DocumentError, match="unknown factor 'agnt'"):
        load_experiment(data)
    data["factors"]["alpha"]["when"] = {"agent": ["nobody"]}
    with pytest.raises(DocumentError, match="has no level 'nobody'"):
        load_experiment(data)
    data = base()
    data["schedule"][0]["t"]["agents"]["name"] = "alpha"
    with pytest.raises(DocumentError, match="also a named factor"):
        load_experiment(data)
    data = base()
    data["schedule"][0]["t"]["agents"]["name"] = "bad name"
    with pytest.raises(DocumentError, match="must match"):
        load_experiment(data)


def test_inactive_factor_used_is_a_located_error() -> None:
    data = copy.deepcopy(base())
    data["definitions"]["agents"]["random"]["brain"]["params"] = {"x": "${alpha}"}
    _exp, _design, runs = prepare(data)
    with pytest.raises(DocumentError, match="'when' condition does not hold"):
        runs[2]


def test_taxi_study_uses_named_and_conditional_factors() -> None:
    experiment, design, _runs = prepare(ROOT / "experiments" / "taxi.yaml")
    assert [f.name for f in design.factors] == ["agent", "alpha"]
    assert len(design) == 3 and experiment.model.repetitions == 2
    assert np.array_equal(design.active[:, 1], [True, True, False])
