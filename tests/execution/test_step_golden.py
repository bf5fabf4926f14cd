"""Every row the built-in studies store, step rows included, pinned against a
golden made by the code before the executor had one step protocol (issue 23,
main at aea22cf, which stepped Taxi and the one-sensor dummy through its
value stepper and the rest through ``Worker.act``/``update``): Taxi
Q-learning with a step-budget cut, the dummy study with one and with several
sensors, CartPole with Stable-Baselines3's PPO and DQN, and tic-tac-toe with
two agents taking turns. Each run keeps every step (``store_steps="all"``);
the golden holds the sha256 of the step rows and of the episode rows (wall
times aside) and the sum of the objectives.

Regenerate (only on purpose, from code known to be right):
``PYTHONPATH=src python tests/execution/test_step_golden.py``.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import sys
import tempfile
from pathlib import Path

import pytest

GOLDEN = Path(__file__).parent / "data" / "step_golden.json"
VANILLA = "xdoe.simulation:VanillaSimController"


def _agent(name: str, brain: str, muscle: str, brain_params: dict | None = None,
           muscle_params: dict | None = None, objective: dict | None = None, **extra) -> dict:
    return {"name": name, "brain": {"name": brain, "params": brain_params or {}},
            "muscle": {"name": muscle, "params": muscle_params or {}},
            "objective": {"name": "xdoe.agents:RewardObjective", "params": objective or {}}, **extra}


def _phase(env: dict, agents: list, mode: str, episodes: int, worker: int = 1, conditions: list | None = None,
           simulation: str = VANILLA) -> dict:
    return {"environments": [{"environment": env}], "agents": agents,
            "simulation": {"name": simulation, "conditions": conditions or []},
            "phase_config": {"mode": mode, "worker": worker, "episodes": episodes}}


def _doc(uid: str, seed: int, *phases: tuple[str, dict]) -> dict:
    return {"uid": uid, "experiment_uid": "step-golden", "seed": seed, "schedule": [{n: p} for n, p in phases]}


TAXI = {"name": "xdoe.environments:GymnasiumEnvironment", "uid": "taxi",
        "params": {"env_id": "Taxi-v4", "max_episode_steps": 80}}
QL = _agent("learner", "xdoe.agents:QLearningBrain", "xdoe.agents:QLearningMuscle", {"alpha": 0.5, "gamma": 0.95},
            {"epsilon": 0.2, "epsilon_decay": 0.99})
DONE = {"name": "xdoe.conditions:EnvironmentTerminationCondition"}
RANDOM = ("xdoe.agents:DummyBrain", "xdoe.agents:DummyMuscle")
CARTPOLE = {"name": "xdoe.environments:GymnasiumEnvironment", "uid": "cp",
            "params": {"env_id": "CartPole-v1", "max_episode_steps": 50}}


def _sb3(algorithm: str, hyperparameters: dict) -> dict:
    return _agent("learner", "xdoe.agents:SB3Brain", "xdoe.agents:SB3Muscle",
                  {"algorithm": algorithm, "hyperparameters": hyperparameters, "total_timesteps": 600})


def _dummy_env(sensors: int, actuators: int) -> dict:
    return {"name": "xdoe.environments:DummyEnvironment", "uid": "env",
            "params": {"length": 7, "sensors": sensors, "actuators": actuators}}


STUDIES = {
    "taxi-qlearning": _doc(
        "g-taxi", 11,
        ("training", _phase(TAXI, [QL], "train", 12, conditions=[
            DONE, {"name": "xdoe.conditions:MaxStepsTerminationCondition", "params": {"phase_steps": 700}}])),
        ("pairs", _phase(TAXI, [QL], "train", 3, worker=2, conditions=[DONE])),
        ("testing", _phase(TAXI, [QL], "test", 3))),
    "dummy-one-sensor": _doc(
        "g-dummy-1", 42,
        ("training", _phase(_dummy_env(1, 1), [_agent("random", *RANDOM)], "train", 3, conditions=[DONE])),
        ("testing", _phase(_dummy_env(1, 1), [_agent("random", *RANDOM)], "test", 2, conditions=[DONE]))),
    "dummy-study": _doc(
        "g-dummy-3", 42,
        ("training", _phase(_dummy_env(3, 2), [_agent("random", *RANDOM, sensors=["env.0", "env.1"],
                                                      actuators=["env.0", "env.1"])], "train", 3,
                            conditions=[DONE])),
        ("testing", _phase(_dummy_env(6, 4), [_agent("random", *RANDOM)], "test", 2, conditions=[DONE]))),
    "cartpole-ppo": _doc(
        "g-cp-ppo", 13,
        ("training", _phase(CARTPOLE, [_sb3("PPO", {"n_steps": 64, "batch_size": 32, "n_epochs": 2})], "train", 8,
                            conditions=[DONE])),
        ("testing", _phase(CARTPOLE, [_sb3("PPO", {"n_steps": 64, "batch_size": 32, "n_epochs": 2})], "test", 2))),
    "cartpole-dqn": _doc(
        "g-cp-dqn", 13,
        ("training", _phase(CARTPOLE, [_sb3("DQN", {"learning_starts": 50, "train_freq": 16, "gradient_steps": 4,
                                                    "batch_size": 16})], "train", 8, conditions=[DONE])),
        ("testing", _phase(CARTPOLE, [_sb3("DQN", {"learning_starts": 50, "train_freq": 16, "gradient_steps": 4,
                                                   "batch_size": 16})], "test", 2))),
    "tictactoe": _doc(
        "g-ttt", 7,
        ("training", _phase({"name": "xdoe.environments:TicTacToeEnvironment", "uid": "ttt"}, [
            _agent("x", "xdoe.agents:QLearningBrain", "xdoe.agents:QLearningMuscle", {"alpha": 0.5, "gamma": 0.9},
                   {"epsilon": 0.3}, {"reward_ids": ["ttt.reward_x"]}, sensors=["ttt.board", "ttt.turn"],
                   actuators=["ttt.move_x"]),
            _agent("o", *RANDOM, objective={"reward_ids": ["ttt.reward_o"]}, sensors=["ttt.board", "ttt.turn"],
                   actuators=["ttt.move_o"])], "train", 6, conditions=[DONE],
            simulation="xdoe.simulation:TakingTurnsSimController"))),
}


def stored(name: str, folder: Path) -> dict:
    """What the run of study ``name`` stored: sha256 of its step rows and of
    its episode rows (wall times aside), their counts, the objectives' sum."""
    from xdoe.execution import run
    from xdoe.store import Store

    with Store(f"sqlite:///{folder / 'store.sqlite'}") as store:
        result = run(STUDIES[name], store=store, results=folder / "results", store_steps="all")
        assert result.ok, result.traceback
    with sqlite3.connect(folder / "store.sqlite") as con:
        steps = con.execute(
            "SELECT p.name, s.worker, s.episode, s.step, s.agent, s.sensors, s.actions, s.rewards, s.objective, "
            "s.done, s.terminated, s.truncated, s.cut_by FROM step s JOIN phase p ON p.id = s.phase_id "
            "ORDER BY p.id, s.worker, s.episode, s.step, s.agent").fetchall()
        episodes = con.execute(
            "SELECT p.name, e.worker, e.episode, e.agent, e.steps, e.reward, e.objective, e.extras, e.terminated, "
            "e.truncated, e.cut_by FROM episode e JOIN phase p ON p.id = e.phase_id "
            "ORDER BY p.id, e.worker, e.episode, e.agent").fetchall()
    return {"steps": [len(steps), hashlib.sha256(json.dumps(steps).encode()).hexdigest()],
            "episodes": [len(episodes), hashlib.sha256(json.dumps(episodes).encode()).hexdigest()],
            "objective_sum": sum(row[6] for row in episodes)}


def _needs(name: str) -> None:
    if name.startswith("cartpole"):
        pytest.importorskip("stable_baselines3")


@pytest.mark.parametrize("name", sorted(STUDIES))
def test_study_stores_what_the_golden_holds(tmp_path: Path, name: str) -> None:
    _needs(name)
    assert stored(name, tmp_path) == json.loads(GOLDEN.read_text())[name]


if __name__ == "__main__":
    golden = {}
    for study in sorted(STUDIES):
        with tempfile.TemporaryDirectory() as d:
            golden[study] = stored(study, Path(d))
    GOLDEN.write_text(json.dumps(golden, indent=1, sort_keys=True) + "\n")
    sys.stdout.write(GOLDEN.read_text())
