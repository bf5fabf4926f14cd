"""Components for the session-tree tests (``tree_components:Class``; tests/tree is on ``sys.path``)."""

from __future__ import annotations

from typing import Any

from hold import hold_here
from xdoe.environment import EnvironmentState, RewardInformation
from xdoe.components.environments import DummyEnvironment


class LevelEnvironment(DummyEnvironment):
    """A DummyEnvironment whose reward is ``level`` at every step, so a
    session's metric is ``length * level`` whatever the agent learned:
    directions that change ``level`` make healthy and dead sessions on
    purpose. Each episode start is a point of :func:`hold.hold_here` (to be
    killed there, mid-run; nothing without ``XDOE_TEST_HOLD``)."""

    def __init__(self, uid: str, seed: int, level: float = 1.0, **params: Any) -> None:
        super().__init__(uid=uid, seed=seed, **params)
        self.level = float(level)
        self.started = 0

    def start_environment(self) -> Any:
        hold_here(self.started)
        self.started += 1
        return super().start_environment()

    def update(self, actuators: Any) -> EnvironmentState:
        state = super().update(actuators)
        return EnvironmentState(sensors=state.sensors,
                                rewards=[RewardInformation(self.full_id("reward"), self.level)],
                                done=state.done)
