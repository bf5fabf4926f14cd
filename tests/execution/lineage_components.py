"""Components for the resume, lineage and checkpoint tests (referenced as
``lineage_components:Class``; tests/execution is on ``sys.path``)."""

from __future__ import annotations

import os
import signal
import time
from typing import Any

from xdoe.agent import Experience
from xdoe.components.agents import QLearningBrain
from xdoe.conditions import EpisodeProgress, TerminationCondition, Verdict
from xdoe.components.environments import DummyEnvironment

#: ``{"at": n}`` makes every InterruptAfter press Ctrl-C at the n-th episode.
ARMED: dict[str, int] = {}
#: Every PretrainBrain's received experiences, in order.
PRETRAINED: list[list[Experience]] = []


class InterruptAfter(TerminationCondition):
    """Presses Ctrl-C (sends its own process SIGINT, which raises
    KeyboardInterrupt) after ``ARMED["at"]`` episodes of the run. A plain
    ``raise KeyboardInterrupt`` would count as plugin code failing its run."""

    def __init__(self) -> None:
        super().__init__()
        self.seen = 0

    def episode_finished(self, episode: EpisodeProgress) -> Verdict:
        self.seen += 1
        if ARMED and self.seen == ARMED["at"]:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)  # the handler raises KeyboardInterrupt long before this ends
        return Verdict.CONTINUE


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
