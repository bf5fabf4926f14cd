"""Builders of small run documents for the session-tree tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

#: This folder (``tree_components`` lives here; subprocesses need it on PYTHONPATH).
HERE = Path(__file__).resolve().parent


def level_document(uid: str = "lv", *, level: float = 1.0, train: int = 3,
                   test: int = 2, length: int = 3, alpha: float = 0.1) -> dict[str, Any]:
    """A two-phase run document (train, then test) on a LevelEnvironment with a Q-learner."""
    env = {"environment": {"name": "tree_components:LevelEnvironment", "uid": "env",
                           "params": {"level": level, "length": length, "sensors": 1,
                                      "actuators": 1, "discrete": True}}}
    agent = {"name": "learner", "brain": {"name": "xdoe.agents:QLearningBrain", "params": {"alpha": alpha}},
             "muscle": {"name": "xdoe.agents:QLearningMuscle", "params": {"epsilon": 0.2}},
             "objective": {"name": "xdoe.agents:RewardObjective", "params": {}}}
    sim = {"name": "xdoe.simulation:VanillaSimController", "conditions": []}
    return {"uid": uid, "experiment_uid": "lv", "seed": 7, "version": "1.0", "schedule": [
        {"training": {"environments": [env], "agents": [agent], "simulation": sim,
                      "phase_config": {"mode": "train", "worker": 1, "episodes": train}}},
        {"testing": {"phase_config": {"mode": "test", "episodes": test}}},
    ]}
