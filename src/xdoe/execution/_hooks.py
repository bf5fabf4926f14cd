"""The work done around a phase's episode loop, as small hook objects in a
list (as Stable-Baselines3's callbacks, ``common/callbacks.py``): the loop
(:meth:`xdoe.execution._phase.PhaseRuntime.run`, the run-process side of
:class:`~xdoe.execution._parallel_workers.ParallelPhase`) calls every hook at
the phase's start and end and at every episode end, and after a step only
the hooks whose class overrides :meth:`Hook.on_step` (none of the run's own:
a step costs nothing here).

The run's hooks (:func:`xdoe.execution._runner.execute_plan`):
:class:`ProgressHook` (progress events), :class:`RedrawHook` (parameter
samplers), :class:`ClockHook` (the recorder's clock-driven work: heartbeat
and live tick), the checkpoints
(:class:`~xdoe.execution._resume.PhaseCheckpointer`) and the prune rungs
(:class:`~xdoe.execution._pruning.PruneTracker`). A parallel worker process
runs the same loop with its own hook (:mod:`xdoe.execution._parallel_child`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence

from xdoe.errors import RunStopped
from xdoe.execution._events import ProgressEvent

if TYPE_CHECKING:
    from xdoe.conditions import EpisodeProgress
    from xdoe.execution._events import PhaseResult, ProgressCallback
    from xdoe.execution._plan import PhasePlan, RunPlan
    from xdoe.store import RunRecorder

__all__ = ["ClockHook", "EpisodeEnd", "Hook", "ProgressHook", "RedrawHook", "episode_hooks", "step_hooks"]

#: Seconds between heartbeats (sent at episode ends; see ``xrun --heartbeat-timeout``).
HEARTBEAT_SECONDS = 10.0
#: Seconds between live ticks at episode ends: buffered rows written (live
#: curves in ``xrun dashboard``) and a pending stop request honoured.
LIVE_SECONDS = 2.0


@dataclass
class EpisodeEnd:
    """One finished episode of one worker, as the hooks see it.

    Attributes:
        worker: the worker's index.
        next_episode: the number of the worker's next episode (its episodes done in the phase).
        episode: the episode for the conditions (steps, rewards and objectives per agent).
        truncated: the phase ended while the episode ran.
        verdict: the verdict of the step that ended it (``CONTINUE`` when the phase's end cut it).
        cut_by: what cut the episode (:mod:`xdoe._cuts`), ``None`` when the environment ended it.
    """

    worker: int
    next_episode: int
    episode: "EpisodeProgress"
    truncated: bool
    verdict: int
    cut_by: str | None


class Hook:
    """Work at the events of a phase's episode loop; every method does
    nothing by default, and :meth:`on_step` is called only for hooks whose
    class overrides it."""

    def on_phase_start(self, runner: Any) -> None:
        """The phase is built (``runner``: its
        :class:`~xdoe.execution._phase_runner.PhaseRunner`), its conditions
        told; no episode ran yet."""

    def on_step(self, worker: Any) -> int:
        """``worker`` took a step (and it did not end the episode); returns a
        verdict (``Verdict``: ``STOP_PHASE`` or above stops the phase)."""
        return 0

    def on_episode_end(self, end: EpisodeEnd) -> int | None:
        """An episode ended and is recorded; the worker has not started its
        next. Returns a verdict, or ``None`` (``CONTINUE``): ``STOP_PHASE`` or
        above stops the phase, as an episode condition's would.

        Raises:
            RunStopped / RunPruned: the run ends here.
        """

    def on_phase_end(self, result: "PhaseResult") -> None:
        """Every episode of the phase ran (not called when the phase failed)."""


def _overrides(hook: Hook, method: str) -> bool:
    return getattr(type(hook), method) is not getattr(Hook, method)


def step_hooks(hooks: Sequence[Hook]) -> list[Callable[[Any], int]]:
    """The ``on_step`` of the hooks that need steps (their class overrides it)."""
    return [h.on_step for h in hooks if _overrides(h, "on_step")]


def episode_hooks(hooks: Sequence[Hook]) -> list[Callable[[EpisodeEnd], int | None]]:
    """The ``on_episode_end`` of the hooks whose class overrides it, in order."""
    return [h.on_episode_end for h in hooks if _overrides(h, "on_episode_end")]


class ProgressHook(Hook):
    """A :class:`~xdoe.execution.ProgressEvent` to ``callback`` at the phase's
    start and at every episode end (``steps_before``: the run's steps before
    this phase)."""

    def __init__(self, callback: "ProgressCallback", plan: "RunPlan", phase: "PhasePlan", steps_before: int) -> None:
        self.callback, self.plan, self.phase, self.steps_before = callback, plan, phase, steps_before
        self.total = phase.workers * phase.episodes
        self.episodes = 0
        self.runner: Any = None

    def on_phase_start(self, runner: Any) -> None:
        self.runner = runner
        self._send(0, 0)

    def on_episode_end(self, end: EpisodeEnd) -> None:
        self.episodes += 1
        assert self.runner is not None
        self._send(self.episodes, self.runner.progress.steps)

    def _send(self, episodes: int, steps: int) -> None:
        plan, phase = self.plan, self.phase
        self.callback(ProgressEvent(plan.uid, phase.name, phase.index, len(plan.phases), episodes, self.total,
                                    self.steps_before + steps))


class RedrawHook(Hook):
    """Re-creates a worker's environments that have parameter samplers
    before its next episode (``runner.redraw``)."""

    def __init__(self, runner: Any, workers: Sequence[Any]) -> None:
        self.runner, self.budget = runner, runner.phase.episodes
        self.workers = {w.index: w for w in workers}

    def on_episode_end(self, end: EpisodeEnd) -> None:
        if end.next_episode < self.budget:
            self.runner.redraw(self.workers[end.worker])


class ClockHook(Hook):
    """The recorder's clock-driven work at episode ends, with one clock read
    per episode end; kept for the whole run:

    * the heartbeat, refreshed once :data:`HEARTBEAT_SECONDS` passed since the last;
    * the live tick, once :data:`LIVE_SECONDS` passed since the last: the
      buffered rows written (live views see them) and a stop request
      (:meth:`xdoe.store.Store.request_stop`) honoured.

    Raises:
        RunStopped: a stop was requested.
    """

    def __init__(self, recorder: "RunRecorder") -> None:
        self.recorder = recorder
        self.beat = self.live = time.monotonic()

    def on_episode_end(self, end: EpisodeEnd) -> None:
        now = time.monotonic()
        if now - self.beat > HEARTBEAT_SECONDS:
            self.recorder.heartbeat()
            self.beat = now = time.monotonic()
        if now - self.live > LIVE_SECONDS:
            self.live = now
            recorder = self.recorder
            recorder.flush()
            assert recorder.instance_id is not None
            reason = recorder.store.runs.stop_requested(recorder.instance_id)
            if reason is not None:
                raise RunStopped(f"run {recorder.run_uid}: {reason}")
