"""Termination conditions: the verdict scale, the progress views they read and
the base class."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from xdoe.environment import EnvironmentState

__all__ = [
    "Verdict",
    "Decision",
    "PhaseProgress",
    "StepProgress",
    "EpisodeProgress",
    "TerminationCondition",
]


class Verdict(enum.IntEnum):
    """A termination condition's answer; ordered, the highest answer wins.

    - ``CONTINUE``: go on;
    - ``RESET``: end the current episode of this worker (a new one starts
      while the worker has episodes left);
    - ``STOP_PHASE``: end the phase for every worker (unfinished episodes of
      other workers are recorded as truncated);
    - ``STOP_RUN``: end the phase and skip the remaining phases of the run.
    """

    CONTINUE = 0
    RESET = 1
    STOP_PHASE = 2
    STOP_RUN = 3


#: Alias of :class:`Verdict` (the name used in some documents and papers).
Decision = Verdict


@dataclass
class PhaseProgress:
    """What is known about the running phase.

    Attributes:
        index: position of the phase in the schedule (0-based).
        name: the phase's name (the schedule entry's key, e.g. ``"training"``).
        mode: ``"train"`` or ``"test"``.
        workers: number of workers (environment copies).
        episodes: the per-worker episode budget (``phase_config.episodes``).
        agents: the agent names of the phase, in document order.
        episodes_done: per worker, the number of episodes finished so far.
        steps: environment updates so far in the phase, all workers together.
    """

    index: int
    name: str
    mode: str
    workers: int
    episodes: int
    agents: list[str]
    episodes_done: list[int] = field(default_factory=list)
    steps: int = 0


@dataclass
class StepProgress:
    """One environment update of one worker, as a condition sees it.

    The executor reuses one instance per worker and mutates it in place: read
    it in :meth:`TerminationCondition.step_finished`, do not keep it.

    Attributes:
        phase: the phase's :class:`PhaseProgress`.
        worker: index of the worker that just updated its environments.
        episode: the worker's current episode (0-based, per worker).
        step: updates in this episode so far (1 after the first update).
        done: an environment of this worker reported ``done``.
        objectives: agent name -> the agent's objective value of this update.
        states: the environment states of this update, in the phase's
            environment order.
        decided_by: the ``step_finished`` (a bound method) of the condition
            whose answer was the highest of the last update that any
            condition answered above ``CONTINUE`` (set by the executor; it
            tells which condition cut an episode, see :mod:`xdoe._cuts`).
    """

    phase: PhaseProgress
    worker: int
    episode: int = 0
    step: int = 0
    done: bool = False
    objectives: dict[str, float] = field(default_factory=dict)
    states: list[EnvironmentState] = field(default_factory=list)
    decided_by: Any = None


@dataclass
class EpisodeProgress:
    """A finished episode of one worker.

    Attributes:
        phase: the phase's :class:`PhaseProgress` (``episodes_done`` already
            counts this episode).
        worker: the worker's index.
        episode: the episode's number (0-based, per worker).
        steps: environment updates in the episode.
        rewards: agent name -> sum of the environment rewards it received.
        objectives: agent name -> sum of its objective values.
    """

    phase: PhaseProgress
    worker: int
    episode: int
    steps: int
    rewards: dict[str, float]
    objectives: dict[str, float]


class TerminationCondition:
    """Decides when episodes, phases and runs end.

    Constructed as ``Cls(**params)`` with the document's ``params``. The
    executor calls :meth:`phase_started` at the start of every phase the
    condition takes part in, :meth:`step_finished` after every environment
    update of every worker and :meth:`episode_finished` after every episode.
    Each answers a :class:`Verdict`; among all conditions of a phase (the
    simulation's ``conditions`` and the run's ``run_config.condition``) the
    highest answer wins.

    The default methods answer ``CONTINUE`` and are skipped by the executor,
    so override only what you need; keep :meth:`step_finished` cheap, it
    runs at every step.

    Example::

        class StopAtTen(TerminationCondition):
            def step_finished(self, step: StepProgress) -> Verdict:
                return Verdict.RESET if step.step >= 10 else Verdict.CONTINUE
    """

    def __init__(self, **params: Any) -> None:
        if params:
            raise TypeError(f"unexpected parameters: {', '.join(sorted(params))}")

    def phase_started(self, phase: PhaseProgress) -> None:
        """A phase begins (conditions of ``run_config`` see every phase)."""

    def step_finished(self, step: StepProgress) -> Verdict:
        """Answer after one environment update of one worker."""
        return Verdict.CONTINUE

    def episode_finished(self, episode: EpisodeProgress) -> Verdict:
        """Answer after one episode of one worker."""
        return Verdict.CONTINUE

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"
