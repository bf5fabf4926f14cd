"""The learning part of an agent: :class:`Brain`."""

from __future__ import annotations

import pickle
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from xdoe._plugins import derive_forms, retire_value_steps, think_through_objects, values_of
from xdoe.agent._experience import Experience, Mode
from xdoe.environment import ActuatorInformation, RewardInformation, SensorInformation

__all__ = ["Brain"]


class Brain(ABC):
    """The learning part of an agent; one per agent, shared by its muscles.

    Constructed as ``Cls(seed=..., **params)``. The executor then calls
    :meth:`setup` with the agent's sensors and actuators (ids and spaces)
    before the first phase, sets :attr:`mode` and :attr:`workers` (the
    phase's worker count) at the start of every phase, and in train mode
    hands every step to :meth:`thinking`. Whatever ``thinking`` returns
    (when not ``None``) is passed to :meth:`Muscle.update` of every muscle
    of the agent.

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
        """Receive the agent's sensors and actuators: size the model to them.

        Called once per run, right after construction, before the first phase
        the agent takes part in (the brain is then kept from phase to phase).
        The default keeps both lists as :attr:`sensors` and
        :attr:`actuators`; an override calls ``super().setup(...)`` and
        builds what depends on the spaces (a table, a network); a
        :meth:`thinking_values` derived from :meth:`thinking` reads the ids
        and spaces of the steps' values there.

        Args:
            sensors (list[SensorInformation]): the agent's own sensors, in the
                order of its ``sensors`` list in the run document: full ids
                ``<environment uid>.<name>`` and gymnasium spaces (values are
                the episode-start readings and carry no meaning here).
            actuators (list[ActuatorInformation]): the agent's own actuators,
                in document order, with their spaces (``value=None``).

        Raises:
            Exception: raise (a ``ValueError``, say) for sensors or actuators
                the brain cannot work with; the run fails with a
                :class:`~xdoe.errors.RunError` naming the agent's document
                key and ``brain: setup``, the exception as its cause.

        Examples:
            >>> import numpy as np
            >>> from gymnasium import spaces
            >>> from xdoe.agent import Brain
            >>> from xdoe.environment import ActuatorInformation, SensorInformation
            >>> class TableBrain(Brain):
            ...     def setup(self, sensors, actuators):
            ...         super().setup(sensors, actuators)
            ...         self.q = np.zeros((sensors[0].space.n, actuators[0].space.n))  # states x actions
            ...     def thinking(self, experience):
            ...         return None
            >>> brain = TableBrain(seed=0)
            >>> brain.setup([SensorInformation("taxi.observation", spaces.Discrete(500))],
            ...             [ActuatorInformation("taxi.action", spaces.Discrete(6))])
            >>> brain.q.shape
            (500, 6)
        """
        self.sensors = list(sensors)
        self.actuators = list(actuators)

    @abstractmethod
    def thinking(self, experience: Experience) -> Any | None:
        """Learn from one step the agent lived; return what its muscles should learn of it.

        The object form of learning; write this or :meth:`thinking_values`,
        the class gets the other (``docs/plugins.md``, "A step"). Called in
        train mode only (:attr:`mode` is ``Mode.TRAIN``), once per step of
        the agent in every worker of the phase (workers interleave: read
        ``experience.worker``), the last step of an episode with
        ``experience.done`` true. With the taking-turns controller one step
        runs from the agent's action to its next turn.

        Args:
            experience (Experience): the step: ``worker``, ``episode``,
                ``step`` (``int``, 0-based), ``sensors`` (what the agent saw
                before acting, its sensors only), ``actuators`` (what its
                muscle set), ``rewards`` (``list[RewardInformation]``, the
                agent's own and the shared ones), ``objective`` (``float``,
                what :meth:`Objective.internal_reward` made of them),
                ``next_sensors`` (what it sees after the update), ``done``,
                ``truncated`` (``bool``; ``experience.terminated`` is ``done
                and not truncated``: bootstrap from ``next_sensors`` unless
                terminated) and ``extras`` (the ``dict`` its muscle attached
                when it acted, :attr:`Muscle.extras`).

        Returns:
            update (Any | None): an update (any object: new action values, network
                weights, a version number) handed to :meth:`Muscle.update`
                of every muscle of the agent, in every worker; ``None`` sends
                nothing. A muscle in another process (``--parallel-workers``)
                receives a pickled copy, so it must pickle.

        Raises:
            Exception: anything it raises fails the run with a
                :class:`~xdoe.errors.RunError` naming the agent and
                ``brain.thinking``, the exception as its cause.

        Examples:
            >>> import numpy as np
            >>> from gymnasium import spaces
            >>> from xdoe.agent import Brain, Experience
            >>> from xdoe.environment import ActuatorInformation, RewardInformation, SensorInformation
            >>> class MeanBrain(Brain):
            ...     # The mean objective of each action of one Discrete actuator.
            ...     def setup(self, sensors, actuators):
            ...         super().setup(sensors, actuators)
            ...         self.sums, self.counts = np.zeros(actuators[0].space.n), np.zeros(actuators[0].space.n)
            ...     def thinking(self, experience):
            ...         action = int(experience.actuators[0].value)
            ...         self.sums[action] += experience.objective
            ...         self.counts[action] += 1
            ...         return self.sums / np.maximum(self.counts, 1)  # the muscles' new action values
            >>> seen, arm = SensorInformation("bandit.seen", spaces.Discrete(1), 0), spaces.Discrete(2)
            >>> brain = MeanBrain(seed=0)
            >>> brain.setup([seen], [ActuatorInformation("bandit.arm", arm)])
            >>> brain.thinking(Experience(worker=0, episode=0, step=0, sensors=[seen],
            ...                           actuators=[ActuatorInformation("bandit.arm", arm, 1)],
            ...                           rewards=[RewardInformation("bandit.r", 2.0)], objective=2.0,
            ...                           next_sensors=[seen], done=True))
            array([0., 2.])
        """

    @abstractmethod
    def thinking_values(self, worker: int, episode: int, step: int, observation: Any, action: Any,
                        rewards: dict[str, float], objective: float, next_observation: Any, done: bool,
                        extras: dict[str, Any], truncated: bool) -> Any | None:
        """Learn from one step, as plain values (the value form the executor calls).

        :meth:`thinking` with the fields of its :class:`Experience` as
        arguments and the sensors and actuators as values; write this or
        :meth:`thinking`, the class gets the other. Called as
        :meth:`thinking` is: in train mode, once per step of the agent in
        every worker.

        Args:
            worker (int): the worker (environment copy) the step happened
                in, ``0 <= worker <`` :attr:`workers`.
            episode (int): the episode within the phase, per worker, 0-based.
            step (int): the step within the episode, 0-based.
            observation (Any): the value form of the agent's sensors before
                it acted: the plain value of its only sensor (an ``int`` for
                ``Discrete``, a numpy array of the space's shape for
                ``Box``), else a ``dict`` ``sensor id -> value``.
            action (Any): the value form of what its muscle set: the plain
                value of its only actuator, else a ``dict`` ``actuator id ->
                value``.
            rewards (dict[str, float]): ``reward id -> value``, the agent's
                own and the shared rewards of the step.
            objective (float): the agent's objective value of the step.
            next_observation (Any): the value form of its sensors after the
                update (as ``observation``).
            done (bool): the episode ended for the agent with this step.
            extras (dict[str, Any]): what its muscle attached when it acted
                (:attr:`Muscle.extras`; empty when nothing).
            truncated (bool): the episode was cut, not terminated: bootstrap
                from ``next_observation`` (meaningful only when ``done``).

        Returns:
            update (Any | None): as :meth:`thinking`: an update for every muscle of the
                agent, or ``None``.

        Raises:
            Exception: anything it raises fails the run with a
                :class:`~xdoe.errors.RunError` naming the agent and
                ``brain.thinking_values``.

        Examples:
            >>> import numpy as np
            >>> from xdoe.agent import Brain
            >>> class TabularQ(Brain):
            ...     # One-step Q-learning on a Discrete sensor and actuator (alpha 0.5, gamma 0.9).
            ...     def setup(self, sensors, actuators):
            ...         super().setup(sensors, actuators)
            ...         self.q = np.zeros((3, 2))
            ...     def thinking_values(self, worker, episode, step, observation, action, rewards, objective,
            ...                         next_observation, done, extras, truncated):
            ...         target = objective + (0.0 if done and not truncated else 0.9 * self.q[next_observation].max())
            ...         self.q[observation, action] += 0.5 * (target - self.q[observation, action])
            ...         return self.q  # the muscles act greedily on it
            >>> brain = TabularQ(seed=0)
            >>> brain.setup([], [])
            >>> brain.thinking_values(0, 0, 0, observation=1, action=0, rewards={"line.r": 1.0}, objective=1.0,
            ...                       next_observation=2, done=True, extras={}, truncated=False)[1]
            array([0.5, 0. ])
        """

    def pretrain(self, experiences: Iterable[Experience]) -> None:
        """Train offline on steps stored by earlier runs, before a phase starts.

        Called when the agent's entry in the run document has ``replay:``
        (``docs/resume.md``), once per replayed source, after :meth:`setup`
        and any ``load:``, before the phase's first episode. The default
        hands each experience to :meth:`thinking` and drops the updates (the
        muscles then get :meth:`muscle_state`); override it for batch
        learning.

        Args:
            experiences (Iterable[Experience]): the stored steps of the
                source (stored with ``--store-steps all``), in (phase,
                worker, episode, step) order, as one pass of an iterator:
                read it once. ``next_sensors`` of a step are the sensors of
                the next stored step of the episode; ``extras`` are empty.

        Raises:
            Exception: anything it raises fails the run with a
                :class:`~xdoe.errors.RunError` naming the brain and
                ``pretrain``.

        Examples:
            >>> from gymnasium import spaces
            >>> from xdoe.agent import Brain, Experience
            >>> from xdoe.environment import ActuatorInformation, SensorInformation
            >>> class CountingBrain(Brain):
            ...     def thinking(self, experience):
            ...         self.seen = getattr(self, "seen", 0) + 1
            >>> s, a = SensorInformation("e.s", spaces.Discrete(2), 0), ActuatorInformation("e.a", spaces.Discrete(2), 1)
            >>> stored = (Experience(0, 0, step, [s], [a], [], 0.0, [s], step == 2) for step in range(3))
            >>> brain = CountingBrain(seed=0)
            >>> brain.pretrain(stored)  # the default: thinking, step by step
            >>> brain.seen
            3
        """
        for experience in experiences:
            self.thinking(experience)

    def muscle_state(self) -> Any | None:
        """What a fresh muscle needs to act as this brain has learnt.

        The executor builds new muscles at the start of every phase (one per
        worker) and after a brain was loaded (``load:``) or pretrained
        (``replay:``); each gets this value through :meth:`Muscle.update`,
        so a test phase acts on what the training phase learnt. The default
        (``None``) sends nothing.

        Returns:
            update (Any | None): an update in the form :meth:`thinking` returns (the
                muscles' :meth:`Muscle.update` reads both), e.g. the current
                action values or policy weights; ``None``: nothing to send.

        Raises:
            Exception: anything it raises fails the run with a
                :class:`~xdoe.errors.RunError` naming the agent's muscle
                ``setup``.

        Examples:
            >>> import numpy as np
            >>> from xdoe.agent import Brain
            >>> class ValueBrain(Brain):
            ...     def setup(self, sensors, actuators):
            ...         super().setup(sensors, actuators)
            ...         self.values = np.array([0.25, 0.75])
            ...     def thinking(self, experience):
            ...         return self.values.copy()
            ...     def muscle_state(self):
            ...         return self.values.copy()  # what thinking sends, for muscles built later
            >>> brain = ValueBrain(seed=0)
            >>> brain.setup([], [])
            >>> brain.muscle_state()
            array([0.25, 0.75])
        """
        return None

    def store(self, path: Path) -> None:
        """Write the brain's model to the file ``path`` (a checkpoint).

        Called at the end of every phase and, with ``checkpoint_every: N``
        in a ``phase_config``, after every N steps (at the next episode end);
        the file is what :meth:`load` reads to resume a run or to start
        another from it (``load:``). The default pickles the brain's
        attributes (``self.__dict__``); override both methods for a portable
        format (a framework's own ``save``).

        Args:
            path (pathlib.Path): the file to write (in a temporary name the
                executor renames into place; its folder exists). Write
                exactly this one file.

        Raises:
            Exception: anything it raises, or writing no file, fails the run
                with a :class:`~xdoe.errors.RunError` naming the file.

        Examples:
            >>> import pathlib, tempfile
            >>> from xdoe.agent import Brain
            >>> class Counter(Brain):
            ...     def thinking(self, experience):
            ...         self.n = getattr(self, "n", 0) + 1
            >>> brain = Counter(seed=0)
            >>> brain.n = 41
            >>> path = pathlib.Path(tempfile.mkdtemp()) / "counter.brain"
            >>> brain.store(path)
            >>> path.stat().st_size > 0
            True
        """
        with open(path, "wb") as fh:
            pickle.dump(self.__dict__, fh, protocol=pickle.HIGHEST_PROTOCOL)

    def load(self, path: Path) -> None:
        """Replace the brain's model by the one :meth:`store` wrote to ``path``.

        Called on a constructed and set-up brain when a run resumes from a
        checkpoint and when an agent's entry says ``load:`` (before the phase
        starts; the muscles then get :meth:`muscle_state`). The default
        updates ``self.__dict__`` from the pickle.

        Args:
            path (pathlib.Path): a file written by :meth:`store` of a brain of
                the same class (its sha256 already checked against the
                store's record).

        Raises:
            Exception: anything it raises (a file of another class or
                version, say) fails the run with a
                :class:`~xdoe.errors.RunError` naming the file.

        Examples:
            >>> import pathlib, tempfile
            >>> from xdoe.agent import Brain
            >>> class Counter(Brain):
            ...     def thinking(self, experience):
            ...         self.n = getattr(self, "n", 0) + 1
            >>> trained, fresh = Counter(seed=0), Counter(seed=1)
            >>> trained.n = 41
            >>> path = pathlib.Path(tempfile.mkdtemp()) / "counter.brain"
            >>> trained.store(path)
            >>> fresh.load(path)
            >>> fresh.n, fresh.seed  # the default restores every attribute
            (41, 0)
        """
        with open(path, "rb") as fh:
            self.__dict__.update(pickle.load(fh))


# -- the derived forms (xdoe._plugins.derive_forms) ----------------

def _thinking_values_of(own: Any) -> Any:
    def thinking_values(self: Brain, worker: int, episode: int, step: int, observation: Any, action: Any,
                        rewards: dict[str, float], objective: float, next_observation: Any, done: bool,
                        extras: dict[str, Any], truncated: bool) -> Any | None:
        return think_through_objects(
            own.__get__(self), (worker, episode, step, observation, action, rewards, objective, next_observation,
                                done, extras, truncated),
            [(s.uid, s.space) for s in self.sensors], [(a.uid, a.space) for a in self.actuators],
            (Experience, SensorInformation, ActuatorInformation, RewardInformation))
    return thinking_values


def _thinking_of(own: Any) -> Any:
    def thinking(self: Brain, experience: Experience) -> Any | None:
        e = experience
        return own(self, e.worker, e.episode, e.step, values_of(e.sensors), values_of(e.actuators),
                   {r.uid: r.value for r in e.rewards}, e.objective, values_of(e.next_sensors), e.done,
                   e.extras, e.truncated)
    return thinking
