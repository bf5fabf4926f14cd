"""The acting part of an agent: :class:`Muscle`, one per agent and worker."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Sequence

import numpy as np

from xdoe._plugins import derive_forms, items_of, propose_through_objects, retire_value_steps, values_of
from xdoe.agent._experience import Mode
from xdoe.environment import ActuatorInformation, SensorInformation

__all__ = ["Muscle"]


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

    def __init__(self, uid: str, seed: int = 0, **params: Any) -> None:
        if params:
            raise TypeError(f"unexpected parameters: {', '.join(sorted(params))}")
        self.uid = uid
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.mode: Mode = Mode.TRAIN
        self.sensors: list[SensorInformation] = []
        self.actuators: list[ActuatorInformation] = []
        if type(self).extras is None and self.extras is None:
            # the class default as the instance's own attribute: the executor reads it at every step,
            # and CPython specialises that read only for an instance attribute; a class whose extras
            # is anything else (a read-only property, a dict), or a subclass that set it before
            # calling this, keeps it as it is (not tested with ``self.__dict__``: reading it makes
            # the instance's attributes a dict of their own, every later read of them slower)
            self.extras = None

    def setup(self, sensors: list[SensorInformation], actuators: list[ActuatorInformation]) -> None:
        """Receive the agent's sensors and actuators: size the policy to them.

        Called once per phase and worker, right after construction (muscles
        are built anew for every phase), before :attr:`mode` is set and
        :meth:`Brain.muscle_state` arrives through :meth:`update`. The
        default keeps both lists as :attr:`sensors` and :attr:`actuators`
        (a :meth:`propose_values` derived from :meth:`propose_actions` reads
        their ids and spaces there: a muscle that writes
        :meth:`propose_actions` and overrides ``setup`` calls
        ``super().setup(...)``).

        Args:
            sensors (list[SensorInformation]): the agent's own sensors, in
                the order of its ``sensors`` list in the run document (full
                ids and gymnasium spaces).
            actuators (list[ActuatorInformation]): the agent's own actuators,
                in document order, with their spaces (``value=None``).

        Raises:
            Exception: raise (a ``ValueError``, say) for sensors or actuators
                the muscle cannot act on; the run fails with a
                :class:`~xdoe.errors.RunError` naming the agent's document
                key and ``muscle: setup``.

        Examples:
            >>> import numpy as np
            >>> from gymnasium import spaces
            >>> from xdoe.agent import Muscle
            >>> from xdoe.environment import ActuatorInformation, SensorInformation
            >>> class Greedy(Muscle):
            ...     def setup(self, sensors, actuators):
            ...         self.values = np.zeros(actuators[0].space.n)  # replaced by the brain's updates
            ...     def propose_values(self, observation):
            ...         return int(np.argmax(self.values))
            >>> muscle = Greedy(uid="learner", seed=0)
            >>> muscle.setup([SensorInformation("bandit.seen", spaces.Discrete(1))],
            ...              [ActuatorInformation("bandit.arm", spaces.Discrete(3))])
            >>> muscle.values
            array([0., 0., 0.])
        """
        self.sensors = list(sensors)
        self.actuators = list(actuators)

    def reset(self) -> None:
        """Forget what belongs to the last episode: a new one starts.

        Called at the start of every episode of the muscle's worker, after
        the environments were started, before the first action. The default
        does nothing; a muscle with per-episode state (a recurrent state, an
        exploration schedule per episode) clears it here.

        Raises:
            Exception: anything it raises fails the run with a
                :class:`~xdoe.errors.RunError` naming the agent and
                ``muscle.reset``.

        Examples:
            >>> from xdoe.agent import Muscle
            >>> class Remembering(Muscle):
            ...     def reset(self):
            ...         self.seen = []  # this episode's observations
            ...     def propose_values(self, observation):
            ...         self.seen.append(observation)
            ...         return 0
            >>> muscle = Remembering(uid="a", seed=0)
            >>> muscle.reset()
            >>> muscle.propose_values(3), muscle.seen
            (0, [3])
            >>> muscle.reset()
            >>> muscle.seen
            []
        """

    @abstractmethod
    def propose_actions(
        self, sensors: list[SensorInformation], actuators: list[ActuatorInformation]
    ) -> list[ActuatorInformation]:
        """Choose the agent's actions for this step from what it senses (the object form).

        Write this or :meth:`propose_values`; the class gets the other
        (``docs/plugins.md``, "A step"). Called once per step of the agent in
        the muscle's worker (with the taking-turns controller: at the
        agent's turns), in both modes; in ``Mode.TEST`` the muscle must not
        explore. Take every random choice from :attr:`rng`. To hand the
        brain data about this choice, set :attr:`extras` to a new dict.

        Args:
            sensors (list[SensorInformation]): the agent's own sensors with
                their current values (each in its space), in document order.
            actuators (list[ActuatorInformation]): fresh copies of the
                agent's actuators with ``value=None``, in document order; set
                ``value`` on them and return them, or return new objects.

        Returns:
            actuators (list[ActuatorInformation]): the actuators with values set, each
                value an element of its actuator's space (an ``int`` for
                ``Discrete``, a numpy array of the space's shape for
                ``Box``); an actuator left at ``None`` is not set this step.

        Raises:
            Exception: anything it raises fails the run with a
                :class:`~xdoe.errors.RunError` naming the agent and
                ``muscle.propose_actions``. The run also fails (a
                ``RunError``) when a value lies outside its actuator's
                space, or an actuator is not one of the agent's.

        Examples:
            >>> from gymnasium import spaces
            >>> from xdoe.agent import Mode, Muscle
            >>> from xdoe.environment import ActuatorInformation, SensorInformation
            >>> class Toward(Muscle):
            ...     # Move right while left of the goal cell 4; explore with probability 0.1 in training.
            ...     def propose_actions(self, sensors, actuators):
            ...         explore = self.mode == Mode.TRAIN and self.rng.random() < 0.1
            ...         actuators[0].value = int(self.rng.integers(2)) if explore else int(sensors[0].value < 4)
            ...         return actuators
            >>> muscle = Toward(uid="walker", seed=0)
            >>> muscle.mode = Mode.TEST
            >>> muscle.propose_actions([SensorInformation("walk.position", spaces.Discrete(5), 2)],
            ...                        [ActuatorInformation("walk.move", spaces.Discrete(2))])
            [ActuatorInformation(uid='walk.move', space=Discrete(2), value=1)]
        """

    @abstractmethod
    def propose_values(self, observation: Any) -> Any:
        """Choose the agent's actions from its observation, as plain values (the value form).

        :meth:`propose_actions` as gymnasium's ``policy(observation) ->
        action``: what the executor calls at every step. Write this or
        :meth:`propose_actions`; the class gets the other. Same duties: no
        exploration in ``Mode.TEST``, random choices from :attr:`rng`,
        :attr:`extras` for the brain.

        Args:
            observation (Any): the value form of the agent's sensors: the
                plain value of its only sensor (an ``int`` for ``Discrete``,
                a numpy array of the space's shape and dtype for ``Box``),
                else a ``dict`` ``sensor id -> value`` in document order.

        Returns:
            actions (Any): the value form of the agent's actuators: the plain value of
                its only actuator, else a ``dict`` ``actuator id -> value``
                (an actuator left out is not set this step); each value an
                element of its actuator's space.

        Raises:
            Exception: anything it raises fails the run with a
                :class:`~xdoe.errors.RunError` naming the agent and
                ``muscle.propose_values``. The run also fails when a value
                lies outside its actuator's space, or a key is not one of
                the agent's actuators.

        Examples:
            >>> import numpy as np
            >>> from xdoe.agent import Mode, Muscle
            >>> class EpsilonGreedy(Muscle):
            ...     # Greedy on the brain's action values; a random action with probability epsilon in training.
            ...     def __init__(self, uid, seed, epsilon=0.1):
            ...         super().__init__(uid=uid, seed=seed)
            ...         self.epsilon, self.values = epsilon, np.zeros(2)
            ...     def propose_values(self, observation):
            ...         if self.mode == Mode.TRAIN and self.rng.random() < self.epsilon:
            ...             return int(self.rng.integers(len(self.values)))
            ...         return int(np.argmax(self.values))
            ...     def update(self, update):
            ...         self.values = update
            >>> muscle = EpsilonGreedy(uid="player", seed=0)
            >>> muscle.update(np.array([0.2, 0.9]))
            >>> muscle.mode = Mode.TEST
            >>> muscle.propose_values(0)
            1
        """

    def update(self, update: Any) -> None:
        """Take in what the agent's brain sent: act on what it has learnt from now on.

        Called with every non-``None`` value :meth:`Brain.thinking` returns
        (every muscle of the agent, in every worker, gets it), and at the
        start of every phase (and after a brain was loaded) with
        :meth:`Brain.muscle_state` when that is not ``None``. The default
        ignores it.

        Args:
            update (Any): the brain's update, as the brain made it (in a
                worker process of ``--parallel-workers``: a pickled copy).
                Copy what you keep if the brain goes on changing it.

        Raises:
            Exception: anything it raises fails the run with a
                :class:`~xdoe.errors.RunError` naming the agent and
                ``muscle.update``.

        Examples:
            >>> import numpy as np
            >>> from xdoe.agent import Muscle
            >>> class Greedy(Muscle):
            ...     values = np.zeros(2)
            ...     def update(self, update):
            ...         self.values = np.array(update, dtype=float)  # the brain's action values
            ...     def propose_values(self, observation):
            ...         return int(np.argmax(self.values))
            >>> muscle = Greedy(uid="a", seed=0)
            >>> muscle.update([0.1, 0.7])
            >>> muscle.propose_values(0)
            1
        """

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

        Args:
            muscles (Sequence[Muscle]): this agent's muscles of the workers
                acting in this round, all of this class (at least one).
            observations (Sequence[Any]): the value form of each muscle's
                sensors (as :meth:`propose_values` gets it), in the same
                order.

        Returns:
            actions (list[Any]): one action value form per muscle (as
                :meth:`propose_values` returns it), in the same order.

        Raises:
            Exception: whatever the muscles' :meth:`propose_values` raise;
                the run fails with a :class:`~xdoe.errors.RunError` naming
                the agent and ``muscle.propose_batch``.

        Examples:
            >>> import numpy as np
            >>> from xdoe.agent import Muscle
            >>> class Threshold(Muscle):
            ...     # Action 1 when the observation's sum beats the muscle's own noise.
            ...     def propose_values(self, observation):  # alone
            ...         return int(np.sum(observation) > self.rng.normal())
            ...     @classmethod
            ...     def propose_batch(cls, muscles, observations):  # one sum for the batch
            ...         sums = np.stack(observations).sum(axis=1)
            ...         return [int(s > m.rng.normal()) for s, m in zip(sums, muscles)]
            >>> alone = [Threshold(uid="a", seed=s) for s in range(3)]
            >>> batched = [Threshold(uid="a", seed=s) for s in range(3)]
            >>> observations = [np.array([0.5, -1.0]), np.array([2.0, 1.0]), np.array([-3.0, 0.0])]
            >>> [m.propose_values(o) for m, o in zip(alone, observations)] == \\
            ...     Threshold.propose_batch(batched, observations)
            True
        """
        return [muscle.propose_values(observation) for muscle, observation in zip(muscles, observations)]


