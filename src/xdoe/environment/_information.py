"""Data that crosses the environment/agent boundary."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gymnasium import spaces

__all__ = [
    "SensorInformation",
    "ActuatorInformation",
    "RewardInformation",
    "EnvironmentBaseline",
    "EnvironmentState",
]


@dataclass
class SensorInformation:
    """One sensor reading.

    Attributes:
        uid: full id ``<environment uid>.<name>``, e.g. ``"taxi.observation"``.
        space: the gymnasium space the value lies in.
        value: the reading (an element of ``space``); ``None`` before the first reading.
    """

    uid: str
    space: spaces.Space
    value: Any = None


@dataclass
class ActuatorInformation:
    """One actuator (set point) an agent may set.

    Attributes:
        uid: full id ``<environment uid>.<name>``.
        space: the gymnasium space of admissible values.
        value: the value set by a muscle; ``None`` when not set this step.
    """

    uid: str
    space: spaces.Space
    value: Any = None


@dataclass
class RewardInformation:
    """One reward signal of an environment.

    Attributes:
        uid: full id ``<environment uid>.<name>``.
        value: the reward of the last step (a float).
        space: optional space of the reward (default: unbounded scalar Box).
        owner: ``None`` (default): a shared reward, received by every agent
            of the environment; or the full id of one of the environment's
            actuators (e.g. ``"ttt.move_x"``): the reward belongs to the agent
            that holds that actuator and no other agent receives it (the
            PettingZoo convention of one reward per agent).
    """

    uid: str
    value: float
    space: spaces.Space | None = None
    owner: str | None = None


@dataclass
class EnvironmentBaseline:
    """What an environment offers at the start of an episode.

    Attributes:
        sensors: every sensor with its space and initial value.
        actuators: every actuator with its space (values ``None``).
        info: optional extra data (stored with the episode, must be JSON-able).
    """

    sensors: list[SensorInformation]
    actuators: list[ActuatorInformation]
    info: dict[str, Any] = field(default_factory=dict)


@dataclass(init=False)
class EnvironmentState:
    """The result of one environment update (gymnasium >= 0.26 semantics).

    Attributes:
        sensors: new readings (same ids as in the baseline).
        rewards: reward signals of this step.
        terminated: the episode reached a terminal state of the environment's
            task (a goal, a loss, a fall): nothing follows, learners must not
            bootstrap from the next state.
        truncated: the episode was cut for a reason outside the task (a time
            limit): learners should bootstrap from the next state.
        info: optional extra data.
        left: actuator id -> ``True`` (truncated) or ``False`` (terminated)
            for agents that left the episode at this step while it goes on for
            the others (PettingZoo's per-agent termination); the agent holding
            that actuator stops acting until the episode ends. Empty by default.

    :attr:`done` (``terminated or truncated``) is read-only. For existing
    plugins the third positional argument is ``terminated`` and the keyword
    ``done=`` is still accepted (as ``terminated``).
    """

    sensors: list[SensorInformation]
    rewards: list[RewardInformation]
    terminated: bool
    info: dict[str, Any]
    truncated: bool
    left: dict[str, bool]

    def __init__(
        self,
        sensors: list[SensorInformation],
        rewards: list[RewardInformation],
        terminated: bool = False,
        info: dict[str, Any] | None = None,
        *,
        truncated: bool = False,
        left: dict[str, bool] | None = None,
        done: bool | None = None,
    ) -> None:
        self.sensors = sensors
        self.rewards = rewards
        self.terminated = bool(terminated) or bool(done)
        self.info = {} if info is None else info
        self.truncated = bool(truncated)
        self.left = {} if left is None else left

    @property
    def done(self) -> bool:
        """``terminated or truncated``: the episode is over for this environment."""
        return self.terminated or self.truncated
