"""A dummy environment: random readings, a reward from the actions."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from xdoe.environment import (
    ActuatorInformation,
    Environment,
    EnvironmentBaseline,
    EnvironmentState,
    RewardInformation,
    SensorInformation,
)

__all__ = ["DummyEnvironment"]


def _positive_int(name: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


class DummyEnvironment(Environment):
    """An environment of random sensor readings whose reward is computed from
    the actions; for trying pipelines, controllers and stores.

    Parameters:
        uid: the environment uid (prefix of every id).
        seed: seeds :attr:`rng`, the only source of randomness; the same seed
            gives the same readings episode after episode.
        length: steps per episode (>= 1); the ``length``-th update returns
            ``truncated=True`` (a time limit: ``done``, not ``terminated``).
        sensors: number of sensors (>= 0), ids ``<uid>.0`` .. ``<uid>.<sensors-1>``.
        actuators: number of actuators (>= 0), ids ``<uid>.0`` .. ``<uid>.<actuators-1>``.
        discrete: spaces are ``Discrete(10)`` (values 0..9) instead of
            ``Box(0, 1, (1,), float32)``.

    Sensor values are drawn from :attr:`rng` at every reset and update
    (uniform in [0, 1) as a shape-(1,) float32 array, or a uniform integer
    0..9 when ``discrete``).

    Reward ``<uid>.reward`` (unitless): the mean of the numeric action values
    set this step (an array contributes its mean; actuators left at ``None``
    do not count), 0.0 when no actuator is set. With ``Box(0, 1)`` actuators it
    lies in [0, 1], with ``Discrete(10)`` in [0, 9].

    Raises:
        ValueError: a parameter is not an integer in range.
    """

    def __init__(
        self,
        uid: str,
        seed: int,
        length: int = 10,
        sensors: int = 10,
        actuators: int = 10,
        discrete: bool = False,
    ) -> None:
        super().__init__(uid=uid, seed=seed)
        self.length = _positive_int("length", length, 1)
        self.n_sensors = _positive_int("sensors", sensors, 0)
        self.n_actuators = _positive_int("actuators", actuators, 0)
        self.discrete = bool(discrete)
        self.step_count = 0

    def _space(self) -> spaces.Space:
        if self.discrete:
            return spaces.Discrete(10)
        return spaces.Box(0.0, 1.0, (1,), dtype=np.float32)

    def _readings(self) -> list[SensorInformation]:
        out = []
        for i in range(self.n_sensors):
            if self.discrete:
                value: Any = int(self.rng.integers(10))
            else:
                value = self.rng.random(1, dtype=np.float32)
            out.append(SensorInformation(self.full_id(i), self._space(), value))
        return out

    def start_environment(self) -> EnvironmentBaseline:
        """Reset the step counter; fresh random readings; every actuator."""
        self.step_count = 0
        actuators = [
            ActuatorInformation(self.full_id(i), self._space()) for i in range(self.n_actuators)
        ]
        return EnvironmentBaseline(sensors=self._readings(), actuators=actuators)

    def update(self, actuators: list[ActuatorInformation]) -> EnvironmentState:
        """Reward the mean action value; ``done`` after ``length`` updates."""
        own = {self.full_id(i) for i in range(self.n_actuators)}
        values = [
            float(np.mean(np.asarray(a.value, dtype=float)))
            for a in actuators
            if a.uid in own and a.value is not None
        ]
        reward = float(np.mean(values)) if values else 0.0
        self.step_count += 1
        return EnvironmentState(
            sensors=self._readings(),
            rewards=[RewardInformation(self.full_id("reward"), reward)],
            truncated=self.step_count >= self.length,
        )
