"""Base classes users subclass for agents: brain, muscle, objective."""

from __future__ import annotations

import enum
import pickle
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

from xdoe._plugins import derive_forms, items_of, retire_value_steps, values_of
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

    Two forms (``docs/plugins.md``, "A step"): write :meth:`thinking` (an
    :class:`Experience`) or :meth:`thinking_values` (the same step as plain
    values); the class gets the other form derived from the one its body
    defines. The executor calls :meth:`thinking_values`.
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        retire_value_steps(cls, ("value_steps",), {"thinking_values": 6})
        derive_forms(cls, "thinking", "thinking_values", _thinking_values_of, _thinking_of)

    #: ``(uid, space)`` of the agent's sensors and actuators, set by the
    #: executor before the first step (used by a derived form)
    _xdoe_io: tuple[tuple[tuple[str, Any], ...], tuple[tuple[str, Any], ...]] = ((), ())

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

    @abstractmethod
    def thinking_values(self, worker: int, episode: int, step: int, observation: Any, action: Any,
                        rewards: dict[str, float], objective: float, next_observation: Any, done: bool,
                        extras: dict[str, Any], truncated: bool) -> Any | None:
        """:meth:`thinking` of the :class:`Experience` with these fields, as
        values: ``observation``/``next_observation`` the value form of the
        agent's sensors, ``action`` of its actuators (a plain value for one,
        else a dict ``uid -> value``), ``rewards`` a dict ``uid -> float``."""

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

    Two forms (``docs/plugins.md``, "A step"): write :meth:`propose_actions`
    (information objects) or :meth:`propose_values` (values); the class gets
    the other form derived from the one its body defines. The executor calls
    :meth:`propose_values`.
    """

    #: data for the brain about the last proposal (see the class docstring)
    extras: dict[str, Any] | None = None
    #: accepted for plugins that declare it and no longer used: a muscle that
    #: writes :meth:`propose_actions` gets fresh actuator objects at every step
    keeps_actuators: bool = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        retire_value_steps(cls, ("value_steps", "propose_action_value"), {})
        derive_forms(cls, "propose_actions", "propose_values", _propose_values_of, _propose_actions_of)

    #: ``(uid, space)`` of the agent's sensors and actuators, set by the
    #: executor before the first step (used by a derived form)
    _xdoe_io: tuple[tuple[tuple[str, Any], ...], tuple[tuple[str, Any], ...]] = ((), ())

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

    @abstractmethod
    def propose_values(self, observation: Any) -> Any:
        """:meth:`propose_actions` as values: ``observation`` is the value
        form of the agent's sensors (the plain value of its only sensor, else
        a dict ``uid -> value``); returns the value form of its actuators."""

    def update(self, update: Any) -> None:
        """Receive what the brain sent (see :meth:`Brain.thinking`)."""

    @classmethod
    def propose_batch(cls, muscles: Sequence["Muscle"], observations: Sequence[Any]) -> list[Any]:
        """The proposals of several muscles of one agent in one call (batched
        acting): ``[muscles[i].propose_values(observations[i]) for i ...]``.

        The executor calls it on the class of an agent's muscles in a
        ``worker: N`` phase whose workers step in lockstep in one process
        (``docs/plugins.md``, "Batched acting"), with the muscles of the
        workers acting in that round and the value form of each one's
        sensors (``len(muscles) == len(observations) >= 1``); it returns one
        action value form per muscle, in the same order, and sets each
        muscle's :attr:`extras` as :meth:`propose_values` would.

        The default loops over the muscles, so a muscle class that does not
        override it acts exactly as alone. Override it to act for all the
        muscles in one pass (one forward pass of a batch of N through a
        network, as Stable-Baselines3's vectorised environments do); an
        override must give every muscle the answer it would give alone: its
        own random draws (from its own :attr:`rng` or generator, so the run
        stays reproducible) and its own mode, up to the rounding of a batched
        computation.

        Raises:
            whatever the muscles' :meth:`propose_values` raise.
        """
        return [muscle.propose_values(observation) for muscle, observation in zip(muscles, observations)]


class Objective(ABC):
    """Turns the rewards an agent receives into its objective value.

    Constructed as ``Cls(**params)``. When an environment attributes rewards
    per agent (``RewardInformation.owner``), :meth:`internal_reward` gets the
    agent's own and the shared rewards only, unless :attr:`all_rewards` is
    true (then every reward of the agent's environments).

    Two forms: write :meth:`internal_reward` (``RewardInformation`` objects)
    or :meth:`internal_reward_values` (a dict ``uid -> value``); the class
    gets the other form derived from the one its body defines. The executor
    calls :meth:`internal_reward_values`.
    """

    #: see every reward of the agent's environments, not only the agent's own
    all_rewards: bool = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        retire_value_steps(cls, ("value_steps", "internal_reward_value"), {})
        derive_forms(cls, "internal_reward", "internal_reward_values", _internal_reward_values_of,
                     _internal_reward_of)

    def __init__(self, **params: Any) -> None:
        if params:
            raise TypeError(f"unexpected parameters: {', '.join(sorted(params))}")

    @abstractmethod
    def internal_reward(self, rewards: list[RewardInformation]) -> float:
        """The objective value of one step (a float)."""

    @abstractmethod
    def internal_reward_values(self, rewards: dict[str, float]) -> float:
        """:meth:`internal_reward` of the rewards ``uid -> value``."""


# -- the derived forms (xdoe._plugins.derive_forms) ----------------

def _propose_values_of(own: Any) -> Any:
    def propose_values(self: Muscle, observation: Any) -> Any:
        sensors, actuators = self._xdoe_io
        acted = own(self, items_of(SensorInformation, sensors, observation),
                    [ActuatorInformation(uid, space) for uid, space in actuators])
        if len(actuators) == 1:
            uid = actuators[0][0]
            if len(acted) == 1 and acted[0].uid == uid:
                return acted[0].value
        ids = {uid for uid, _ in actuators}
        for action in acted:
            if action.uid not in ids:
                from xdoe.errors import RunError

                raise RunError(f"agent {self.uid!r} set actuator {action.uid!r}, which is not assigned to it "
                               f"(assigned: {', '.join(uid for uid, _ in actuators) or 'none'})")
        if len(actuators) == 1:
            return next((a.value for a in acted if a.value is not None), None)
        return {a.uid: a.value for a in acted}
    return propose_values


def _propose_actions_of(own: Any) -> Any:
    def propose_actions(self: Muscle, sensors: list[SensorInformation],
                        actuators: list[ActuatorInformation]) -> list[ActuatorInformation]:
        value = own(self, values_of(sensors))
        return items_of(ActuatorInformation, [(a.uid, a.space) for a in actuators], value)
    return propose_actions


def _thinking_values_of(own: Any) -> Any:
    def thinking_values(self: Brain, worker: int, episode: int, step: int, observation: Any, action: Any,
                        rewards: dict[str, float], objective: float, next_observation: Any, done: bool,
                        extras: dict[str, Any], truncated: bool) -> Any | None:
        sensors, actuators = self._xdoe_io
        return own(self, Experience(
            worker, episode, step, items_of(SensorInformation, sensors, observation),
            items_of(ActuatorInformation, actuators, action),
            [RewardInformation(uid, value) for uid, value in rewards.items()], objective,
            items_of(SensorInformation, sensors, next_observation), done, extras, truncated))
    return thinking_values


def _thinking_of(own: Any) -> Any:
    def thinking(self: Brain, experience: Experience) -> Any | None:
        e = experience
        return own(self, e.worker, e.episode, e.step, values_of(e.sensors), values_of(e.actuators),
                   {r.uid: r.value for r in e.rewards}, e.objective, values_of(e.next_sensors), e.done,
                   e.extras, e.truncated)
    return thinking


def _internal_reward_values_of(own: Any) -> Any:
    def internal_reward_values(self: Objective, rewards: dict[str, float]) -> float:
        return own(self, [RewardInformation(uid, value) for uid, value in rewards.items()])
    return internal_reward_values


def _internal_reward_of(own: Any) -> Any:
    def internal_reward(self: Objective, rewards: list[RewardInformation]) -> float:
        return own(self, {r.uid: r.value for r in rewards})
    return internal_reward
