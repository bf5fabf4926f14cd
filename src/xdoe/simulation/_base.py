"""The simulation-controller base class and the worker interface it drives."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Protocol, Sequence

__all__ = ["SimulationWorker", "SimulationController"]


class SimulationWorker(Protocol):
    """One worker (one copy of the phase's environments with one muscle per
    agent) as the executor hands it to a :class:`SimulationController`.

    Attributes:
        index: the worker's index (0-based).
        agent_names: the phase's agent names, in document order.
    """

    index: int
    agent_names: Sequence[str]

    def act(self, agent: int) -> None:
        """Let agent number ``agent`` act: its muscle sees the agent's
        sensors and proposes values for its actuators, which are checked
        against their spaces and kept for the next :meth:`update`.

        The agent's previous transition (from its previous action until now)
        is completed first and, in train mode, handed to its brain.

        Raises:
            RunError: the muscle set an actuator not assigned to the agent, or
                a value outside the actuator's space.
        """

    def update(self) -> bool:
        """Apply the actions kept since the last update to the environments,
        advance them one step, compute every agent's rewards and objective,
        and return whether an environment reported ``done``."""


class SimulationController(ABC):
    """Drives the steps of an episode: who acts when, and when the
    environments advance.

    Constructed as ``Cls(**params)`` once per phase. For every episode of
    every worker the executor calls :meth:`start_episode`, then :meth:`step`
    until the termination conditions end the episode (they are asked after
    every :meth:`SimulationWorker.update`, so a step must call ``update``
    exactly once). Workers of a phase advance in lockstep, round-robin, so
    keep per-worker state keyed by ``worker.index``.

    Example (every agent acts, then the environments step)::

        class Vanilla(SimulationController):
            def step(self, worker):
                for i in range(len(worker.agent_names)):
                    worker.act(i)
                worker.update()
    """

    def __init__(self, **params: Any) -> None:
        if params:
            raise TypeError(f"unexpected parameters: {', '.join(sorted(params))}")

    def start_episode(self, worker: SimulationWorker) -> None:
        """Prepare a worker's new episode: reset what the controller keeps for it.

        Called at the start of every episode of every worker, after its
        environments were started (:meth:`Environment.start_environment
        <xdoe.environment.Environment.start_environment>`) and its muscles
        reset, before the episode's first :meth:`step`. Workers interleave,
        so key per-worker state by ``worker.index``. The default does
        nothing.

        Args:
            worker (SimulationWorker): the worker whose episode begins
                (``worker.index``, ``worker.agent_names``); do not act or
                update here.

        Raises:
            Exception: anything it raises ends the run as failed (the run
                instance records the error with its traceback).

        Examples:
            >>> from xdoe.simulation import SimulationController
            >>> class RotatingStart(SimulationController):
            ...     # Taking turns; the first player rotates from one episode to the next.
            ...     def __init__(self):
            ...         super().__init__()
            ...         self.turn, self.episodes = {}, {}
            ...     def start_episode(self, worker):
            ...         n = self.episodes[worker.index] = self.episodes.get(worker.index, -1) + 1
            ...         self.turn[worker.index] = n % len(worker.agent_names)
            ...     def step(self, worker):
            ...         worker.act(self.turn[worker.index])
            ...         worker.update()
            ...         self.turn[worker.index] = (self.turn[worker.index] + 1) % len(worker.agent_names)
            >>> class Worker:  # what the executor hands in, reduced to the names
            ...     index, agent_names = 0, ["x", "o"]
            >>> controller = RotatingStart()
            >>> controller.start_episode(Worker()); first = controller.turn[0]
            >>> controller.start_episode(Worker()); first, controller.turn[0]
            (0, 1)
        """

    @abstractmethod
    def step(self, worker: SimulationWorker) -> None:
        """Run one step of a worker's episode: let agents act, then advance the environments once.

        Called repeatedly for every episode of every worker, until the
        termination conditions (asked after each call) end the episode. A
        step calls :meth:`SimulationWorker.act` for each agent that acts,
        in the order they act, and :meth:`SimulationWorker.update` exactly
        once, at the end: the conditions count one update per step.

        Args:
            worker (SimulationWorker): the worker to step: ``act(i)`` lets
                agent ``i`` (an index into ``worker.agent_names``, document
                order) act, ``update()`` applies the kept actions to the
                environments and returns whether one reported ``done``.

        Raises:
            Exception: anything it raises ends the run as failed;
                :class:`~xdoe.errors.RunError` from ``act``/``update`` (a
                value outside its space, a component that raised) passes
                through.

        Examples:
            >>> from xdoe.simulation import SimulationController
            >>> class LeaderFirst(SimulationController):
            ...     # Agent 0 acts, then the others; then one update.
            ...     def step(self, worker):
            ...         for i in range(len(worker.agent_names)):
            ...             worker.act(i)
            ...         worker.update()
            >>> class Worker:  # records the calls the executor's worker would carry out
            ...     index, agent_names, calls = 0, ["leader", "follower"], []
            ...     def act(self, agent):
            ...         self.calls.append(f"act {self.agent_names[agent]}")
            ...     def update(self):
            ...         self.calls.append("update")
            ...         return False
            >>> worker = Worker()
            >>> LeaderFirst().step(worker)
            >>> worker.calls
            ['act leader', 'act follower', 'update']
        """
