"""Checkpoints: files and rows, retention (newest N + best), best flag,
sha256 verification and finding the latest checkpoint of a run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from xdoe.components.agents import DummyBrain
from xdoe.errors import InputError, RunError
from xdoe.execution import (
    CheckpointManager,
    checkpoints_of,
    latest_checkpoint,
    load_brain,
)
from xdoe.execution._checkpoints import file_sha256


def start_instance(store, tmp_path: Path, uid: str = "ck-run"):
    rec = store.recorder({"uid": uid, "experiment_uid": "ck", "seed": 1, "schedule": []},
                         results_root=tmp_path / "results")
    rec.start()
    return rec


def test_retention_keeps_newest_and_best_and_deletes_files(store, tmp_path):
    rec = start_instance(store, tmp_path)
    rec.phase_started(0, "training", "train", {"worker": 1})
    mgr = CheckpointManager(store, rec.instance_id, tmp_path / "ck", keep=3, best_window=2)
    brain = DummyBrain()
    metrics = [1.0, 9.0, 2.0, 3.0, 4.0, 5.0]
    saved = []
    for k, m in enumerate(metrics):
        brain.experiences = k
        saved.append(mgr.save(brain, agent="learner", phase_index=0, step=100 * k, episode=k, metric=m))
    rows = checkpoints_of(store, rec.instance_id)
    # newest 3 (metrics 3, 4, 5) plus the best (9.0, second saved)
    assert [r.metric for r in rows] == [9.0, 3.0, 4.0, 5.0]
    assert [r.best for r in rows] == [True, False, False, False]
    assert all(r.phase == "training" and r.phase_index == 0 and r.phase_id is not None for r in rows)
    kept = {r.path for r in rows}
    for info in saved:
        assert info.path.exists() == (info.path in kept)
    assert sorted(p.name for p in (tmp_path / "ck").iterdir()) == sorted(p.name for p in kept)
    best = next(r for r in rows if r.best)
    assert best.path.name == "0-learner-e1-s100.brain"
    assert json.loads(best.path.read_text())["experiences"] == 1
    assert best.sha256 == file_sha256(best.path)
    rec.phase_finished()
    rec.finish("finished")


def test_rolling_metric_and_per_phase_groups(store, tmp_path):
    rec = start_instance(store, tmp_path)
    rec.phase_started(0, "training", "train", {})
    mgr = CheckpointManager(store, rec.instance_id, tmp_path / "ck", keep=1, best_window=3)
    assert mgr.metric("a") is None
    for value in (1.0, 2.0, 3.0, 10.0):
        mgr.observe_episode("a", value)
    assert mgr.metric("a") == pytest.approx(5.0)  # last 3
    first = mgr.save(DummyBrain(), agent="a", phase_index=0, step=1, episode=4)
    assert first.metric == pytest.approx(5.0) and first.best
    rec.phase_finished()
    rec.phase_started(1, "testing", "test", {})
    mgr.reset_window()
    assert mgr.metric("a") is None
    other = mgr.save(DummyBrain(), agent="a", phase_index=1, step=1, episode=0)
    # a new phase is a new group: the training checkpoint survives keep=1
    rows = checkpoints_of(store, rec.instance_id, agent="a")
    assert [r.id for r in rows] == [first.id, other.id]
    assert [r.best for r in rows] == [True, False]  # no metric: never best
    rec.phase_finished()
    rec.finish("finished")


def test_same_coordinates_replace_the_row(store, tmp_path):
    rec = start_instance(store, tmp_path)
    rec.phase_started(0, "training", "train", {})
    mgr = CheckpointManager(store, rec.instance_id, tmp_path / "ck")
    mgr.save(DummyBrain(), agent="a", phase_index=0, step=5, episode=1, metric=1.0)
    brain = DummyBrain()
    brain.experiences = 7
    again = mgr.save(brain, agent="a", phase_index=0, step=5, episode=1, metric=2.0)
    rows = checkpoints_of(store, rec.instance_id)
    assert [r.id for r in rows] == [again.id] and rows[0].metric == 2.0
    assert json.loads(again.path.read_text())["experiences"] == 7
    rec.finish("finished")


def test_load_brain_verifies_sha256(store, tmp_path):
    rec = start_instance(store, tmp_path)
    rec.phase_started(0, "training", "train", {})
    mgr = CheckpointManager(store, rec.instance_id, tmp_path / "ck")
    brain = DummyBrain()
    brain.experiences = 42
    info = mgr.save(brain, agent="a", phase_index=0, step=1, episode=1)
    fresh = DummyBrain()
    load_brain(fresh, info)
    assert fresh.experiences == 42
    info.path.write_text(json.dumps({"brain": "DummyBrain", "experiences": 43}))
    with pytest.raises(RunError, match="sha256"):
        load_brain(DummyBrain(), info)
    info.path.unlink()
    with pytest.raises(RunError, match="missing"):
        load_brain(DummyBrain(), info)
    rec.finish("finished")


def test_brain_store_failure_is_a_run_error(store, tmp_path):
    from xdoe.components.agents import QLearningBrain

    rec = start_instance(store, tmp_path)
    mgr = CheckpointManager(store, rec.instance_id, tmp_path / "ck")
    with pytest.raises(RunError, match="agent 'q'.*RuntimeError"):
        mgr.save(QLearningBrain(), agent="q")  # not set up: cannot store
    assert checkpoints_of(store, rec.instance_id) == []
    assert not any((tmp_path / "ck").iterdir())
    rec.finish("failed")


def test_invalid_settings():
    with pytest.raises(InputError, match="keep_checkpoints"):
        CheckpointManager(None, 1, ".", keep=0)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="best_window"):
        CheckpointManager(None, 1, ".", best_window=0)  # type: ignore[arg-type]


def test_latest_checkpoint_finished_only_and_by_phase(store, tmp_path):
    # instance 1: finished, two phases
    rec1 = start_instance(store, tmp_path)
    mgr1 = CheckpointManager(store, rec1.instance_id, tmp_path / "ck1")
    rec1.phase_started(0, "training", "train", {})
    t1 = mgr1.save(DummyBrain(), agent="a", phase_index=0, step=10, episode=1, metric=5.0)
    t2 = mgr1.save(DummyBrain(), agent="a", phase_index=0, step=20, episode=2, metric=1.0)
    rec1.phase_finished()
    rec1.phase_started(1, "testing", "test", {})
    s1 = mgr1.save(DummyBrain(), agent="a", phase_index=1, step=5, episode=1)
    rec1.phase_finished()
    rec1.finish("finished")
    # instance 2: failed
    rec2 = start_instance(store, tmp_path)
    mgr2 = CheckpointManager(store, rec2.instance_id, tmp_path / "ck2")
    rec2.phase_started(0, "training", "train", {})
    f1 = mgr2.save(DummyBrain(), agent="a", phase_index=0, step=10, episode=1)
    rec2.finish("failed", error="boom")

    assert latest_checkpoint(store, "ck-run", "a").id == s1.id
    assert latest_checkpoint(store, "ck-run", "a", "training").id == t2.id
    assert latest_checkpoint(store, "ck-run", "a", 0).id == t2.id
    assert latest_checkpoint(store, "ck-run", "a", "training", best=True).id == t1.id
    assert latest_checkpoint(store, "ck-run", "a", finished_only=False).id == f1.id
    assert latest_checkpoint(store, "ck-run", "a", 1, finished_only=False).id == s1.id
    assert latest_checkpoint(store, "ck-run", "a", finished_only=False,
                             instance_id=rec1.instance_id).id == s1.id
    assert latest_checkpoint(store, "ck-run", "b") is None
    assert latest_checkpoint(store, "other", "a") is None
    assert latest_checkpoint(store, "ck-run", "a", "nope") is None
