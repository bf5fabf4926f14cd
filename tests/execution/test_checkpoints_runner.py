"""Checkpoints written by the executor: at every phase end and every
``checkpoint_every`` steps, with retention, as rows in the store."""

from __future__ import annotations

from pathlib import Path

import pytest

from xdoe.execution import run
from xdoe.execution._checkpoints import checkpoints_of


def dummy_q_phase(mode="train", episodes=12, length=5, worker=1, **config):
    return {
        "environments": [{"environment": {
            "name": "xdoe.environments:DummyEnvironment", "uid": "d",
            "params": {"length": length, "sensors": 1, "actuators": 1, "discrete": True}}}],
        "agents": [{"name": "q",
                    "brain": {"name": "xdoe.agents:QLearningBrain", "params": {"alpha": 0.5}},
                    "muscle": {"name": "xdoe.agents:QLearningMuscle", "params": {"epsilon": 0.3}},
                    "objective": {"name": "xdoe.agents:RewardObjective"}}],
        "simulation": {"name": "xdoe.simulation:VanillaSimController", "conditions": []},
        "phase_config": {"mode": mode, "worker": worker, "episodes": episodes, **config},
    }


def doc(*phases, uid="ck-run", seed=5):
    return {"uid": uid, "experiment_uid": "ck", "seed": seed,
            "schedule": [{name: body} for name, body in phases]}


def test_phase_end_and_periodic_checkpoints_with_retention(store, tmp_path):
    d = doc(("training", dummy_q_phase(checkpoint_every=10, keep_checkpoints=2)),
            ("testing", dummy_q_phase(mode="test", episodes=3)))
    result = run(d, store=store, results=tmp_path / "r")
    assert result.ok, result.traceback
    ck = checkpoints_of(store, result.instance_id)
    training = [c for c in ck if c.phase == "training"]
    testing = [c for c in ck if c.phase == "testing"]
    # 60 steps, a checkpoint at the first episode end after every 10 steps
    # (10, 20, ..., 60) and the phase end (60, replacing the same file): the
    # newest 2 are kept plus the best by mean objective
    assert 2 <= len(training) <= 3
    assert max(c.step for c in training) == 60 and max(c.episode for c in training) == 12
    newest = sorted(training, key=lambda c: c.id)[-2:]
    assert [c.step for c in newest] == [50, 60]
    assert sum(c.best for c in training) == 1
    best = next(c for c in training if c.best)
    assert best.metric == max(c.metric for c in training)
    # the test phase inherits checkpoint_every (phase_config merges key by key)
    assert [c.step for c in testing] == [10, 15]
    for c in ck:  # every row has its file, every kept file has its row
        assert c.path.is_file() and c.path.parent == Path(result.results_dir) / "checkpoints"
    files = sorted(p.name for p in (Path(result.results_dir) / "checkpoints").glob("*.brain"))
    assert files == sorted(c.path.name for c in ck)


def test_no_checkpoint_every_means_phase_end_only(store, tmp_path):
    result = run(doc(("training", dummy_q_phase(episodes=4))), store=store, results=tmp_path / "r")
    assert result.ok, result.traceback
    (only,) = checkpoints_of(store, result.instance_id)
    assert (only.phase, only.step, only.episode) == ("training", 20, 4)


def test_bad_checkpoint_option_is_a_document_error(store, tmp_path):
    from xdoe.errors import DocumentError

    with pytest.raises(DocumentError, match="checkpoint_every"):
        run(doc(("training", dummy_q_phase(checkpoint_every=0))), store=store, results=tmp_path / "r")
