"""The :class:`PhaseRunner` protocol: what the run loop
(:func:`xdoe.execution._runner.execute_plan`) needs of one phase, however its
workers run. Two classes implement it:

* :class:`xdoe.execution._phase.PhaseRuntime` -- every worker in this process;
* :class:`xdoe.execution._parallel_workers.ParallelPhase` -- one process per
  worker, the brains, recorder and episode-level conditions staying here.

The runner builds one of them (``_phase_runtime``) and from then on only
calls what is declared here, never asking which kind it holds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, Sequence, runtime_checkable

if TYPE_CHECKING:
    from xdoe.conditions import PhaseProgress, Verdict
    from xdoe.execution._events import PhaseResult
    from xdoe.execution._hooks import Hook
    from xdoe.execution._plan import PhasePlan

__all__ = ["PhaseRunner"]


@runtime_checkable
class PhaseRunner(Protocol):
    """One phase, ready to run.

    Attributes:
        phase: the phase's plan.
        progress: the phase's progress counters (``steps`` all workers together),
            kept current while :meth:`run` runs.
        workers: the workers living in this process (empty when they run in
            other processes), for checkpoints.
        samplers: per worker in :attr:`workers`, per environment, the
            parameter sampler generator or ``None``.
    """

    phase: PhasePlan
    progress: PhaseProgress
    workers: list[Any]
    samplers: list[list[Any]]

    @property
    def has_samplers(self) -> bool:
        """Whether :meth:`redraw` must be called before a worker's next episode."""

    def redraw(self, worker: Any) -> None:
        """Re-create ``worker``'s environments that have parameter samplers."""

    def run(self, result: PhaseResult, hooks: Sequence[Hook] = ()) -> Verdict:
        """Run every worker's episodes until the budget or a phase-level
        verdict; add episodes, steps, mean rewards and objectives and
        ``stopped_by`` to ``result``; return the highest verdict. Every hook
        (:class:`~xdoe.execution._hooks.Hook`) hears of the phase's start, of
        every episode end (in the order the episodes end) and of the phase's
        end; those that need steps, of the steps taken in this process.

        Raises:
            ComponentError / RunError: a component or worker failed.
        """

    def close(self) -> None:
        """Close the environments (and stop worker processes)."""
