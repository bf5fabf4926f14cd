"""Components for the resume, lineage and checkpoint tests (referenced as
``lineage_components:Class``; tests/execution is on ``sys.path``)."""

from __future__ import annotations

import time
from typing import Any

from xdoe.agent import Experience
from xdoe.components.agents import QLearningBrain
from xdoe.conditions import EpisodeProgress, TerminationCondition, Verdict
from xdoe.components.environments import DummyEnvironment

#: ``{"at": n}`` makes every InterruptAfter raise KeyboardInterrupt at the n-th episode.
ARMED: dict[str, int] = {}
#: Every PretrainBrain's received experiences, in order.
PRETRAINED: list[list[Experience]] = []


class InterruptAfter(TerminationCondition):
    """Raises KeyboardInterrupt (as Ctrl-C would) after ``ARMED["at"]`` episodes of the run."""

    def __init__(self) -> None:
        super().__init__()
        self.seen = 0

    def episode_finished(self, episode: EpisodeProgress) -> Verdict:
        self.seen += 1
        if ARMED and self.seen == ARMED["at"]:
            raise KeyboardInterrupt
        return Verdict.CONTINUE


class SlowDummy(DummyEnvironment):
    """A DummyEnvironment whose updates take ``delay`` seconds (to be killed mid-phase)."""

    def __init__(self, uid: str, seed: int, delay: float = 0.0, **params: Any) -> None:
        super().__init__(uid=uid, seed=seed, **params)
        self.delay = delay

    def update(self, actuators):
        time.sleep(self.delay)
        return super().update(actuators)


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