# -- the derived forms (xdoe._plugins.derive_forms) ----------------

def _propose_values_of(own: Any) -> Any:
    def propose_values(self: Muscle, observation: Any) -> Any:
        sensors, actuators = _specs(self)
        return propose_through_objects(own.__get__(self), observation, sensors, actuators,
                                       (SensorInformation, ActuatorInformation), self.uid)
    return propose_values


def _specs(muscle: Muscle) -> tuple[list[tuple[str, Any]], list[tuple[str, Any]]]:
    """``(uid, space)`` of ``muscle``'s :attr:`~Muscle.sensors` and :attr:`~Muscle.actuators`
    (what :meth:`Muscle.setup` kept); raises ``RuntimeError`` when it kept none."""
    if not muscle.sensors and not muscle.actuators:
        raise RuntimeError(f"{type(muscle).__name__}.propose_values() is derived from its propose_actions() and "
                           f"needs the sensors and actuators Muscle.setup() keeps: call super().setup(sensors, "
                           f"actuators) in its setup()")
    return [(s.uid, s.space) for s in muscle.sensors], [(a.uid, a.space) for a in muscle.actuators]


def _propose_actions_of(own: Any) -> Any:
    def propose_actions(self: Muscle, sensors: list[SensorInformation],
                        actuators: list[ActuatorInformation]) -> list[ActuatorInformation]:
        value = own(self, values_of(sensors))
        return items_of(ActuatorInformation, [(a.uid, a.space) for a in actuators], value)
    return propose_actions
