"""Parallel rollout workers: the workers of a phase in separate processes,
feeding the one brain per agent that lives in the run's process.

Off by default (the in-process, deterministic loop of
:mod:`xdoe.execution._runner` runs); on within :func:`parallel_workers`
(``xrun experiment-start --parallel-workers``) for every phase with
``worker > 1``. Each worker ``w`` is a process (``spawn`` start method) that
builds exactly what the in-process loop builds for worker ``w`` (the same
environment and muscle seeds, its simulation controller and its own copies of
the phase's termination conditions) and runs its episodes:

* worker -> run process, in batches (every ``flush_every`` items and at every
  episode end): the experiences of train phases (``brain.thinking_values`` runs in
  the run process, in arrival order), the episode and step rows for the store,
  and every finished episode (the run process's conditions judge it with
  ``episode_finished``; a ``STOP_PHASE``/``STOP_RUN`` verdict stops every
  worker, except a worker's own step budget running out, which ends that
  worker only); at its end, after all its rows, ``done``;
* run process -> workers: each non-``None`` brain update, as the brain
  returns it, to the agent's muscle in every worker; ``stop``.

What changes compared with the in-process mode (see docs/scale.md):

* the order in which experiences of different workers reach the brain, and
  hence the moment each muscle sees an update, depends on timing: a run with
  ``worker > 1`` in train mode is no longer bit-for-bit reproducible (test
  phases, and worker 1 phases, are; every environment's and muscle's random
  stream stays seeded exactly as in-process);
* muscles receive copies of updates (a brain that returns a mutable model
  shares nothing with the muscles: they see it when it is sent);
* ``step_finished`` runs in the workers on per-worker copies of the
  conditions, whose ``PhaseProgress.steps``/``episodes_done`` count that
  worker's own steps and episodes (a ``phase_steps`` budget limits each
  worker: the one whose budget runs out ends, the others go on to theirs);
  ``episode_finished`` runs once, in the run process, with counts over all
  workers; a stop reaches the other workers a few steps later than in-process
  (their unfinished episodes are recorded as truncated, as in-process);
* a phase resumed from a checkpoint runs in-process.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import threading
from multiprocessing.connection import wait as _wait_any
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence

from xdoe._cuts import CUT_STEP_BUDGET
from xdoe.agent import Brain, Mode
from xdoe.conditions import EpisodeProgress, TerminationCondition, Verdict
from xdoe._plugins import report_observation
from xdoe.errors import RunError
from xdoe.execution._agent_runtime import brain_step
from xdoe.execution._events import PhaseResult
from xdoe.execution._hooks import EpisodeEnd, episode_hooks
from xdoe.execution._parallel_child import worker_main
from xdoe.execution._phase import build_component, overrides, phase_conditions, phase_progress
from xdoe.execution._seeding import Seeds
from xdoe.execution._watchdog import RunTimeout, WatchBoard
from xdoe.execution._worker import CONTINUE, STOP_PHASE, component_error

if TYPE_CHECKING:
    from xdoe.execution._hooks import Hook
    from xdoe.execution._plan import AgentSpec, PhasePlan, RunPlan
    from xdoe.store import RunRecorder

__all__ = ["parallel_workers", "parallel_workers_enabled", "ParallelPhase", "FLUSH_EVERY"]

#: Items (experiences, rows) a worker buffers before sending them.
FLUSH_EVERY = 32
_START_METHOD = "spawn"

#: ``enabled``: :func:`parallel_workers` is in effect in this thread (a thread's attribute, not a
#: ``contextvars.ContextVar``: see ``xdoe._plugins._observations._LOCAL``, numpy's per-array look-ups
#: of its own context variables cost more with every variable set)
_LOCAL = threading.local()


@contextlib.contextmanager
def parallel_workers(enabled: bool = True) -> Iterator[None]:
    """Within the block, runs executed in this thread run every phase with
    ``worker > 1`` in worker processes (``xrun experiment-start
    --parallel-workers``); ``enabled=False`` keeps the in-process default."""
    outer = getattr(_LOCAL, "enabled", False)
    _LOCAL.enabled = bool(enabled)
    try:
        yield
    finally:
        _LOCAL.enabled = outer


def parallel_workers_enabled() -> bool:
    """Whether :func:`parallel_workers` is in effect."""
    return getattr(_LOCAL, "enabled", False)


# -- run process side ---------------------------------------------------------------------

class _RemoteTraceback(Exception):
    def __init__(self, tb: str) -> None:
        super().__init__(tb)
        self.tb = tb

    def __str__(self) -> str:
        return f"\n\"\"\"\n{self.tb}\"\"\""


class ParallelPhase:
    """One phase run by ``phase.workers`` worker processes (see the module
    docstring); the run process keeps the brains, the recorder and the
    episode-level conditions.

    A :class:`~xdoe.execution._phase_runner.PhaseRunner`: ``workers`` is
    empty (no worker lives here) and ``has_samplers`` is ``False`` (workers
    redraw their own environments).

    Raises:
        RunError: a worker process failed (its error and traceback are
            chained) or died.
    """

    workers: list[Any] = []
    samplers: list[list[Any]] = []
    has_samplers = False

    def __init__(self, plan: "RunPlan", phase: "PhasePlan", brains: dict[str, "Brain"],
                 run_condition: TerminationCondition | None, recorder: "RunRecorder | None", *,
                 prepare_brain: "Callable[[AgentSpec, Brain, bool], None] | None" = None,
                 flush_every: int = FLUSH_EVERY) -> None:
        self.plan, self.phase, self.brains, self.recorder = plan, phase, brains, recorder
        self.prepare_brain = prepare_brain
        self.flush_every = flush_every
        #: per agent: what a step of its brain is called through (xdoe.execution._agent_runtime.brain_step)
        self.brain_steps: dict[str, Callable[..., Any]] = {}
        # the same conditions (defaults included) as the in-process runtime
        self.conditions = phase_conditions(phase, run_condition)
        self.progress = phase_progress(phase)
        self.train = phase.mode == "train"
        self._procs: list[Any] = []
        self._to: list[Any] = []
        self._from: list[Any] = []
        ctx = multiprocessing.get_context(_START_METHOD)
        # the workers' watchdogs publish here; a worker stuck past step_timeout is killed from here
        self._board = WatchBoard(ctx, phase.workers) if phase.step_timeout else None
        policy = None
        if recorder is not None:
            policy = recorder.policy
        try:
            for w in range(phase.workers):
                down_r, down_w = ctx.Pipe(duplex=False)
                up_r, up_w = ctx.Pipe(duplex=False)
                proc = ctx.Process(target=worker_main, name=f"xdoe-worker-{w}", daemon=True,
                                   args=(plan, phase.index, w, policy, up_w, down_r, flush_every, self._board,
                                         os.getpid()))
                proc.start()
                down_r.close()
                up_w.close()
                self._procs.append(proc)
                self._to.append(down_w)
                self._from.append(up_r)
            self._start()
        except BaseException:
            self.close()
            raise

    def redraw(self, worker: Any) -> None:
        """Nothing to do: each worker process redraws its own environments."""

    # -- messages -------------------------------------------------------------------
    def _recv(self, w: int) -> Any:
        try:
            return self._from[w].recv()
        except (EOFError, OSError):
            proc = self._procs[w]
            proc.join(timeout=5)
            raise RunError(f"parallel worker {w} of phase {self.phase.name!r} died "
                           f"(exit code {proc.exitcode})") from None

    def _check(self, msg: Any) -> Any:
        if msg[0] == "timeout":  # phase_config.step_timeout, in the worker
            raise RunTimeout(f"{msg[2]} in parallel worker {msg[1]}")
        if msg[0] == "error":
            _, w, text, tb = msg
            err = RunError(f"parallel worker {w}: {text}")
            err.__cause__ = _RemoteTraceback(tb)
            raise err
        return msg

    def _send(self, w: int, msg: Any) -> None:
        try:
            self._to[w].send(msg)
        except (BrokenPipeError, OSError):
            pass  # the worker is gone; its pipe reports why

    def _start(self) -> None:
        """Wait for every worker's sensors and actuators, make the brains
        (worker 0's setups, as in-process) and send each its muscle states."""
        setups: dict[int, Any] = {}
        for w in range(self.phase.workers):
            msg = self._check(self._recv(w))
            setups[msg[1]] = msg[2]
        mode = Mode(self.phase.mode)
        specs = {a.name: a for a in self.phase.agents}
        states = {}
        for name, sensors, actuators in setups[0]:
            spec = specs[name]
            brain = self.brains.get(name)
            fresh = brain is None
            if brain is None:
                brain = build_component(spec.brain, Brain, seed=Seeds(self.plan.seed).brain(name))
                try:
                    brain.setup(sensors, actuators)
                except Exception as exc:
                    raise component_error(f"{spec.key}.brain: setup", exc) from exc
                self.brains[name] = brain
            brain.mode = mode
            brain.workers = self.phase.workers
            self.brain_steps[name] = brain_step(brain, tuple((s.uid, s.space) for s in sensors),
                                                tuple((a.uid, a.space) for a in actuators))
            if self.prepare_brain is not None:
                self.prepare_brain(spec, brain, fresh)
            states[name] = brain.muscle_state()
        for w in range(self.phase.workers):
            self._send(w, ("start", states))

    # -- the phase ----------------------------------------------------------------------
    def run(self, result: "PhaseResult", hooks: "Sequence[Hook]" = ()) -> Verdict:
        """Run the phase's episodes in the workers; fill ``result``; the
        highest phase-level verdict; ``hooks`` hear of the episode ends as
        they arrive (no step hook: the steps are taken elsewhere)."""
        try:
            return self._run(result, hooks)
        except BaseException:
            self.close()
            raise

    def _run(self, result: "PhaseResult", hooks: "Sequence[Hook]") -> Verdict:
        episode_conditions = [c.episode_finished for c in self.conditions
                              if overrides(c, "episode_finished")]
        on_end = episode_hooks(hooks)
        for condition in self.conditions:
            condition.phase_started(self.progress)
        for hook in hooks:
            hook.on_phase_start(self)
        reward_sums = {a.name: 0.0 for a in self.phase.agents}
        objective_sums = {a.name: 0.0 for a in self.phase.agents}
        brain_steps, recorder, train = self.brain_steps, self.recorder, self.train
        stop = int(Verdict.CONTINUE)
        stopping = False
        live = {conn: w for w, conn in enumerate(self._from)}
        n = len(self._to)

        def stop_all(verdict: int) -> None:
            nonlocal stopping
            if not stopping:
                stopping = True
                for w in range(n):
                    self._send(w, ("stop", verdict))

        while live:
            ready = _wait_any(list(live), timeout=None if self._board is None else 0.5)
            if self._board is not None:
                self._kill_overdue()
            for conn in ready:
                w = live[conn]
                msg = self._check(self._recv(w))
                if msg[0] == "done":  # every row and episode end of worker w came before
                    del live[conn]
                    continue
                updates: list[tuple[str, Any]] = []
                for item in msg[2]:
                    kind = item[0]
                    if kind == "x":
                        if not train:
                            continue
                        name = item[1]
                        try:
                            update = brain_steps[name](*item[2])
                        except Exception as exc:
                            raise component_error(f"agent {name!r}: brain.thinking", exc) from exc
                        if update is not None:
                            updates.append((name, update))
                    elif kind == "e":
                        if recorder is not None:
                            recorder.episode_finished(*item[1])
                    elif kind == "s":  # a step of a worker process's step_writer (key, arguments)
                        if recorder is not None:
                            recorder.step_writer(*item[1])(*item[2])  # type: ignore[misc]
                    elif kind == "w":  # an observation outside its space (xdoe._plugins._observations)
                        report_observation(item[1], item[2])
                    elif kind == "ep":
                        _, episode_no, steps, rewards, objectives, truncated, worker_verdict, cut_by = item
                        if recorder is not None:
                            recorder.flush()  # its rows came first: durable before the next episode
                        self.progress.episodes_done[w] += 1
                        self.progress.steps += steps
                        result.episodes += 1
                        result.steps += steps
                        for name, value in rewards.items():
                            reward_sums[name] += value
                        for name, value in objectives.items():
                            objective_sums[name] += value
                        episode = EpisodeProgress(self.progress, w, episode_no, steps, rewards, objectives)
                        # worker w's own step budget ran out (each worker counts its own steps):
                        # that ends w only, the others go on to theirs; any other STOP_PHASE/STOP_RUN,
                        # w's or the episode conditions' here, stops every worker
                        verdict = CONTINUE if cut_by == CUT_STEP_BUDGET else int(worker_verdict)
                        if not truncated:
                            for check in episode_conditions:
                                answer = check(episode)
                                if answer > verdict:
                                    verdict = int(answer)
                        end = EpisodeEnd(w, episode_no + 1, episode, truncated, int(worker_verdict), cut_by)
                        for hook in on_end:
                            answer = hook(end)
                            if answer is not None and answer > verdict:
                                verdict = int(answer)
                        if max(verdict, worker_verdict) >= STOP_PHASE:
                            stop = max(stop, verdict, int(worker_verdict))
                        if verdict >= STOP_PHASE:
                            stop_all(stop)
                if updates:  # as the brain sent them, to every worker's muscle
                    for v in range(n):
                        self._send(v, ("upd", updates))
        result.stopped_by = {0: "episodes", 1: "episodes", 2: "condition", 3: "run_condition"}[stop]
        total = max(result.episodes, 1)
        result.rewards = {k: v / total for k, v in reward_sums.items()}
        result.objectives = {k: v / total for k, v in objective_sums.items()}
        for hook in hooks:
            hook.on_phase_end(result)
        return Verdict(stop)

    def _kill_overdue(self) -> None:
        """SIGKILL a worker whose step passed ``step_timeout`` more than
        ``GRACE`` + ``MARGIN`` seconds ago without its watchdog ending it (C
        code holding the GIL, ...) and fail the run with the limit's message."""
        assert self._board is not None
        pids = {proc.pid: w for w, proc in enumerate(self._procs)}
        for pid, message in self._board.overdue():
            if pid in pids:
                self._procs[pids[pid]].kill()
                raise RunTimeout(f"{message} in parallel worker {pids[pid]}")

    def close(self) -> None:
        """Tell the workers to exit and wait for them (terminating stragglers)."""
        for w in range(len(self._to)):
            self._send(w, ("close",))
        for proc in self._procs:
            proc.join(timeout=10)
            if proc.is_alive():
                proc.terminate()
                proc.join(timeout=5)
            if proc.is_alive():  # signals blocked, or C code holding the GIL
                proc.kill()
                proc.join(timeout=5)
        for conn in (*self._to, *self._from):
            conn.close()
        self._procs, self._to, self._from = [], [], []
