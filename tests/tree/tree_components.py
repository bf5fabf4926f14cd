"""Components for the session-tree tests (``tree_components:Class``; tests/tree is on ``sys.path``)."""

from __future__ import annotations

import time
from typing import Any

from xdoe.environment import EnvironmentState, RewardInformation
from xdoe.components.environments import DummyEnvironment


class LevelEnvironment(DummyEnvironment):
    """A DummyEnvironment whose reward is ``level`` at every step, so a
    session's metric is ``length * level`` whatever the agent learned:
    directions that change ``level`` make healthy and dead sessions on
    purpose. ``delay`` seconds per update (to be killed mid-run)."""

    def __init__(self, uid: str, seed: int, level: float = 1.0, delay: float = 0.0, **params: Any) -> None:
        super().__init__(uid=uid, seed=seed, **params)
        self.level = float(level)
        self.delay = float(delay)

    def update(self, actuators: Any) -> EnvironmentState:
        if self.delay:
            time.sleep(self.delay)
        state = super().update(actuators)
        return EnvironmentState(sensors=state.sensors,
                                rewards=[RewardInformation(self.full_id("reward"), self.level)],
                                done=state.done)
