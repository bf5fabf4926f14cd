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

    **Value steps** (optional, a faster step): an environment with exactly one
    sensor, one actuator and one reward (no ``owner``, no ``left``, the same
    sensor every step) may also implement :meth:`value_ids`,
    :meth:`update_values` and :meth:`last_state`. When every component of a
    phase supports value steps (see ``docs/plugins.md``), the executor calls
    ``update_values(action)`` instead of ``update([...])`` and builds no
    information objects per step; the results must be identical.
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

    # -- value steps (optional) -------------------------------------------
    def value_ids(self) -> tuple[str, str, str] | None:
        """``(sensor id, actuator id, reward id)`` when this environment
        supports value steps (:meth:`update_values`, :meth:`last_state`),
        else ``None`` (the default).

        Return the ids only when the environment has exactly one sensor, one
        actuator and one reward, attributes the reward to no agent (``owner``
        ``None``), never reports ``left``, and ``update_values`` and
        ``last_state`` together are equivalent to :meth:`update`. The executor
        uses value steps only when the class defining this method also
        defines :meth:`update` or is a subclass of the one that does (a
        subclass that overrides ``update`` alone is stepped through ``update``).
        """
        return None

    def update_values(self, action: Any) -> tuple[Any, float, bool, bool]:
        """Apply ``action`` (the value of the single actuator) and advance one
        step, like ``update([ActuatorInformation(actuator_id, space, action)])``.

        Returns:
            ``(observation, reward, terminated, truncated)``: the value the
            state's single sensor would hold (same type, e.g. a Python int for
            a ``Discrete`` space), the value of its single reward (a float, in
            the environment's units), and its ``terminated`` and ``truncated``
            (Python bools).

        Raises:
            NotImplementedError: the environment does not support value steps
                (:meth:`value_ids` is ``None``); whatever :meth:`update` raises.
        """
        raise NotImplementedError(f"{type(self).__name__} does not support value steps")

    def last_state(self) -> EnvironmentState:
        """The :class:`EnvironmentState` :meth:`update` would have returned for
        the last :meth:`update_values` call (its sensors, rewards, ``terminated``,
        ``truncated`` and ``info``); the executor asks for it when an episode
        ends, so building it may cost what ``update`` costs.

        Raises:
            NotImplementedError: the environment does not support value steps.
            RuntimeError: no step since the last :meth:`start_environment`.
        """
        raise NotImplementedError(f"{type(self).__name__} does not support value steps")


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
