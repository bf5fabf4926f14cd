"""Base classes users subclass for environments and rewards."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from xdoe._plugins import derive_forms, retire_value_steps
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
    (gymnasium's ``Env.step`` as plain values). A class whose body defines
    :meth:`update_values` gets :meth:`update` derived from it; the executor
    steps a class that writes :meth:`update` through ``update`` itself (it
    holds the actuators' ids and spaces the objects need), and that class's
    :meth:`update_values` and :meth:`last_state` raise. The executor calls
    :meth:`update_values`, and :meth:`last_state` only when it needs the
    objects (a :class:`Reward` component, a condition reading ``StepProgress.states``, the
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
        """Reset the environment for a new episode and describe its sensors and actuators.

        Called once at the start of every episode of every worker, before the
        first :meth:`update` (gymnasium's ``Env.reset``). Draw the episode's
        random start from :attr:`rng`: it is seeded once per phase, worker
        and environment, so every episode gets its own draws and the run
        repeats exactly. An environment whose ``params`` hold samplers
        (``{sampler: uniform, ...}``) is built anew with fresh parameters
        before each episode, then started.

        Returns:
            baseline (EnvironmentBaseline): ``sensors``, a ``list[SensorInformation]`` of
                every sensor with its full id ``<uid>.<name>``, its gymnasium
                space and its initial value (an element of the space: an
                ``int`` for ``Discrete``, a numpy array of the space's shape
                and dtype for ``Box``); ``actuators``, a
                ``list[ActuatorInformation]`` of every actuator with its space
                and ``value=None``; ``info``, a JSON-able ``dict`` stored with
                the episode (default empty). The ids and spaces must be the
                same at every episode: agents are wired to them once.

        Raises:
            Exception: anything it raises fails the run with a
                :class:`~xdoe.errors.RunError` naming the environment and
                ``start_environment``, the original exception as its cause.

        Examples:
            >>> from gymnasium import spaces
            >>> from xdoe.environment import (ActuatorInformation, Environment, EnvironmentBaseline,
            ...                               SensorInformation)
            >>> class Corridor(Environment):
            ...     def start_environment(self):
            ...         self.position = int(self.rng.integers(4))  # a random start cell, seeded
            ...         return EnvironmentBaseline(
            ...             [SensorInformation(self.full_id("position"), spaces.Discrete(5), self.position)],
            ...             [ActuatorInformation(self.full_id("move"), spaces.Discrete(2))])
            ...     def update(self, actuators): ...
            >>> baseline = Corridor(uid="walk", seed=3).start_environment()
            >>> [s.uid for s in baseline.sensors], [a.uid for a in baseline.actuators]
            (['walk.position'], ['walk.move'])
            >>> baseline.sensors[0].value in range(5)
            True
        """

    @abstractmethod
    def update(self, actuators: list[ActuatorInformation]) -> EnvironmentState:
        """Apply the agents' actions and advance the environment one step (the object form).

        The object form of a step (gymnasium's ``Env.step`` with information
        objects); write this or :meth:`update_values`, the class gets the
        other (``docs/plugins.md``, "A step"). Called once per step with the
        actions of every agent acting on this environment in that step, until
        the returned state is ``done`` or a termination condition ends the
        episode; then :meth:`start_environment` starts the next.

        Args:
            actuators (list[ActuatorInformation]): the environment's
                actuators, by full id ``<uid>.<name>``, each ``value`` an
                element of its space as a muscle set it. An actuator no agent
                set this step (with the taking-turns controller: every
                actuator of the agents not on turn) is absent or has
                ``value=None``.

        Returns:
            state (EnvironmentState): ``sensors`` (``list[SensorInformation]``, the
                new readings, the same ids and spaces as the baseline's),
                ``rewards`` (``list[RewardInformation]``, each ``value`` a
                finite ``float``; ``owner`` set to an actuator id gives a
                reward to that actuator's agent alone), ``terminated``
                (``bool``: the task reached a terminal state, a goal or a
                loss; nothing follows and learners do not bootstrap),
                ``truncated`` (``bool``: cut for a reason outside the task,
                typically a time limit; learners bootstrap from the new
                readings), ``info`` (a JSON-able ``dict``; the last one of
                an episode is stored with it) and ``left`` (``{actuator id:
                truncated}`` for agents leaving an episode that goes on).

        Raises:
            Exception: anything it raises (a ``ValueError`` for an action it
                cannot apply, say) fails the run with a
                :class:`~xdoe.errors.RunError` naming the environment and the
                method, the original exception as its cause.

        Examples:
            >>> from gymnasium import spaces
            >>> from xdoe.environment import (ActuatorInformation, Environment, EnvironmentBaseline,
            ...                               EnvironmentState, RewardInformation, SensorInformation)
            >>> class Counter(Environment):
            ...     # Count to 3: each step adds the action (0 or 1) and pays the new count.
            ...     def sensors(self):
            ...         return [SensorInformation(self.full_id("count"), spaces.Discrete(4), self.count)]
            ...     def start_environment(self):
            ...         self.count = 0
            ...         return EnvironmentBaseline(self.sensors(),
            ...                                    [ActuatorInformation(self.full_id("add"), spaces.Discrete(2))])
            ...     def update(self, actuators):
            ...         self.count += sum(int(a.value) for a in actuators if a.value is not None)
            ...         return EnvironmentState(self.sensors(), [RewardInformation(self.full_id("r"), float(self.count))],
            ...                                 terminated=self.count == 3)
            >>> env = Counter(uid="c", seed=0)
            >>> _ = env.start_environment()
            >>> state = env.update([ActuatorInformation("c.add", spaces.Discrete(2), 1)])
            >>> state.sensors[0].value, state.rewards[0].value, state.terminated, state.truncated
            (1, 1.0, False, False)
        """

    @abstractmethod
    def update_values(self, actions: Any) -> tuple[Any, dict[str, float], bool, bool]:
        """Apply the agents' actions and advance one step, as plain values (the value form).

        :meth:`update` as gymnasium's ``Env.step``: what the executor calls
        at every step. Write this (with :meth:`last_state`) or :meth:`update`:
        a class that writes this gets :meth:`update`; a class that writes
        :meth:`update` is stepped through it by the executor, and this
        method then raises ``NotImplementedError`` (the values alone do not
        carry the actuators' ids and spaces). Agents that leave an episode
        and rewards with an ``owner`` need :meth:`update`.

        Args:
            actions (Any): the value form of the environment's actuators: the
                plain value of its only actuator (an ``int`` for
                ``Discrete``, a numpy array for ``Box``; ``None`` when no
                agent set it this step), or, for several actuators, a
                ``dict[str, Any]`` ``actuator id -> value`` of those set this
                step.

        Returns:
            observation (Any): the value form of the sensors: the plain
                value of the only sensor, else a ``dict`` ``sensor id ->
                value`` with every sensor, in the baseline's order; each value
                an element of its sensor's space.
            rewards (dict[str, float]): ``reward id -> value``, finite floats
                (their number and ids may change between steps).
            terminated (bool): the task reached a terminal state (see
                :meth:`update`).
            truncated (bool): the episode was cut outside the task (a time
                limit).

        Raises:
            Exception: anything it raises fails the run with a
                :class:`~xdoe.errors.RunError` naming the environment and the
                method, the original exception as its cause.

        Examples:
            >>> from gymnasium import spaces
            >>> from xdoe.environment import (ActuatorInformation, Environment, EnvironmentBaseline,
            ...                               EnvironmentState, RewardInformation, SensorInformation)
            >>> class Counter(Environment):
            ...     # Count to 3: each step adds the action (0 or 1) and pays the new count.
            ...     def sensors(self):
            ...         return [SensorInformation(self.full_id("count"), spaces.Discrete(4), self.count)]
            ...     def start_environment(self):
            ...         self.count, self.state = 0, None
            ...         return EnvironmentBaseline(self.sensors(),
            ...                                    [ActuatorInformation(self.full_id("add"), spaces.Discrete(2))])
            ...     def update_values(self, actions):
            ...         self.count += int(actions or 0)
            ...         reward, terminated = float(self.count), self.count == 3
            ...         self.state = EnvironmentState(self.sensors(), [RewardInformation(self.full_id("r"), reward)],
            ...                                       terminated=terminated)
            ...         return self.count, {self.full_id("r"): reward}, terminated, False
            ...     def last_state(self):
            ...         return self.state
            >>> env = Counter(uid="c", seed=0)
            >>> _ = env.start_environment()
            >>> env.update_values(1)
            (1, {'c.r': 1.0}, False, False)
            >>> [env.update_values(1)[2] for _ in range(2)]  # terminated at 3
            [False, True]
        """

    def last_state(self) -> EnvironmentState:
        """The state of the last step as an object: what :meth:`update` would have returned.

        A class that writes :meth:`update_values` writes this too (one whose
        body defines ``update_values`` but neither ``update`` nor
        ``last_state`` is refused with a ``TypeError`` when it is defined);
        a class that writes :meth:`update` has it in ``update``'s answer
        (the executor keeps that; this method then raises). The executor asks for it
        only where objects are needed: a ``reward`` component, a termination
        condition that reads ``StepProgress.states``, and once at the end of
        every episode for its ``info``. It must not advance the environment.

        Returns:
            state (EnvironmentState): the :class:`EnvironmentState` of the last
                :meth:`update_values` call (sensors, rewards, ``terminated``,
                ``truncated``, ``info``), agreeing with the values that call
                returned.

        Raises:
            RuntimeError: (the default) the class writes :meth:`update`,
                which returns the state.

        Examples:
            >>> from gymnasium import spaces
            >>> from xdoe.environment import (ActuatorInformation, Environment, EnvironmentBaseline,
            ...                               EnvironmentState, RewardInformation, SensorInformation)
            >>> class Coin(Environment):
            ...     # One step: the action guesses a seeded coin; the state keeps the coin in ``info``.
            ...     def start_environment(self):
            ...         self.coin, self.state = int(self.rng.integers(2)), None
            ...         return EnvironmentBaseline([SensorInformation(self.full_id("seen"), spaces.Discrete(2), 0)],
            ...                                    [ActuatorInformation(self.full_id("guess"), spaces.Discrete(2))])
            ...     def update_values(self, actions):
            ...         reward = float(actions == self.coin)
            ...         self.state = EnvironmentState([SensorInformation(self.full_id("seen"), spaces.Discrete(2), 1)],
            ...                                       [RewardInformation(self.full_id("r"), reward)],
            ...                                       terminated=True, info={"coin": self.coin})
            ...         return 1, {self.full_id("r"): reward}, True, False
            ...     def last_state(self):
            ...         return self.state
            >>> env = Coin(uid="coin", seed=1)
            >>> _ = env.start_environment()
            >>> _, rewards, terminated, _ = env.update_values(0)
            >>> state = env.last_state()
            >>> state.rewards[0].value == rewards["coin.r"], state.terminated, sorted(state.info)
            (True, True, ['coin'])
        """
        raise RuntimeError(f"{type(self).__name__} writes update(), which returns the state: it has no last_state()")

    def close(self) -> None:
        """Release what the environment holds: files, processes, a simulator, a window.

        Called once at the end of every phase (also when the phase fails or
        is stopped), and before an environment with samplers in its
        ``params`` is replaced by a freshly drawn one; the object is not
        used afterwards. The default does nothing.

        Raises:
            Exception: anything it raises fails the run with a
                :class:`~xdoe.errors.RunError` naming the environment and
                ``close``.

        Examples:
            >>> import tempfile
            >>> from xdoe.environment import Environment
            >>> class Logged(Environment):
            ...     def __init__(self, uid, seed):
            ...         super().__init__(uid=uid, seed=seed)
            ...         self.log = tempfile.TemporaryFile("w+")  # held for the phase
            ...     def start_environment(self): ...
            ...     def update(self, actuators): ...
            ...     def close(self):
            ...         self.log.close()
            >>> env = Logged(uid="e", seed=0)
            >>> env.close()
            >>> env.log.closed
            True
        """


def _update_values_of(own: Any) -> Any:
    def update_values(self: Environment, actions: Any) -> tuple[Any, dict[str, float], bool, bool]:
        raise NotImplementedError(f"{type(self).__name__} writes update(): call update() with the actuators "
                                  f"(the executor steps it so; the values alone do not carry their ids and spaces)")
    return update_values


def _update_of(own: Any) -> Any:
    def update(self: Environment, actuators: list[ActuatorInformation]) -> EnvironmentState:
        if len(actuators) == 1:  # the value form of one actuator: its plain value
            own(self, actuators[0].value)
        else:  # several: a dict ``uid -> value``; none set: None
            own(self, {a.uid: a.value for a in actuators} if actuators else None)
        return self.last_state()
    return update


class Reward(ABC):
    """Turns an environment's sensor readings into reward signals.

    Declared in a run document as an environment's ``reward`` component
    (``{name, params}``); when
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
        """The rewards the agents receive this step, in place of the environment's own.

        Called after every update of the environment whose ``reward`` component
        names this class (with the state of that update, see
        :meth:`Environment.last_state`).

        Args:
            sensors (list[SensorInformation]): the environment's readings
                after the update (every sensor, full ids, values in their
                spaces).
            rewards (list[RewardInformation]): the rewards the environment
                reported for the update.

        Returns:
            rewards (list[RewardInformation]): the rewards to hand on (may be more,
                fewer or other ids than ``rewards``), each ``value`` a finite
                ``float``; ``owner`` keeps its meaning (one agent's reward).

        Raises:
            Exception: anything it raises fails the run with a
                :class:`~xdoe.errors.RunError` naming the environment and
                ``reward``.

        Examples:
            >>> from gymnasium import spaces
            >>> from xdoe.environment import Reward, RewardInformation, SensorInformation
            >>> class DistanceReward(Reward):
            ...     # Minus the distance of the position from ``goal``.
            ...     def __init__(self, goal: int = 4):
            ...         super().__init__()
            ...         self.goal = goal
            ...     def __call__(self, sensors, rewards):
            ...         position = next(s.value for s in sensors if s.uid.endswith(".position"))
            ...         return [RewardInformation("walk.distance", -float(abs(self.goal - position)))]
            >>> DistanceReward(goal=4)([SensorInformation("walk.position", spaces.Discrete(5), 1)], [])
            [RewardInformation(uid='walk.distance', value=-3.0, space=None, owner=None)]
        """
