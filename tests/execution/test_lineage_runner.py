"""Lineage: ``load:`` a trained brain from another run (or a checkpoint
file), ``replay:`` stored steps into ``Brain.pretrain``, and the
``brain_source`` rows that record where every brain came from."""

from __future__ import annotations

import lineage_components
import pytest
from sqlalchemy import select

from xdoe.execution import run
from xdoe.execution._checkpoints import checkpoints_of
from xdoe.store import BrainSource


@pytest.fixture(autouse=True)
def _clear():
    lineage_components.PRETRAINED.clear()
    yield
    lineage_components.PRETRAINED.clear()


def lake(mode="train", episodes=300, brain="xdoe.agents:QLearningBrain", **agent):
    a = {"name": "q", "brain": {"name": brain, "params": {"alpha": 0.8, "gamma": 0.95}},
         "muscle": {"name": "xdoe.agents:QLearningMuscle", "params": {"epsilon": 0.3}},
         "objective": {"name": "xdoe.agents:RewardObjective"}, **agent}
    return {
        "environments": [{"environment": {
            "name": "xdoe.environments:GymnasiumEnvironment", "uid": "lake",
            "params": {"env_id": "FrozenLake-v1", "is_slippery": False, "max_episode_steps": 30}}}],
        "agents": [a],
        "simulation": {"name": "xdoe.simulation:VanillaSimController"},
        "phase_config": {"mode": mode, "worker": 1, "episodes": episodes},
    }


def doc(uid, *phases, seed=3):
    return {"uid": uid, "experiment_uid": "lineage", "seed": seed,
            "schedule": [{name: body} for name, body in phases]}


def sources(store, instance_id):
    with store.database.session() as s:
        return [(r.agent, r.source_kind, r.source_run_uid, r.source_phase, r.source_checkpoint_id)
                for r in s.execute(select(BrainSource).where(BrainSource.instance_id == instance_id)
                                   .order_by(BrainSource.id)).scalars()]


@pytest.fixture
def trained(store, tmp_path):
    result = run(doc("teacher", ("training", lake()), ("testing", lake(mode="test", episodes=5))),
                 store=store, results=tmp_path / "r", store_steps="all")
    assert result.ok, result.traceback
    assert result.mean_rewards("test") == {"q": 1.0}  # the lake is learnt
    return result


def test_load_from_another_run_performs_like_the_trained_brain(store, tmp_path, trained):
    loaded = run(doc("student", ("testing", lake(mode="test", episodes=5, load={
        "agent": "q", "experiment_run": "teacher", "phase": "training"}))),
        store=store, results=tmp_path / "r")
    assert loaded.ok, loaded.traceback
    assert loaded.mean_rewards("test") == {"q": 1.0}
    fresh = run(doc("untrained", ("testing", lake(mode="test", episodes=5))),
                store=store, results=tmp_path / "r")
    assert fresh.mean_rewards("test")["q"] < 1.0
    (ck,) = [c for c in checkpoints_of(store, trained.instance_id) if c.phase == "training"]
    assert sources(store, loaded.instance_id) == [("q", "checkpoint", "teacher", "training", ck.id)]
    assert sources(store, trained.instance_id) == [("q", "fresh", None, None, None),
                                                   ("q", "previous_phase", None, None, None)]
    assert sources(store, fresh.instance_id) == [("q", "fresh", None, None, None)]


def test_load_from_a_checkpoint_path_and_by_phase_index(store, tmp_path, trained):
    (ck,) = [c for c in checkpoints_of(store, trained.instance_id) if c.phase == "training"]
    by_path = run(doc("from-file", ("testing", lake(mode="test", episodes=5, load={"path": str(ck.path)}))),
                  store=store, results=tmp_path / "r")
    assert by_path.ok and by_path.mean_rewards("test") == {"q": 1.0}
    with store.database.session() as s:
        row = s.execute(select(BrainSource).where(BrainSource.instance_id == by_path.instance_id)).scalar_one()
    assert (row.source_kind, row.source_path, row.source_sha256) == ("path", str(ck.path.resolve()), ck.sha256)
    by_index = run(doc("by-index", ("testing", lake(mode="test", episodes=5, load={
        "experiment_run": "teacher", "phase": 0}))), store=store, results=tmp_path / "r")
    assert by_index.ok and by_index.mean_rewards("test") == {"q": 1.0}


