"""The phase loop in rounds (issue 26.2): with a muscle class that acts for
several workers in one call (``Muscle.propose_batch``), the workers of a
``worker: N`` phase step in lockstep, one call per agent and round; every
worker still runs its own episodes, conditions and budget, and workers whose
episodes are done leave the batch."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import lockstep_components

from xdoe.execution import run

DUMMY = "xdoe.agents:DummyMuscle"
BATCHING = "lockstep_components:BatchingDummyMuscle"
CARTPOLE = {"name": "xdoe.environments:GymnasiumEnvironment", "uid": "cp",
            "params": {"env_id": "CartPole-v1", "max_episode_steps": 40}}
DONE = {"name": "xdoe.conditions:EnvironmentTerminationCondition"}


def _doc(muscle: str, conditions: list, worker: int = 3, episodes: int = 4, seed: int = 9) -> dict:
    agent = {"name": "a", "brain": {"name": "components:RecordingBrain"}, "muscle": {"name": muscle},
             "objective": {"name": "xdoe.agents:RewardObjective"}}
    phase = {"environments": [{"environment": CARTPOLE}], "agents": [agent],
             "simulation": {"name": "xdoe.simulation:VanillaSimController", "conditions": conditions},
             "phase_config": {"mode": "train", "worker": worker, "episodes": episodes}}
    return {"uid": f"lockstep-{muscle.split(':')[1]}", "experiment_uid": "lockstep", "seed": seed,
            "schedule": [{"training": phase}]}


def _stored(doc: dict, folder: Path) -> tuple[list, list, object]:
    """(step rows, episode rows) sorted by worker, episode, step; the run's result."""
    lockstep_components.BATCHES.clear()
    result = run(doc, store=f"sqlite:///{folder / 's.db'}", results=folder / "r", store_steps="all")
    assert result.ok, result.traceback
    with sqlite3.connect(folder / "s.db") as con:
        steps = con.execute("SELECT worker, episode, step, sensors, actions, rewards, done, terminated, truncated, "
                            "cut_by FROM step ORDER BY worker, episode, step").fetchall()
        episodes = con.execute("SELECT worker, episode, steps, reward, terminated, truncated, cut_by FROM episode "
                               "ORDER BY worker, episode").fetchall()
    return steps, episodes, result


def test_lockstep_rounds_store_what_workers_in_turn_store(tmp_path: Path) -> None:
    """A muscle whose actions do not depend on the brain acts the same
    whether the workers step in turn or in lockstep: the same rows, episode
    by episode, with conditions that end episodes at different steps
    (CartPole's own end, a step limit per episode) and workers that finish
    their budget at different rounds."""
    conditions = [DONE, {"name": "xdoe.conditions:MaxStepsTerminationCondition", "params": {"episode_steps": 25}}]
    turn_steps, turn_episodes, _ = _stored(_doc(DUMMY, conditions), tmp_path / "turn")
    assert lockstep_components.BATCHES == []
    steps, episodes, result = _stored(_doc(BATCHING, conditions), tmp_path / "lockstep")
    batches = lockstep_components.BATCHES
    assert (steps, episodes) == (turn_steps, turn_episodes)
    # every worker ran its 4 episodes, each as long as its stored steps
    assert [(w, e) for w, e, *_ in episodes] == [(w, e) for w in range(3) for e in range(4)]
    for worker, episode, length, *_ in episodes:
        assert [s[2] for s in steps if s[:2] == (worker, episode)] == list(range(length))
    assert {cut for *_, cut in episodes} == {None, "MaxStepsTerminationCondition"}  # both kinds of ends
    # one call per round while 3 or 2 workers run; the last worker alone acts without a batch
    lengths = sorted((sum(length for w, _, length, *_ in episodes if w == worker) for worker in range(3)))
    assert batches.count(3) == lengths[0] and batches.count(2) == lengths[1] - lengths[0]
    assert len(batches) == lengths[1] and lengths[2] > lengths[1]  # the workers retired at different rounds
    assert result.phases[0].steps == len(steps) == sum(lengths)


def test_a_step_budget_that_stops_a_round_drops_the_later_workers_actions(tmp_path: Path) -> None:
    """``phase_steps: 10`` with 3 workers: rounds of 3 steps, the 10th update
    (worker 0, 4th round) stops the phase. Workers 1 and 2 had acted in that
    round, but their actions never reached their environments: no transition,
    their last stored step is their 3rd; nothing else differs from workers
    stepping in turn, where their 3rd step was still pending and ended the
    episode (done, truncated by the budget)."""
    conditions = [DONE, {"name": "xdoe.conditions:MaxStepsTerminationCondition", "params": {"phase_steps": 10}}]
    turn_steps, turn_episodes, _ = _stored(_doc(DUMMY, conditions), tmp_path / "turn")
    steps, episodes, result = _stored(_doc(BATCHING, conditions), tmp_path / "lockstep")
    assert lockstep_components.BATCHES == [3, 3, 3, 3]
    assert result.phases[0].steps == len(steps) == 10
    assert episodes == turn_episodes
    assert [(w, length, truncated, cut) for w, _, length, _, _, truncated, cut in episodes] == [
        (0, 4, 1, "step_budget"), (1, 3, 1, "step_budget"), (2, 3, 1, "step_budget")]
    differ = [(a[:3], a[6:], b[6:]) for a, b in zip(steps, turn_steps) if a != b]
    assert differ == [((w, 0, 2), (0, 0, 0, None), (1, 0, 1, "step_budget")) for w in (1, 2)]
    assert [s[:6] for s in steps] == [s[:6] for s in turn_steps]


def test_the_brain_learns_every_transition_of_a_round_before_the_next_round_acts(tmp_path: Path) -> None:
    """Lockstep order: at the start of every round each worker's previous
    transition reaches the brain, then the agent acts in all workers."""
    from components import BRAINS

    BRAINS.clear()
    conditions = [DONE, {"name": "xdoe.conditions:MaxStepsTerminationCondition", "params": {"episode_steps": 3}}]
    _stored(_doc(BATCHING, conditions, worker=2, episodes=2), tmp_path)
    (brain,) = BRAINS
    # worker, episode, step of every experience, in the order the brain got them
    order = [e[:3] for e in brain.experiences]
    assert order == [(0, 0, 0), (1, 0, 0), (0, 0, 1), (1, 0, 1), (0, 0, 2), (1, 0, 2),
                     (0, 1, 0), (1, 1, 0), (0, 1, 1), (1, 1, 1), (0, 1, 2), (1, 1, 2)]
    assert json.dumps([e[4] for e in brain.experiences]) == json.dumps([False, False, False, False, True, True] * 2)
