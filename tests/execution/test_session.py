"""TrainingSession: a training loop that lives elsewhere, recorded in the
store with checkpoints; xrun's status, export and tree see it."""

from __future__ import annotations

import csv
import json

import pytest
from gymnasium import spaces

from xdoe import TrainingSession
from xdoe.agent import Experience
from xdoe.components.agents import DummyBrain
from xdoe.environment import ActuatorInformation, RewardInformation, SensorInformation
from xdoe.errors import InputError
from xdoe.execution import checkpoints_of, latest_checkpoint, load_brain


def test_end_to_end_then_status_export_tree(store, tmp_path):
    brain = DummyBrain()
    rewards = [1.0, 3.0, 2.0, 5.0, 4.0, 0.0]
    with TrainingSession(brain, store=store, run="loop-a", experiment="loops", agent="learner",
                         levels={"lr": 0.01}, checkpoint_every=8, keep_checkpoints=2, best_window=2,
                         max_steps=30, results=tmp_path / "results") as s:
        k = 0
        while not s.is_done():
            for _ in range(5):
                s.observe()
            brain.experiences = k
            s.on_episode(rewards[k], status="terminated", extras={"k": k})
            s.maybe_save_best()
            k += 1
        assert k == 6 and s.steps == 30 and s.episodes == 6
        summary = s.stats_summary()
        assert summary["episodes"] == 6 and summary["steps"] == 30
        assert summary["mean_reward"] == pytest.approx(15 / 6) and summary["last_reward"] == 0.0
        assert summary["best"] == pytest.approx(4.5)  # mean of 5.0 and 4.0, the best window of 2
        assert s.steps_per_sec() > 0
        report = s.eval_report(3)
        assert report["n"] == 3 and report["mean"] == pytest.approx(3.0)
        assert (report["min"], report["max"]) == (0.0, 5.0)
        assert report["std"] == pytest.approx((14 / 3) ** 0.5)  # of 5, 4, 0
        instance_id = s.instance_id
    assert s.status == "finished"
    # checkpoints: the newest 2 (the best, saved after episode 5, and the
    # end-of-phase one) of 9 saves (3 every 8 steps, 5 improvements, 1 final)
    assert len(s.checkpoints) == 9
    rows = checkpoints_of(store, instance_id)
    assert [(r.step, r.best) for r in rows] == [(25, True), (30, False)]
    best = next(r for r in rows if r.best)
    assert best.metric == pytest.approx(4.5)
    assert all(r.path.is_file() for r in rows)
    assert sorted(p.name for p in rows[0].path.parent.iterdir()) == sorted(r.path.name for r in rows)
    final = latest_checkpoint(store, "loop-a", "learner", "training")
    assert (final.step, final.episode) == (30, 6)  # the end-of-phase checkpoint
    fresh = DummyBrain()
    load_brain(fresh, final)
    assert fresh.experiences == 5
    # the store's views see the session
    status = store.views.campaign_status(experiment="loops")
    assert [(r.run, r.status) for r in status.runs] == [("loop-a", "finished")]
    result = store.views.export_episodes(tmp_path / "t.csv", "loops")
    with open(result.path, newline="") as fh:
        table = list(csv.DictReader(fh))
    assert [float(r["reward"]) for r in table] == rewards
    assert {r["lr"] for r in table} == {"0.01"} and {r["agent"] for r in table} == {"learner"}
    assert [int(r["steps"]) for r in table] == [5] * 6
    tree = store.views.build_lineage("loops")
    agent = tree[0].instances[0].phases[0].agents[0]
    assert (agent.agent, agent.kind, agent.checkpoints) == ("learner", "fresh", 2)
    episodes = [json.loads(line) for line in open(s.results_dir / "episodes.jsonl")]
    assert len(episodes) == 6


def test_failure_is_recorded_with_traceback(store, tmp_path):
    with pytest.raises(ZeroDivisionError):
        with TrainingSession(DummyBrain(), store=store, run="loop-b", results=tmp_path) as s:
            s.on_episode(1.0, steps=3)
            1 / 0
    inst = store.runs.instance(s.instance_id)
    assert inst.status == "failed" and inst.error.startswith("ZeroDivisionError")
    assert "1 / 0" in inst.traceback
    assert checkpoints_of(store, s.instance_id) == []  # no final checkpoint of a failed run


def test_steps_given_per_episode_phases_and_agent_objects(store, tmp_path):
    class Agent:
        name = "pilot"

        def __init__(self) -> None:
            self.brain = DummyBrain()

    s = TrainingSession(Agent(), store=store, run="loop-c", checkpoint_every=10, max_episodes=4,
                        results=tmp_path, save_final=False)
    s.start()
    assert s.agent == "pilot"
    for _ in range(3):
        s.on_episode(2.0, steps=7)  # steps not observed one by one still count
    assert s.steps == 21 and not s.is_done()
    assert [c.step for c in s.checkpoints] == [14, 21]  # due at 10 and 20: saved after the episode
    s.new_phase("testing", "test")
    s.on_episode(1.0, steps=2)
    assert s.is_done()
    s.close()
    phases = [(p.index, p.name, p.mode, p.status) for p in
              store.views.build_lineage(run="loop-c")[0].instances[0].phases]
    assert phases == [(0, "training", "train", "finished"), (1, "testing", "test", "finished")]
    kinds = [p.agents[0].kind for p in store.views.build_lineage(run="loop-c")[0].instances[0].phases]
    assert kinds == ["fresh", "previous_phase"]


def test_observe_experience_learns_and_stores_steps(store, tmp_path):
    from components import RecordingBrain

    brain = RecordingBrain()
    box = spaces.Discrete(3)
    with TrainingSession(brain, store=store, run="loop-d", store_steps="all", results=tmp_path) as s:
        for t in range(4):
            exp = Experience(worker=0, episode=0, step=t, sensors=[SensorInformation("e.s", box, t)],
                             actuators=[ActuatorInformation("e.a", box, 1)],
                             rewards=[RewardInformation("e.r", 0.5)], objective=0.5,
                             next_sensors=[], done=t == 3)
            assert s.observe(exp) == ("update", t + 1)
        s.on_episode(2.0)
    assert len(brain.experiences) == 4
    from sqlalchemy import func, select

    from xdoe.store import Episode, Step

    with store.database.session() as db:
        assert db.execute(select(func.count()).select_from(Step)).scalar_one() == 4
        assert db.execute(select(Episode.steps)).scalar_one() == 4


def test_invalid_arguments(store):
    with pytest.raises(InputError, match="max_steps"):
        TrainingSession(DummyBrain(), store=store, run="x", max_steps=0)
    with pytest.raises(InputError, match="run"):
        TrainingSession(DummyBrain(), store=store, run="")
    with pytest.raises(InputError, match="keep_checkpoints"):
        TrainingSession(DummyBrain(), store=store, run="x", keep_checkpoints=0)
