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
  episode end): the experiences of train phases (``brain.thinking`` runs in
  the run process, in arrival order), the episode and step rows for the store,
  and every finished episode (the run process's conditions judge it with
  ``episode_finished``; a ``STOP_PHASE``/``STOP_RUN`` verdict stops every worker);
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
  worker's own steps and episodes; ``episode_finished`` runs once, in the run
  process, with counts over all workers; a stop reaches the other workers a
  few steps later than in-process (their unfinished episodes are recorded as
  truncated, as in-process);
* a phase resumed from a checkpoint runs in-process.
"""

from __future__ import annotations

import contextlib
import contextvars
import multiprocessing
import threading
import traceback as _traceback
from collections import deque
from multiprocessing.connection import wait as _wait_any
from typing import TYPE_CHECKING, Any, Callable, Iterator

from xdoe.conditions import EpisodeProgress, TerminationCondition, Verdict
from xdoe.errors import RunError

if TYPE_CHECKING:
    from xdoe.agent import Brain
    from xdoe.execution._plan import AgentSpec, PhasePlan, RunPlan
    from xdoe.execution._runner import PhaseResult
    from xdoe.store import RunRecorder

__all__ = ["parallel_workers", "parallel_workers_enabled", "ParallelPhase", "FLUSH_EVERY"]

#: Items (experiences, rows) a worker buffers before sending them.
FLUSH_EVERY = 32
_START_METHOD = "spawn"

_ENABLED: contextvars.ContextVar[bool] = contextvars.ContextVar("xdoe_parallel_workers", default=False)


@contextlib.contextmanager
def parallel_workers(enabled: bool = True) -> Iterator[None]:
    """Within the block, runs executed in this thread run every phase with
    ``worker > 1`` in worker processes (``xrun experiment-start
    --parallel-workers``); ``enabled=False`` keeps the in-process default."""
    token = _ENABLED.set(bool(enabled))
    try:
        yield
    finally:
        _ENABLED.reset(token)


def parallel_workers_enabled() -> bool:
    """Whether :func:`parallel_workers` is in effect."""
    return _ENABLED.get()


# -- worker process side ---------------------------------------------------------------

class _RemoteBrain:
    """Stands in for an agent's brain inside a worker process: experiences
    are queued for the run process; updates arrive separately."""

    def __init__(self, name: str, outbox: list[Any]) -> None:
        self.name = name
        self.outbox = outbox
        self.mode: Any = None

    def thinking(self, experience: Any) -> None:
        self.outbox.append(("x", self.name, experience))
        return None

    def muscle_state(self) -> None:
        return None  # sent by the run process once its brain is ready


class _RemoteRecorder:
    """Stands in for the run's recorder inside a worker process."""

    def __init__(self, policy: Any, outbox: list[Any]) -> None:
        self.policy = policy
        self.outbox = outbox

    def episode_finished(self, *args: Any) -> None:
        self.outbox.append(("e", args))

    def step(self, *args: Any) -> None:
        self.outbox.append(("s", args))


def _worker_main(plan: "RunPlan", phase_index: int, w: int, policy: Any, out: Any, inp: Any,
                 flush_every: int) -> None:
    """Body of worker process ``w``: build worker ``w`` of the phase, run its
    episodes, talk to the run process (see the module docstring)."""
    inbox: deque[Any] = deque()
    arrived = threading.Event()

    def read() -> None:
        while True:
            try:
                msg = inp.recv()
            except (EOFError, OSError):
                inbox.append(("stop", int(Verdict.STOP_RUN)))
                arrived.set()
                return
            inbox.append(msg)
            arrived.set()
            if msg[0] == "close":
                return

    threading.Thread(target=read, name="from-run-process", daemon=True).start()
    outbox: list[Any] = []
    try:
        _worker_phase(plan, phase_index, w, policy, out, inbox, arrived, outbox, flush_every)
    except BaseException as exc:  # noqa: BLE001 - reported to the run process
        try:
            out.send(("error", w, _one_line(exc), _traceback.format_exc()))
        except Exception:  # pragma: no cover - the run process is gone
            pass


def _one_line(exc: BaseException) -> str:
    from xdoe.errors import XdoeError

    text = " ".join(str(exc).split())
    return text if isinstance(exc, XdoeError) else f"{type(exc).__name__}: {text}"


