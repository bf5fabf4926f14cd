"""A run interrupted mid-phase and resumed: its TensorBoard folder and
MLflow run hold every episode once, as the store does (the resumed
instance's tracker runs are written anew from the store, then go on live)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("tensorboard", reason="the 'tensorboard' extra is not installed")
pytest.importorskip("mlflow", reason="the 'mlflow' extra is not installed")

import interrupts  # noqa: E402
from test_tracking import _mlflow, _tensorboard  # noqa: E402

from xdoe.execution import run  # noqa: E402
from xdoe.store import Store  # noqa: E402

CONDITIONS = [{"name": "xdoe.conditions:EnvironmentTerminationCondition"},
              {"name": "interrupts:InterruptAfter"}]


def _phase(mode: str, episodes: int, **config: object) -> dict:
    return {
        "environments": [{"environment": {"name": "xdoe.environments:DummyEnvironment", "uid": "d",
                                          "params": {"length": 5, "sensors": 1, "actuators": 1, "discrete": True}}}],
        "agents": [{"name": "q", "brain": {"name": "xdoe.agents:QLearningBrain", "params": {"alpha": 0.5}},
                    "muscle": {"name": "xdoe.agents:QLearningMuscle", "params": {"epsilon": 0.3}},
                    "objective": {"name": "xdoe.agents:RewardObjective"}}],
        "simulation": {"name": "xdoe.simulation:VanillaSimController", "conditions": CONDITIONS},
        "phase_config": {"mode": mode, "worker": 1, "episodes": episodes, **config},
    }


def test_a_resumed_run_is_logged_once_per_episode(tmp_path: Path) -> None:
    tb, ml = tmp_path / "tb", f"file://{tmp_path / 'mlruns'}"
    document = {"uid": "resumed", "experiment_uid": "taxi-tracking", "seed": 5,
                "design_point": {"index": 0, "repetition": 0, "levels": {"alpha": 0.5}},
                "run_config": {"log": [f"tensorboard:{tb}", f"mlflow:{ml}"]},
                "schedule": [{"training": _phase("train", 20, checkpoint_every=12)},
                             {"testing": _phase("test", 4)}]}
    url = f"sqlite:///{tmp_path / 's.sqlite'}"
    interrupts.ARMED["at"] = 15
    try:
        with pytest.raises(KeyboardInterrupt):
            run(document, store=url, results=tmp_path / "r")
    finally:
        interrupts.ARMED.clear()
    ((_, _, status),) = _tensorboard(tb).values()
    assert status == "STATUS_UNKNOWN"  # the interrupted session (the hparams plugin has no "aborted")
    ((_, _, _, killed),) = _mlflow(ml).values()
    assert killed == "KILLED"  # Ctrl-C: the attempt was stopped from outside, not failed
    resumed = run(document, store=url, results=tmp_path / "r")
    assert resumed.ok and resumed.resumed and not resumed.warnings, resumed
    with Store(url, create=False) as store:
        episodes = [(e["phase"], e["episode"], e["steps"], e["reward"]) for e in store.runs.episodes()]
    assert len(episodes) == 24
    (folder,) = (tb / "taxi-tracking").iterdir()  # the same folder, written anew
    ((scalars, hparams, status),) = _tensorboard(tb).values()
    assert status == "STATUS_SUCCESS" and hparams["alpha"] == 0.5
    ((metrics, params, tags, mstatus),) = _mlflow(ml).values()  # one MLflow run (the old one deleted)
    assert mstatus == "FINISHED" and params == {"alpha": "0.5"}
    for phase in ("training", "testing"):
        expected = sorted((e, r) for p, e, _, r in episodes if p == phase)
        assert [s for s, _ in scalars[f"{phase}/reward/q"]] == [e for e, _ in expected]  # each episode once
        assert [v for _, v in scalars[f"{phase}/reward/q"]] == pytest.approx([r for _, r in expected], rel=1e-6)
        assert metrics[f"{phase}/reward/q"] == [(e, float(r)) for e, r in expected]
    # env_step counts on from the episodes recorded before the resume
    assert metrics["testing/env_step"][-1] == (3, float(sum(s for _, _, s, _ in episodes)))
    assert scalars["testing/env_step"][-1][1] == sum(s for _, _, s, _ in episodes)
