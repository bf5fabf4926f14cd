"""Components for the resume, lineage and checkpoint tests (referenced as
``lineage_components:Class``; tests/execution is on ``sys.path``)."""

from __future__ import annotations

from typing import Any

from xdoe.agent import Experience
from xdoe.components.agents import QLearningBrain
from xdoe.components.environments import DummyEnvironment

#: Every PretrainBrain's received experiences, in order.
PRETRAINED: list[list[Experience]] = []


class ParamEnvironment(DummyEnvironment):
    """A DummyEnvironment that also takes a ``gravity`` and a ``wind`` (to be sampled)."""

    def __init__(self, uid: str, seed: int, gravity: float = 9.81, wind: float = 0.0,
                 **params: Any) -> None:
        super().__init__(uid=uid, seed=seed, **params)
        self.gravity = gravity
        self.wind = wind


class PretrainBrain(QLearningBrain):
    """A Q-learning brain that records what ``pretrain`` received."""

    def pretrain(self, experiences):
        seen = list(experiences)
        PRETRAINED.append(seen)
        super().pretrain(seen)
