"""SB3Brain / SB3Muscle through the executor: reproducibility, workers,
``load:`` from another run and resume after SIGKILL."""

from __future__ import annotations

import pytest

pytest.importorskip("stable_baselines3")

from test_resume import _count, _kill, _start, assert_exactly_once  # noqa: E402

from xdoe.execution import run  # noqa: E402

PPO = {"n_steps": 32, "batch_size": 32, "n_epochs": 2}
DQN = {"learning_starts": 50, "train_freq": 16, "gradient_steps": 4, "batch_size": 16}


def cartpole(algorithm="PPO", hp=PPO, mode="train", episodes=6, worker=1, **extra):
    agent = {"name": "a",
             "brain": {"name": "xdoe.agents:SB3Brain",
                       "params": {"algorithm": algorithm, "hyperparameters": hp, "total_timesteps": 2000}},
             "muscle": {"name": "xdoe.agents:SB3Muscle"},
             "objective": {"name": "xdoe.agents:RewardObjective"}, **extra}
    return {"environments": [{"environment": {"name": "xdoe.environments:GymnasiumEnvironment", "uid": "cp",
                                              "params": {"env_id": "CartPole-v1", "max_episode_steps": 60}}}],
            "agents": [agent], "simulation": {"name": "xdoe.simulation:VanillaSimController"},
            "phase_config": {"mode": mode, "worker": worker, "episodes": episodes}}


def doc(uid, *phases, seed=5):
    return {"uid": uid, "experiment_uid": "sb3", "seed": seed, "schedule": [{n: b} for n, b in phases]}


def rows(store, instance_id):
    return [(e["phase"], e["worker"], e["episode"], e["steps"], e["reward"])
            for e in store.runs.episodes(instance_id=instance_id)]


def _steps(store, instance_id):
    from sqlalchemy import select

    from xdoe.store import Phase
    from xdoe.store import Step

    with store.database.session() as s:
        return [(r.worker, r.episode, r.step, r.sensors, r.actions, r.rewards) for r in s.execute(
            select(Step).join(Phase, Phase.id == Step.phase_id).where(Phase.instance_id == instance_id)
            .order_by(Step.id)).scalars()]


@pytest.mark.parametrize("algorithm, hp", [("PPO", PPO), ("DQN", DQN)])
def test_same_document_same_actions_and_rewards(store, tmp_path, algorithm, hp):
    d = doc(f"same-{algorithm}", ("training", cartpole(algorithm, hp, episodes=8, worker=2)),
            ("testing", cartpole(algorithm, hp, mode="test", episodes=2)))
    first = run(d, store=store, results=tmp_path / "r", store_steps="all")
    second = run(d, store=store, results=tmp_path / "r", store_steps="all", rerun=True)
    assert first.ok and second.ok, first.traceback or second.traceback
    assert rows(store, first.instance_id) == rows(store, second.instance_id)
    steps = [_steps(store, i) for i in (first.instance_id, second.instance_id)]
    assert len(steps[0]) > 200
    assert steps[0] == steps[1]
    other = run({**d, "seed": 6}, store=store, results=tmp_path / "r", store_steps="all")
    assert rows(store, other.instance_id) != rows(store, first.instance_id)


def test_load_a_trained_policy_from_another_run(store, tmp_path):
    teacher = run(doc("teacher", ("training", cartpole(episodes=4))), store=store, results=tmp_path / "r")
    assert teacher.ok, teacher.traceback
    student = run(doc("student", ("testing", cartpole(mode="test", episodes=3, load={
        "agent": "a", "experiment_run": "teacher", "phase": "training"}))), store=store, results=tmp_path / "r")
    assert student.ok, student.traceback
    fresh = run(doc("fresh", ("testing", cartpole(mode="test", episodes=3))), store=store, results=tmp_path / "r")
    # a deterministic policy on deterministic CartPole starts: loaded != freshly initialised
    assert rows(store, student.instance_id) != rows(store, fresh.instance_id)


@pytest.mark.slow
def test_resume_after_sigkill_with_an_sb3_brain(store, tmp_path):
    d = doc("killed-sb3", ("training", cartpole("DQN", DQN, episodes=40, checkpoint_every=100,
                                                 brain={"name": "xdoe.agents:SB3Brain", "params": {
                                                     "algorithm": "DQN", "hyperparameters": DQN,
                                                     "store_replay_buffer": True}})),
            ("testing", cartpole("DQN", DQN, mode="test", episodes=3)))
    d["schedule"][0]["training"]["phase_config"]["checkpoint_every"] = 100
    del d["schedule"][0]["training"]["agents"][0]["checkpoint_every"]
    d["schedule"][0]["training"]["environments"][0]["environment"]["name"] = \
        "held_environments:HeldGymnasiumEnvironment"  # held where _start asks, to be killed there
    proc = _start(tmp_path, d, store.url, 30)  # at the 30th of 40 episode starts: checkpoints stored
    assert _count(store, "select count(*) from checkpoint") >= 2
    _kill(proc)
    (inst,) = store.runs.instances()
    assert inst.status == "running"
    resumed = run(d, store=store, results=tmp_path / "r")
    assert resumed.ok and resumed.resumed, resumed.traceback
    assert_exactly_once(store, inst.id, [("training", 1, 40), ("testing", 1, 3)])


def test_lockstep_workers_are_reproducible(store, tmp_path):
    """``worker: 3`` PPO acts in one forward pass per round (``SB3Muscle.propose_batch``,
    issue 26.2): the same document stores the same rows, step by step; another seed others."""
    import lockstep_components

    d = doc("lockstep-ppo", ("training", cartpole(episodes=5, worker=3, muscle={
        "name": "lockstep_components:BatchingSB3Muscle"})), ("testing", cartpole(mode="test", episodes=2, worker=3)))
    lockstep_components.BATCHES.clear()
    first = run(d, store=store, results=tmp_path / "r", store_steps="all")
    assert first.ok, first.traceback
    assert set(lockstep_components.BATCHES) == {2, 3} and lockstep_components.BATCHES[0] == 3
    second = run(d, store=store, results=tmp_path / "r", store_steps="all", rerun=True)
    assert second.ok, second.traceback
    steps = [_steps(store, i) for i in (first.instance_id, second.instance_id)]
    assert len(steps[0]) > 300 and steps[0] == steps[1]
    assert rows(store, first.instance_id) == rows(store, second.instance_id)
    other = run({**d, "seed": 6}, store=store, results=tmp_path / "r", store_steps="all")
    assert other.ok, other.traceback
    assert _steps(store, other.instance_id) != steps[0]
