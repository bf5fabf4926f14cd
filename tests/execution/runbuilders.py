"""Run-document builders for executor tests (imported by test modules;
tests/execution is on ``sys.path`` via conftest.py)."""

from __future__ import annotations

import copy
from typing import Any


def taxi_phase(mode: str = "train", episodes: int = 5, worker: int = 1, **agent: Any) -> dict:
    learner = {
        "name": "learner",
        "brain": {"name": "xdoe.agents:QLearningBrain", "params": {"alpha": 0.5}},
        "muscle": {"name": "xdoe.agents:QLearningMuscle", "params": {"epsilon": 0.1}},
        "objective": {"name": "xdoe.agents:RewardObjective", "params": {}},
    }
    learner.update(agent)
    return {
        "environments": [
            {"environment": {"name": "xdoe.environments:GymnasiumEnvironment", "uid": "taxi",
                             "params": {"env_id": "Taxi-v4", "max_episode_steps": 30}}}
        ],
        "agents": [learner],
        "simulation": {"name": "xdoe.simulation:VanillaSimController", "conditions": []},
        "phase_config": {"mode": mode, "worker": worker, "episodes": episodes},
    }


def counting_phase(mode: str = "train", episodes: int = 3, worker: int = 1, length: int = 4,
                   conditions: list | None = None, **agent: Any) -> dict:
    """A phase with ``components:CountingEnvironment`` and a recording agent."""
    a = {
        "name": "agent",
        "brain": {"name": "components:RecordingBrain", "params": {}},
        "muscle": {"name": "components:CountingMuscle", "params": {}},
        "objective": {"name": "xdoe.agents:RewardObjective", "params": {}},
    }
    a.update(agent)
    return {
        "environments": [
            {"environment": {"name": "components:CountingEnvironment", "uid": "env",
                             "params": {"length": length}}}
        ],
        "agents": [a],
        "simulation": {"name": "xdoe.simulation:VanillaSimController",
                       "conditions": conditions or []},
        "phase_config": {"mode": mode, "worker": worker, "episodes": episodes},
    }


def run_document(*phases: tuple[str, dict], uid: str = "test-run", seed: int = 11,
                 run_condition: dict | None = None) -> dict:
    doc: dict[str, Any] = {
        "uid": uid,
        "experiment_uid": "tests",
        "seed": seed,
        "schedule": [{name: copy.deepcopy(body)} for name, body in phases],
    }
    if run_condition is not None:
        doc["run_config"] = {"condition": run_condition}
    return doc
