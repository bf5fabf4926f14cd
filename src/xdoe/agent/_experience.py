"""What crosses an agent's parts: the phase :class:`Mode` and one step as an :class:`Experience`."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from xdoe.environment import ActuatorInformation, RewardInformation, SensorInformation

__all__ = ["Mode", "Experience"]


class Mode(str, enum.Enum):
    """Phase mode: in ``TEST`` brains do not learn and muscles do not explore."""

    TRAIN = "train"
    TEST = "test"


@dataclass
class Experience:
    """One step as one agent lived it, handed to :meth:`Brain.thinking`.

    Attributes:
        worker: index of the worker (environment copy) the step happened in.
        episode: episode number within the phase, per worker (0-based).
        step: step number within the episode (0-based).
        sensors: what the agent saw before acting (its assigned sensors only).
        actuators: what its muscle set (its assigned actuators, with values).
        rewards: reward signals received after the environment update.
        objective: the agent's objective value for this step (a float).
        next_sensors: what the agent sees after the update.
        done: the episode ended (for this agent) with this step.
        extras: extra data the muscle attached when it acted (its
            :attr:`Muscle.extras`), e.g. a policy's value estimate.
        truncated: the episode was cut (a time limit of the environment, a
            termination condition, the end of the phase) rather than
            terminated: a learner should bootstrap from ``next_sensors``.
            Only meaningful when ``done``.

    :attr:`terminated` (``done and not truncated``) is read-only.
    """

    worker: int
    episode: int
    step: int
    sensors: list[SensorInformation]
    actuators: list[ActuatorInformation]
    rewards: list[RewardInformation]
    objective: float
    next_sensors: list[SensorInformation]
    done: bool
    extras: dict[str, Any] = field(default_factory=dict)
    truncated: bool = False

    @property
    def terminated(self) -> bool:
        """The episode reached a terminal state: no bootstrapping from ``next_sensors``."""
        return self.done and not self.truncated
