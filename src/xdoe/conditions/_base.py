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
        """Learn what the phase is before its first step: reset per-phase counters.

        Called once at the start of every phase the condition takes part in,
        before any episode: a condition of a simulation is built for its
        phase; the run's ``run_config.condition`` is built once and sees
        every phase. Under ``--parallel-workers`` each worker process has its
        own copy, which gets this call too. The default does nothing.

        Args:
            phase (PhaseProgress): the phase: ``index`` (0-based position in
                the schedule), ``name``, ``mode`` (``"train"`` or
                ``"test"``), ``workers``, ``episodes`` (per worker),
                ``agents`` (names in document order); its ``episodes_done``
                (``list[int]`` per worker) and ``steps`` (``int``) grow as
                the phase runs: keep the object and read them later.

        Raises:
            Exception: anything it raises ends the run as failed.

        Examples:
            >>> from xdoe.conditions import PhaseProgress, StepProgress, TerminationCondition, Verdict
            >>> class TrainBudget(TerminationCondition):
            ...     # Stop a training phase after ``steps`` updates of all workers together.
            ...     def __init__(self, steps: int = 1000):
            ...         super().__init__()
            ...         self.budget = steps
            ...     def phase_started(self, phase):
            ...         self.phase = phase
            ...     def step_finished(self, step):
            ...         over = self.phase.mode == "train" and self.phase.steps >= self.budget
            ...         return Verdict.STOP_PHASE if over else Verdict.CONTINUE
            >>> phase = PhaseProgress(index=0, name="training", mode="train", workers=1, episodes=10, agents=["a"])
            >>> condition = TrainBudget(steps=2)
            >>> condition.phase_started(phase)
            >>> phase.steps = 2  # the executor counts
            >>> condition.step_finished(StepProgress(phase, worker=0))
            <Verdict.STOP_PHASE: 2>
        """

    def step_finished(self, step: StepProgress) -> Verdict:
        """Judge one environment update of one worker: go on, end the episode, the phase or the run.

        Called after every :meth:`SimulationController.step
        <xdoe.simulation.SimulationController.step>` (one update of the
        worker's environments), for every worker; the highest answer of all
        the phase's conditions wins. The default answers ``CONTINUE`` and is
        skipped by the executor; an override runs at every step, so keep it
        cheap. Under ``--parallel-workers`` it runs in the worker processes
        on per-worker copies (``phase.steps`` and ``episodes_done`` then
        count that worker's own).

        Args:
            step (StepProgress): the update: ``phase`` (the
                :class:`PhaseProgress`), ``worker``, ``episode`` (0-based,
                per worker), ``step`` (updates in this episode so far, 1
                after the first), ``done`` (an environment reported the end
                of the episode), ``objectives`` (``dict[str, float]``, agent
                name -> objective of this update) and ``states``
                (``list[EnvironmentState]`` in the phase's environment
                order). The object is reused and changed in place: read it
                now, do not keep it.

        Returns:
            verdict (Verdict): ``CONTINUE``; ``RESET`` (end this worker's episode, the
                episode recorded truncated unless an environment terminated
                it); ``STOP_PHASE`` (end the phase for every worker); or
                ``STOP_RUN`` (end the phase and skip the run's remaining
                phases).

        Raises:
            Exception: anything it raises ends the run as failed.

        Examples:
            >>> from xdoe.conditions import PhaseProgress, StepProgress, TerminationCondition, Verdict
            >>> class Fell(TerminationCondition):
            ...     # End the episode when any agent's objective of an update drops below ``floor``.
            ...     def __init__(self, floor: float = -1.0):
            ...         super().__init__()
            ...         self.floor = floor
            ...     def step_finished(self, step):
            ...         low = any(value < self.floor for value in step.objectives.values())
            ...         return Verdict.RESET if low else Verdict.CONTINUE
            >>> phase = PhaseProgress(index=0, name="training", mode="train", workers=1, episodes=5, agents=["a"])
            >>> Fell(floor=-1.0).step_finished(StepProgress(phase, worker=0, step=3, objectives={"a": -5.0}))
            <Verdict.RESET: 1>
        """
        return Verdict.CONTINUE

    def episode_finished(self, episode: EpisodeProgress) -> Verdict:
        """Judge a finished episode of one worker: go on, or end the phase or the run.

        Called after every episode of every worker, once it is recorded; the
        highest answer of the phase's conditions wins. The default answers
        ``CONTINUE`` and is skipped by the executor. Under
        ``--parallel-workers`` it runs once, in the run process, with counts
        over all workers.

        Args:
            episode (EpisodeProgress): the episode: ``phase`` (its
                ``episodes_done`` already counts this one), ``worker``,
                ``episode`` (0-based, per worker), ``steps`` (updates in
                it), ``rewards`` and ``objectives`` (``dict[str, float]``,
                agent name -> sum over the episode).

        Returns:
            verdict (Verdict): ``CONTINUE`` (the worker starts its next episode while it
                has episodes left); ``STOP_PHASE`` or ``STOP_RUN`` as in
                :meth:`step_finished` (``RESET`` here means the same as
                ``CONTINUE``: the episode has ended).

        Raises:
            Exception: anything it raises ends the run as failed.

        Examples:
            >>> from xdoe.conditions import EpisodeProgress, PhaseProgress, TerminationCondition, Verdict
            >>> class Solved(TerminationCondition):
            ...     # Stop the phase once an episode's objective reaches ``target``.
            ...     def __init__(self, target: float = 195.0):
            ...         super().__init__()
            ...         self.target = target
            ...     def episode_finished(self, episode):
            ...         solved = max(episode.objectives.values(), default=0.0) >= self.target
            ...         return Verdict.STOP_PHASE if solved else Verdict.CONTINUE
            >>> phase = PhaseProgress(index=0, name="training", mode="train", workers=1, episodes=500, agents=["a"])
            >>> Solved(target=195.0).episode_finished(EpisodeProgress(phase, worker=0, episode=41, steps=200,
            ...                                                       rewards={"a": 200.0}, objectives={"a": 200.0}))
            <Verdict.STOP_PHASE: 2>
        """
        return Verdict.CONTINUE

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"