def _worker_phase(plan: "RunPlan", phase_index: int, w: int, policy: Any, out: Any, inbox: deque[Any],
                  arrived: threading.Event, outbox: list[Any], flush_every: int) -> None:
    from xdoe.execution._runner import (
        _CONTINUE,
        _RESET,
        _STOP_PHASE,
        _build,
        _component_error,
        _overrides,
        _PhaseRuntime,
        _step_verdict,
    )

    phase = plan.phases[phase_index]
    brains: dict[str, Any] = {a.name: _RemoteBrain(a.name, outbox) for a in phase.agents}
    run_condition = None if plan.run_condition is None else _build(plan.run_condition, TerminationCondition)
    recorder = _RemoteRecorder(policy, outbox) if policy is not None else None
    rt = _PhaseRuntime(plan, phase, brains, run_condition, recorder, only_workers=[w])  # type: ignore[arg-type]
    rt.samplers = [[] for _ in range(w)] + rt.samplers  # redraw() indexes by worker index
    worker = rt.workers[0]
    by_id = {s.uid: s for sensors in worker.env_sensors for s in sensors}
    setups = [(a.name, [by_id[uid] for uid in a.sensor_ids], list(a.templates)) for a in worker.agents]
    out.send(("ready", w, setups))
    while not inbox:
        arrived.wait()
        arrived.clear()
    msg = inbox.popleft()
    if msg[0] != "start":
        return  # stopped before it began
    muscles = {a.name: a.muscle for a in worker.agents}
    for name, state in msg[1].items():
        if state is not None:
            try:
                muscles[name].update(state)
            except Exception as exc:
                raise _component_error(f"agent {name!r}: muscle setup", exc) from exc

    def flush() -> None:
        if outbox:
            out.send(("batch", w, outbox[:]))
            outbox.clear()

    def handle() -> int:
        stop = _CONTINUE
        while inbox:
            item = inbox.popleft()
            if item[0] == "upd":
                for name, update in item[1]:
                    try:
                        muscles[name].update(update)
                    except Exception as exc:
                        raise _component_error(f"agent {name!r}: muscle.update", exc) from exc
            elif item[0] in ("stop", "close"):
                stop = max(stop, item[1] if item[0] == "stop" else int(Verdict.STOP_RUN))
        return stop

    def end(truncated: bool, verdict: int) -> None:
        episode = worker.end_episode(truncated)
        outbox.append(("ep", episode.episode, episode.steps, episode.rewards, episode.objectives,
                       truncated, verdict))
        flush()

    controller = rt.controller
    step_conditions = [c.step_finished for c in rt.conditions if _overrides(c, "step_finished")]
    for condition in rt.conditions:
        condition.phase_started(rt.progress)
    budget = phase.episodes
    stop = _CONTINUE
    worker.start_episode(controller, started=True)
    while True:
        if inbox:
            stop = handle()
            if stop >= _STOP_PHASE:
                break
        controller.step(worker)
        verdict = _step_verdict(step_conditions, worker.progress)
        if verdict >= _RESET:
            end(False, verdict)
            if verdict >= _STOP_PHASE:
                stop = verdict
                break
            if worker.episode >= budget:
                break
            if rt.has_samplers:
                rt.redraw(worker)
            worker.start_episode(controller)
        elif len(outbox) >= flush_every:
            flush()
    if worker.in_episode and worker.step > 0:
        end(True, _CONTINUE)
    flush()
    rt.close()
    out.send(("done", w, int(stop)))
    # wait for "close" so that no update is sent into a closed pipe
    while True:
        while not inbox:
            arrived.wait(timeout=1.0)
            arrived.clear()
        if inbox.popleft()[0] == "close":
            return


# -- run process side ---------------------------------------------------------------------

