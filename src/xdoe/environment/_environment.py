"""Base classes users subclass for environments and rewards."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from xdoe.environment._information import (
    ActuatorInformation,
    EnvironmentBaseline,
    EnvironmentState,
    RewardInformation,
    SensorInformation,
)

__all__ = ["Environment", "Reward"]


class Environment(ABC):
    """An environment agents act in.

    The executor constructs it as ``Cls(uid=..., seed=..., **params)`` with the
    ``params`` of the run document, once per worker. Every random choice must
    come from :attr:`rng` (seeded from the run seed per phase, worker and
    environment), never from global random state.

    Lifecycle, per episode: :meth:`start_environment` once (a reset), then
    :meth:`update` once per simulation step until the returned state is done or
    a termination condition ends the episode. :meth:`close` is called when the
    phase ends.

    Sensor, actuator and reward ids are full ids ``<uid>.<name>``; use
    :meth:`full_id` to build them.

    The executor steps every environment the same way, through these
    methods; there is no second, faster protocol to keep in step with them.
    A fast environment makes :meth:`update` itself cheap (see
    ``GymnasiumEnvironment``).
    """

    def __init__(self, uid: str, seed: int, **params: Any) -> None:
        if params:
            raise TypeError(f"unexpected parameters: {', '.join(sorted(params))}")
        self.uid = uid
        self.seed = seed
        self.rng = np.random.default_rng(seed)

    def full_id(self, name: str | int) -> str:
        """``"<uid>.<name>"``."""
        return f"{self.uid}.{name}"

    @abstractmethod
    def start_environment(self) -> EnvironmentBaseline:
        """Reset for a new episode and describe every sensor and actuator."""

    @abstractmethod
    def update(self, actuators: list[ActuatorInformation]) -> EnvironmentState:
        """Apply the actuators set this step (others carry ``value=None`` or are
        absent) and advance one step."""

    def close(self) -> None:
        """Release resources (called at the end of each phase)."""


class Reward(ABC):
    """Turns an environment's sensor readings into reward signals.

    Declared in a run document as an environment's ``reward`` block; when
    present the executor replaces the environment's own rewards with
    ``reward(sensors, rewards)``. Constructed as ``Cls(**params)``.
    """

    def __init__(self, **params: Any) -> None:
        if params:
            raise TypeError(f"unexpected parameters: {', '.join(sorted(params))}")

    @abstractmethod
    def __call__(
        self, sensors: list[SensorInformation], rewards: list[RewardInformation]
    ) -> list[RewardInformation]:
        """Return the rewards the agents receive this step."""
