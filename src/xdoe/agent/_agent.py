"""Base classes users subclass for agents: brain, muscle, objective."""

from __future__ import annotations

import enum
import pickle
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from xdoe.environment import ActuatorInformation, RewardInformation, SensorInformation

__all__ = ["Mode", "Experience", "Brain", "Muscle", "Objective"]


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


class Brain(ABC):
    """The learning part of an agent; one per agent, shared by its muscles.

    Constructed as ``Cls(seed=..., **params)``. The executor then calls
    :meth:`setup` with the agent's sensors and actuators (ids and spaces)
    before the first phase, sets :attr:`mode` and :attr:`workers` (the
    phase's worker count) at the start of every phase, and in train mode hands every step to :meth:`thinking`. Whatever
    ``thinking`` returns (when not ``None``) is passed to
    :meth:`Muscle.update` of every muscle of the agent.

    An agent keeps its brain from one phase to the next within a run.
    """

    def __init__(self, seed: int = 0, **params: Any) -> None:
        if params:
            raise TypeError(f"unexpected parameters: {', '.join(sorted(params))}")
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.mode: Mode = Mode.TRAIN
        self.workers = 1
        self.sensors: list[SensorInformation] = []
        self.actuators: list[ActuatorInformation] = []

    def setup(self, sensors: list[SensorInformation], actuators: list[ActuatorInformation]) -> None:
        """Receive the agent's sensors and actuators (called once, before the first phase)."""
        self.sensors = list(sensors)
        self.actuators = list(actuators)

    @abstractmethod
    def thinking(self, experience: Experience) -> Any | None:
        """Learn from one step; return an update for the muscles or ``None``."""

    def pretrain(self, experiences: Iterable[Experience]) -> None:
        """Offline training on stored experiences (``replay``); default: feed
        each to :meth:`thinking` and drop the updates."""
        for experience in experiences:
            self.thinking(experience)

    def muscle_state(self) -> Any | None:
        """What a muscle needs to act like this brain (sent to muscles at the
        start of every phase and after loading); default ``None``."""
        return None

    def store(self, path: Path) -> None:
        """Write the model to the file ``path`` (default: pickle of the attributes)."""
        with open(path, "wb") as fh:
            pickle.dump(self.__dict__, fh, protocol=pickle.HIGHEST_PROTOCOL)

    def load(self, path: Path) -> None:
        """Read a model written by :meth:`store` from the file ``path``."""
        with open(path, "rb") as fh:
            self.__dict__.update(pickle.load(fh))


class Muscle(ABC):
    """The acting part of an agent; one per agent and worker.

    Constructed as ``Cls(uid=<agent name>, seed=..., **params)``; every random
    choice comes from :attr:`rng`. :attr:`mode` is set at the start of each
    phase; in ``Mode.TEST`` a muscle must not explore.

    A muscle may set :attr:`extras` to a new dict in :meth:`propose_actions`;
    the executor attaches it to the :class:`Experience` of that action (e.g.
    the value estimate and log-probability an on-policy learner needs).
    """

    #: data for the brain about the last proposal (see the class docstring)
    extras: dict[str, Any] | None = None
    #: ``True`` declares that :meth:`propose_actions` never changes the
    #: actuators it is given (it returns new objects): the executor then hands
    #: it the same actuator objects at every step instead of fresh copies.
    #: ``False`` (the default) is always safe. A subclass that overrides
    #: :meth:`propose_actions` does not inherit a ``True`` (declare it again).
    keeps_actuators: bool = False

    def __init__(self, uid: str, seed: int = 0, **params: Any) -> None:
        if params:
            raise TypeError(f"unexpected parameters: {', '.join(sorted(params))}")
        self.uid = uid
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.mode: Mode = Mode.TRAIN

    def setup(self, sensors: list[SensorInformation], actuators: list[ActuatorInformation]) -> None:
        """Receive the agent's sensors and actuators (ids and spaces)."""

    def reset(self) -> None:
        """Called at the start of every episode."""

    @abstractmethod
    def propose_actions(
        self, sensors: list[SensorInformation], actuators: list[ActuatorInformation]
    ) -> list[ActuatorInformation]:
        """Return the actuators with values set (each value in its space)."""

    def update(self, update: Any) -> None:
        """Receive what the brain sent (see :meth:`Brain.thinking`)."""


class Objective(ABC):
    """Turns the rewards an agent receives into its objective value.

    Constructed as ``Cls(**params)``. When an environment attributes rewards
    per agent (``RewardInformation.owner``), :meth:`internal_reward` gets the
    agent's own and the shared rewards only, unless :attr:`all_rewards` is
    true (then every reward of the agent's environments).
    """

    #: see every reward of the agent's environments, not only the agent's own
    all_rewards: bool = False

    def __init__(self, **params: Any) -> None:
        if params:
            raise TypeError(f"unexpected parameters: {', '.join(sorted(params))}")

    @abstractmethod
    def internal_reward(self, rewards: list[RewardInformation]) -> float:
        """The objective value of one step (a float)."""