class _EpisodeOf:
    """What ``on_episode`` callbacks read of a worker: ``index``, ``episode`` (next one)."""

    __slots__ = ("index", "episode")

    def __init__(self, index: int, episode: int) -> None:
        self.index, self.episode = index, episode


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

    Offers what :func:`xdoe.execution._runner.execute_plan` uses of a phase
    runtime: ``progress``, ``conditions``, ``workers`` (empty: no worker
    lives here), ``samplers``, ``has_samplers`` (``False``: workers redraw
    their own environments), :meth:`run` and :meth:`close`.

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
        from xdoe.execution._runner import _phase_conditions, _phase_progress

        self.plan, self.phase, self.brains, self.recorder = plan, phase, brains, recorder
        self.prepare_brain = prepare_brain
        self.flush_every = flush_every
        # the same conditions (defaults included) as the in-process runtime
        self.conditions = _phase_conditions(phase, run_condition)
        self.progress = _phase_progress(phase)
        self.train = phase.mode == "train"
        self._procs: list[Any] = []
        self._to: list[Any] = []
        self._from: list[Any] = []
        ctx = multiprocessing.get_context(_START_METHOD)
        policy = None
        if recorder is not None:
            policy = recorder.policy
        try:
            for w in range(phase.workers):
                down_r, down_w = ctx.Pipe(duplex=False)
                up_r, up_w = ctx.Pipe(duplex=False)
                proc = ctx.Process(target=_worker_main, name=f"xdoe-worker-{w}", daemon=True,
                                   args=(plan, phase.index, w, policy, up_w, down_r, flush_every))
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
        from xdoe.execution._runner import _build, _component_error
        from xdoe.execution._seeding import brain_seed
        from xdoe.agent import Brain, Mode

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
                brain = _build(spec.brain, Brain, seed=brain_seed(self.plan.seed, name))
                try:
                    brain.setup(sensors, actuators)
                except Exception as exc:
                    raise _component_error(f"{spec.key}.brain: setup", exc) from exc
                self.brains[name] = brain
            brain.mode = mode
            if self.prepare_brain is not None:
                self.prepare_brain(spec, brain, fresh)
            states[name] = brain.muscle_state()
        for w in range(self.phase.workers):
            self._send(w, ("start", states))

    # -- the phase ----------------------------------------------------------------------
    def run(self, result: "PhaseResult", on_episode: Callable[[Any, EpisodeProgress], None]) -> Verdict:
        """Run the phase's episodes in the workers; fill ``result``; the
        highest phase-level verdict."""
        try:
            return self._run(result, on_episode)
        except BaseException:
            self.close()
            raise

    def _run(self, result: "PhaseResult", on_episode: Callable[[Any, EpisodeProgress], None]) -> Verdict:
        from xdoe.execution._runner import _component_error, _overrides

        episode_conditions = [c.episode_finished for c in self.conditions
                              if _overrides(c, "episode_finished")]
        for condition in self.conditions:
            condition.phase_started(self.progress)
        reward_sums = {a.name: 0.0 for a in self.phase.agents}
        objective_sums = {a.name: 0.0 for a in self.phase.agents}
        brains, recorder, train = self.brains, self.recorder, self.train
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
            for conn in _wait_any(list(live)):
                w = live[conn]
                msg = self._check(self._recv(w))
                if msg[0] == "done":
                    del live[conn]
                    if msg[2] >= Verdict.STOP_PHASE:
                        stop = max(stop, msg[2])
                        stop_all(stop)
                    continue
                updates: list[tuple[str, Any]] = []
                for item in msg[2]:
                    kind = item[0]
                    if kind == "x":
                        if not train:
                            continue
                        name = item[1]
                        try:
                            update = brains[name].thinking(item[2])
                        except Exception as exc:
                            raise _component_error(f"agent {name!r}: brain.thinking", exc) from exc
                        if update is not None:
                            updates.append((name, update))
                    elif kind == "e":
                        if recorder is not None:
                            recorder.episode_finished(*item[1])
                    elif kind == "s":
                        if recorder is not None:
                            recorder.step(*item[1])
                    elif kind == "ep":
                        _, episode_no, steps, rewards, objectives, truncated, worker_verdict = item
                        self.progress.episodes_done[w] += 1
                        self.progress.steps += steps
                        result.episodes += 1
                        result.steps += steps
                        for name, value in rewards.items():
                            reward_sums[name] += value
                        for name, value in objectives.items():
                            objective_sums[name] += value
                        episode = EpisodeProgress(self.progress, w, episode_no, steps, rewards, objectives)
                        verdict = int(worker_verdict)
                        if not truncated:
                            for check in episode_conditions:
                                answer = check(episode)
                                if answer > verdict:
                                    verdict = int(answer)
                        on_episode(_EpisodeOf(w, episode_no + 1), episode)
                        if verdict >= Verdict.STOP_PHASE:
                            stop = max(stop, verdict)
                            stop_all(stop)
                if updates:  # as the brain sent them, to every worker's muscle
                    for v in range(n):
                        self._send(v, ("upd", updates))
        result.stopped_by = {0: "episodes", 1: "episodes", 2: "condition", 3: "run_condition"}[stop]
        total = max(result.episodes, 1)
        result.rewards = {k: v / total for k, v in reward_sums.items()}
        result.objectives = {k: v / total for k, v in objective_sums.items()}
        return Verdict(stop)

    def close(self) -> None:
        """Tell the workers to exit and wait for them (terminating stragglers)."""
        for w in range(len(self._to)):
            self._send(w, ("close",))
        for proc in self._procs:
            proc.join(timeout=10)
            if proc.is_alive():
                proc.terminate()
                proc.join(timeout=5)
        for conn in (*self._to, *self._from):
            conn.close()
        self._procs, self._to, self._from = [], [], []
