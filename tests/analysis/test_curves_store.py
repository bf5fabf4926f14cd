"""From the executor to the picture: Q-learning FrozenLake runs with a step budget
(runs of the same budget finish different numbers of episodes, the last one
cut by the budget) recorded into a real SQLite store, read back with
:func:`xdoe.results.load` and as the store's curves, drawn by ``xrun plot
curves`` without a warning."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

BUDGET = 600


def _document(point: int, repetition: int, alpha: float) -> dict:
    learner = {"name": "learner",
               "brain": {"name": "xdoe.agents:QLearningBrain", "params": {"alpha": alpha}},
               "muscle": {"name": "xdoe.agents:QLearningMuscle", "params": {"epsilon": 0.1}},
               "objective": {"name": "xdoe.agents:RewardObjective", "params": {}}}
    env = {"environment": {"name": "xdoe.environments:GymnasiumEnvironment", "uid": "taxi",
                           "params": {"env_id": "FrozenLake-v1", "max_episode_steps": 40}}}
    budget = [{"name": "xdoe.conditions:EnvironmentTerminationCondition"},
              {"name": "xdoe.conditions:MaxStepsTerminationCondition", "params": {"phase_steps": BUDGET}}]
    return {
        "uid": f"toy-{point}{repetition}", "experiment_uid": "toy", "seed": 100 * point + repetition,
        "design_point": {"index": point, "repetition": repetition, "levels": {"alpha": alpha}},
        "schedule": [
            {"training": {"environments": [env], "agents": [learner],
                          "simulation": {"name": "xdoe.simulation:VanillaSimController", "conditions": budget},
                          "phase_config": {"mode": "train", "worker": 1, "episodes": 10_000}}},
            {"testing": {"simulation": {"name": "xdoe.simulation:VanillaSimController", "conditions": []},
                         "phase_config": {"mode": "test", "worker": 1, "episodes": 3}}},
        ],
    }


@pytest.fixture(scope="module")
def store_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    from xdoe.execution import run
    from xdoe.store import Store

    folder = tmp_path_factory.mktemp("budget")
    url = f"sqlite:///{folder / 'xrun.sqlite'}"
    with Store(url) as store:
        for point, alpha in enumerate((0.1, 0.5)):
            for repetition in range(3):
                result = run(_document(point, repetition, alpha), store=store, results=folder / "results")
                assert result.ok, result.error
    return url


def test_the_budget_cut_is_in_the_frame_and_out_of_curves_and_response(store_url):
    import xdoe.results
    from xdoe.analysis._response import Response, phase_rows

    frame = xdoe.results.load(store_url)
    train = frame[frame["phase"] == "training"]
    counts = train.groupby("run").size()
    assert counts.nunique() > 1  # the same budget, different numbers of episodes
    last = train.groupby("run").tail(1)
    cut = train["cut_by"] == "step_budget"
    # only a run's last episode can be cut by the budget; it is unless the environment
    # ended that episode at the budget's very step (then it is a whole episode)
    assert cut.sum() >= 4 and set(train.index[cut]) <= set(last.index)
    assert train.loc[cut, "truncated"].all() and not train.loc[cut, "terminated"].any()
    assert (train.groupby("run")["steps"].sum() == BUDGET).all()
    assert set(train.loc[~cut, "cut_by"].dropna()) <= {"environment"}
    rows, _ = phase_rows(frame, Response(phase="training"))
    assert len(rows) == len(train) - cut.sum() and not (rows["cut_by"] == "step_budget").any()
    from xdoe.analysis._curve_sets import store_curves
    from xdoe.store import Store

    with Store(store_url, read_only=True) as store:
        curves = store_curves(store, "toy", by="alpha", window=5)
    assert curves.cut == cut.sum() and [band.n for _, band in curves.curves] == [3, 3]
    for _, band in curves.curves:
        assert band.values.shape[0] == 3 and not np.isnan(band.values).any()
        assert (band.low >= band.values.min(axis=0) - 1e-9).all() and (band.high <= band.values.max(axis=0) + 1e-9).all()


def test_xrun_plot_curves_draws_on_steps_without_warnings(store_url, tmp_path: Path):
    from xdoe.cli._xrun import main

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for args in ([], ["--x", "episodes", "--stat", "iqm", "--by", "alpha"], ["--keep-cut", "--x", "wall"]):
            out = tmp_path / f"c{len(args)}.png"
            result = CliRunner().invoke(main, ["plot", "curves", "--store", store_url, "-o", str(out), *args],
                                        catch_exceptions=False)
            assert result.exit_code == 0, result.output
            assert out.stat().st_size > 10_000
    result = CliRunner().invoke(main, ["plot", "curves", "--help"])
    assert "--x [steps|episodes|wall]" in result.output and "at most 8" in result.output
    assert "the strongest" in result.output
