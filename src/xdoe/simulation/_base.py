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
        """A new episode begins in ``worker`` (its environments are reset)."""

    @abstractmethod
    def step(self, worker: SimulationWorker) -> None:
        """Run one step: some agents act, then one ``worker.update()``."""
