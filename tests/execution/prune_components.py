"""A known-truth learning study for pruning (issue 37): :class:`CurveEnvironment`
pays, at the last of the ``length`` steps of its ``e``-th episode,

    reward = quality(lr, width) * (1 - exp(-(e + 1) / 5)) + N(0, 0.3^2)

with ``quality = 10 - 3 |log10(lr) + 2| - 2 |log2(width) / 3 - 2|``: the best
setting is ``lr = 0.01, width = 64`` (quality 10), every other is at least
2 worse, so a pruner that keeps the best configuration and drops the worst
is checked against a known answer. The noise comes from the environment's
seeded rng (the same run document gives the same episodes).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from gymnasium import spaces

from hold import hold_here
from xdoe.environment import (
    ActuatorInformation,
    Environment,
    EnvironmentBaseline,
    EnvironmentState,
    RewardInformation,
    SensorInformation,
)

LENGTH = 10          # steps per episode
TRAIN_EPISODES = 60  # 600 environment steps of training per run
TEST_EPISODES = 5
LRS = [0.001, 0.01, 0.1, 1.0]
WIDTHS = [8, 64, 512]
BEST = {"lr": 0.01, "width": 64}


def quality(lr: float, width: float) -> float:
    return 10.0 - 3.0 * abs(math.log10(lr) + 2.0) - 2.0 * abs(math.log2(width) / 3.0 - 2.0)


class CurveEnvironment(Environment):
    """Episodes of ``length`` steps paying the learning curve above at their
    last step; each episode start is a point of :func:`hold.hold_here` (kill tests)."""

    def __init__(self, uid: str, seed: int, lr: float = 0.01, width: float = 64, length: int = LENGTH,
                 noise: float = 0.3) -> None:
        super().__init__(uid=uid, seed=seed)
        self.quality = quality(float(lr), float(width))
        self.length, self.noise = int(length), float(noise)
        self.episode, self.t = -1, 0

    def _sensors(self) -> list[SensorInformation]:
        return [SensorInformation(self.full_id("s"), spaces.Discrete(2), 0)]

    def start_environment(self) -> EnvironmentBaseline:
        hold_here(self.episode + 1)  # a kill test's hold (tests/hold.py); nothing without XDOE_TEST_HOLD
        self.episode += 1
        self.t = 0
        return EnvironmentBaseline(sensors=self._sensors(),
                                   actuators=[ActuatorInformation(self.full_id("a"), spaces.Discrete(2))])

    def update(self, actuators: list[ActuatorInformation]) -> EnvironmentState:
        self.t += 1
        done = self.t >= self.length
        reward = 0.0
        if done:
            reward = (self.quality * (1.0 - math.exp(-(self.episode + 1) / 5.0))
                      + self.noise * float(self.rng.standard_normal()))
        return EnvironmentState(sensors=self._sensors(),
                                rewards=[RewardInformation(self.full_id("reward"), reward)], done=done)


def document(prune: dict[str, Any] | None, *, repetitions: int = 2, uid: str = "curves") -> dict[str, Any]:
    """The experiment document: ``lr`` x ``width`` (12 points) x ``repetitions``,
    a training phase of :data:`TRAIN_EPISODES` episodes (pruned by ``prune``)
    and a test phase."""
    random = {"name": "random", "brain": {"name": "xdoe.agents:DummyBrain", "params": {}},
              "muscle": {"name": "xdoe.agents:DummyMuscle", "params": {}},
              "objective": {"name": "xdoe.agents:RewardObjective", "params": {}}}
    definitions: dict[str, Any] = {
        "environments": {"c": {"environment": {"name": "prune_components:CurveEnvironment", "uid": "c",
                                               "params": {"lr": "${lr}", "width": "${width}"}}}},
        "agents": {"random": random},
        "simulation": {"v": {"name": "xdoe.simulation:VanillaSimController",
                             "conditions": [{"name": "xdoe.conditions:EnvironmentTerminationCondition"}]}},
        "phase_config": {"train": {"mode": "train", "worker": 1, "episodes": TRAIN_EPISODES},
                         "test": {"mode": "test", "worker": 1, "episodes": TEST_EPISODES}},
    }
    if prune is not None:
        definitions["run_config"] = {"prune": prune}
    return {
        "uid": uid, "seed": 11, "repetitions": repetitions, "design": "full_factorial",
        "factors": {"lr": {"levels": LRS}, "width": {"levels": WIDTHS}},
        "definitions": definitions,
        "schedule": [{"training": {"environments": [["c"]], "agents": [["random"]], "simulation": ["v"],
                                   "phase_config": ["train"]}},
                     {"testing": {"phase_config": ["test"]}}],
    }


def generate(folder: Path, prune: dict[str, Any] | None, **kw: Any) -> list[Path]:
    """Write the run documents into ``folder``; their paths in order."""
    from xdoe.design.runfiles import generate as xgen

    xgen(document(prune, **kw), folder)
    return sorted(folder.glob("run-*.yaml"))
