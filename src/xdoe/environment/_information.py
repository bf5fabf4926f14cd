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
    """

    uid: str
    value: float
    space: spaces.Space | None = None


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


@dataclass
class EnvironmentState:
    """The result of one environment update.

    Attributes:
        sensors: new readings (same ids as in the baseline).
        rewards: reward signals of this step.
        done: the episode is over for this environment (terminated or truncated).
        info: optional extra data.
    """

    sensors: list[SensorInformation]
    rewards: list[RewardInformation]
    done: bool
    info: dict[str, Any] = field(default_factory=dict)
