"""A question with a known answer, for the walk-through "Adaptive or
designed?" (docs/how-to/adaptive-vs-designed.md): :class:`PeakEnvironment`
pays, at the one step of each episode,

    reward = 10 - 12 (x1 - 0.3)^2 - 8 (x2 - 0.65)^2 - 6 (x1 - 0.3)(x2 - 0.65) + N(0, 1)

so the best setting is x1 = 0.3, x2 = 0.65, where the mean reward is 10.
The noise comes from the environment's seeded rng: the same run document
gives the same episodes. Import it with ``PYTHONPATH=experiments``.
"""

from __future__ import annotations

from gymnasium import spaces

from xdoe.environment import (
    ActuatorInformation,
    Environment,
    EnvironmentBaseline,
    EnvironmentState,
    RewardInformation,
    SensorInformation,
)

#: the best setting and its mean reward
OPTIMUM = {"x1": 0.3, "x2": 0.65}
MAXIMUM = 10.0


def truth(x1: float, x2: float) -> float:
    """The mean reward at ``(x1, x2)``."""
    dx, dy = x1 - OPTIMUM["x1"], x2 - OPTIMUM["x2"]
    return MAXIMUM - 12.0 * dx * dx - 8.0 * dy * dy - 6.0 * dx * dy


class PeakEnvironment(Environment):
    """One-step episodes paying :func:`truth` plus N(0, ``noise``^2).

    Parameters:
        uid: the environment uid.
        seed: seeds the noise.
        x1, x2: the setting (any float; the maximum is inside [0, 1]^2).
        noise: the standard deviation of an episode's reward.
    """

    def __init__(self, uid: str, seed: int, x1: float = 0.5, x2: float = 0.5, noise: float = 1.0) -> None:
        super().__init__(uid=uid, seed=seed)
        self.mean, self.noise = truth(float(x1), float(x2)), float(noise)

    def _sensors(self) -> list[SensorInformation]:
        return [SensorInformation(self.full_id("s"), spaces.Discrete(2), 0)]

    def start_environment(self) -> EnvironmentBaseline:
        return EnvironmentBaseline(sensors=self._sensors(),
                                   actuators=[ActuatorInformation(self.full_id("a"), spaces.Discrete(2))])

    def update(self, actuators: list[ActuatorInformation]) -> EnvironmentState:
        reward = self.mean + self.noise * float(self.rng.standard_normal())
        return EnvironmentState(sensors=self._sensors(),
                                rewards=[RewardInformation(self.full_id("reward"), reward)], done=True)
