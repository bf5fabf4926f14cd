"""Fixtures of the store conformance suite (run on every backend via ``store_url``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from xdoe.store import Store


@pytest.fixture
def store(store_url: str) -> Iterator[Store]:
    """A fresh store on the backend of ``store_url``."""
    opened = Store(store_url)
    yield opened
    opened.close()


def run_document(uid: str = "taxi-study-0003", *, experiment: str | None = "taxi-study",
                 alpha: float = 0.5, index: int = 3, repetition: int = 0) -> dict[str, Any]:
    """A run document in the shape xgen writes (see docs/architecture.md)."""
    doc: dict[str, Any] = {
        "uid": uid,
        "seed": 1804289383,
        "version": "1.0",
        "design_point": {"index": index, "repetition": repetition, "levels": {"alpha": alpha}},
        "schedule": [
            {"training": {
                "environments": [{"environment": {"name": "xdoe.environments:GymnasiumEnvironment",
                                                  "uid": "taxi", "params": {"env_id": "Taxi-v4"}}}],
                "agents": [{"name": "learner",
                            "brain": {"name": "xdoe.agents:QLearningBrain", "params": {"alpha": alpha}},
                            "muscle": {"name": "xdoe.agents:QLearningMuscle", "params": {"epsilon": 0.1}},
                            "objective": {"name": "xdoe.agents:RewardObjective", "params": {}},
                            "sensors": ["taxi.observation"], "actuators": ["taxi.action"]}],
                "phase_config": {"mode": "train", "worker": 2, "episodes": 3},
            }},
            {"testing": {"phase_config": {"mode": "test", "worker": 1, "episodes": 2}}},
        ],
    }
    if experiment is not None:
        doc["experiment_uid"] = experiment
    return doc


@pytest.fixture
def make_document() -> Callable[..., dict[str, Any]]:
    return run_document