def test_inherited_load_is_not_applied_again(store, tmp_path, trained):
    # train further from the teacher's brain, then test: the test phase
    # inherits `load` and must keep the brain the training phase left
    d = doc("continued", ("training", lake(episodes=20, load={"experiment_run": "teacher"})),
            ("testing", {"phase_config": {"mode": "test", "episodes": 3}}))
    result = run(d, store=store, results=tmp_path / "r")
    assert result.ok, result.traceback
    kinds = [k for _, k, *_ in sources(store, result.instance_id)]
    assert kinds == ["checkpoint", "previous_phase"]


@pytest.mark.parametrize("load, message", [
    ({"experiment_run": "nobody"}, "has no run 'nobody'"),
    ({"experiment_run": "teachr"}, "did you mean: teacher"),
    ({"experiment_run": "teacher", "phase": "warmup"}, "has no phase 'warmup'; its phases: 0: training, 1: testing"),
    ({"experiment_run": "teacher", "agent": "ghost"}, "no checkpoint of agent 'ghost'"),
    ({"path": "no/such/file.brain"}, "no checkpoint file"),
])
def test_unknown_sources_fail_the_run_with_what_exists(store, tmp_path, trained, load, message):
    result = run(doc("bad-load", ("testing", lake(mode="test", episodes=1, load=load))),
                 store=store, results=tmp_path / "r")
    assert result.status == "failed"
    assert message in result.error
    assert "schedule[0].testing.agents[0].load" in result.error


def test_malformed_load_is_a_document_error(store, tmp_path):
    from xdoe.errors import DocumentError

    with pytest.raises(DocumentError, match="either experiment_run"):
        run(doc("x", ("t", lake(load={"agent": "q"}))), store=store, results=tmp_path / "r")
    with pytest.raises(DocumentError, match="unknown key"):
        run(doc("x", ("t", lake(load={"experiment_run": "a", "phaze": 1}))), store=store, results=tmp_path / "r")


def test_replay_hands_the_stored_steps_to_pretrain(store, tmp_path, trained):
    from sqlalchemy import text

    result = run(doc("replayer", ("testing", lake(
        mode="test", episodes=5, brain="lineage_components:PretrainBrain",
        replay=[{"agent": "q", "experiment_run": "teacher", "phase": "training"}]))),
        store=store, results=tmp_path / "r")
    assert result.ok, result.traceback
    (seen,) = lineage_components.PRETRAINED
    with store.database.engine.connect() as conn:
        stored = conn.execute(text(
            "select step.worker, step.episode, step.step, step.done from step join phase on step.phase_id = phase.id "
            f"where phase.instance_id = {trained.instance_id} and phase.name = 'training' "
            "order by step.worker, step.episode, step.step")).all()
    assert [(e.worker, e.episode, e.step, e.done) for e in seen] == [tuple(r) for r in stored]
    assert all(e.sensors[0].uid == "lake.observation" and isinstance(e.sensors[0].value, int) for e in seen[:5])
    assert seen[0].next_sensors[0].value == seen[1].sensors[0].value
    # offline Q-learning on the teacher's experience is enough to cross the lake
    assert result.mean_rewards("test") == {"q": 1.0}
    assert ("q", "replay", "teacher", "training", None) in sources(store, result.instance_id)


def test_replay_of_a_run_without_stored_steps_says_how_to_store_them(store, tmp_path):
    plain = run(doc("no-steps", ("training", lake(episodes=3))), store=store, results=tmp_path / "r")
    assert plain.ok
    result = run(doc("replayer2", ("testing", lake(mode="test", episodes=1,
                                                   replay={"experiment_run": "no-steps"}))),
                 store=store, results=tmp_path / "r")
    assert result.status == "failed" and "--store-steps all" in result.error
