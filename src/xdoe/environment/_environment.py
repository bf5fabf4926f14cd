"""Base classes users subclass for environments and rewards."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from xdoe._plugins import derive_forms, items_of, retire_value_steps, values_of
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

    Two forms of a step (``docs/plugins.md``, "A step"): write :meth:`update`
    (information objects) or :meth:`update_values` with :meth:`last_state`
    (gymnasium's ``Env.step`` as plain values); the class gets the other form
    derived from the one its body defines. The executor calls
    :meth:`update_values`, and :meth:`last_state` only when it needs the
    objects (a reward block, a condition reading ``StepProgress.states``, the
    episode's ``info`` at its end). Rewards with an ``owner`` and agents that
    leave an episode (``EnvironmentState.left``) need the object form: write
    :meth:`update` for them.

    Raises:
        TypeError: (at class definition) a class body defines
            :meth:`update_values` but neither :meth:`update` nor
            :meth:`last_state`.
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        retire_value_steps(cls, ("value_ids",), {"update_values": None, "last_state": None})
        own = vars(cls)
        if "update_values" in own and "update" not in own and cls.last_state is Environment.last_state:
            raise TypeError(f"{cls.__qualname__} defines update_values but not last_state (the state "
                            f"update() would have returned for the last update_values call)")
        derive_forms(cls, "update", "update_values", _update_values_of, _update_of)

    #: ``(uid, space)`` of the actuators of the last :meth:`start_environment`
    #: (set by the executor; used by the derived :meth:`update_values`)
    _xdoe_actuators: tuple[tuple[str, Any], ...] = ()
    #: the state of the last derived :meth:`update_values`
    _xdoe_state: EnvironmentState | None = None

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

    @abstractmethod
    def update_values(self, actions: Any) -> tuple[Any, dict[str, float], bool, bool]:
        """:meth:`update` as values: ``actions`` is the value form of the
        environment's actuators (the plain value of its only actuator, else a
        dict ``uid -> value`` of those set this step); returns
        ``(observation, rewards, terminated, truncated)``: the value form of
        its sensors, the rewards ``uid -> float`` and gymnasium's two flags."""

    def last_state(self) -> EnvironmentState:
        """The :class:`EnvironmentState` :meth:`update` would have returned
        for the last :meth:`update_values` call (its ``info`` included).
        A class that writes :meth:`update_values` writes this too.

        Raises:
            RuntimeError: no update since the last :meth:`start_environment`."""
        state = self._xdoe_state
        if state is None:
            raise RuntimeError(f"{type(self).__name__}.last_state() called before update_values()")
        return state

    def close(self) -> None:
        """Release resources (called at the end of each phase)."""


def _update_values_of(own: Any) -> Any:
    def update_values(self: Environment, actions: Any) -> tuple[Any, dict[str, float], bool, bool]:
        self._xdoe_state = state = own(self, items_of(ActuatorInformation, self._xdoe_actuators, actions))
        return values_of(state.sensors), {r.uid: r.value for r in state.rewards}, state.terminated, \
            state.truncated
    return update_values


def _update_of(own: Any) -> Any:
    def update(self: Environment, actuators: list[ActuatorInformation]) -> EnvironmentState:
        if len(self._xdoe_actuators) > 1 or len(actuators) > 1:
            own(self, {a.uid: a.value for a in actuators})
        else:  # one actuator (or none set: None)
            own(self, actuators[0].value if actuators else None)
        return self.last_state()
    return update


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
