"""The worker-process side of the parallel rollout workers
(:mod:`xdoe.execution._parallel_workers`): :func:`worker_main` is the target
of each worker process; it builds worker ``w`` of the phase exactly as the
in-process loop does, runs its episodes and sends experiences, rows and
episode ends to the run process in batches."""

from __future__ import annotations

import os

import threading
import traceback as _traceback
from collections import deque
from typing import TYPE_CHECKING, Any, Callable

from xdoe.conditions import TerminationCondition, Verdict
from xdoe.errors import one_line
from xdoe.execution._events import PhaseResult
from xdoe.execution._hooks import EpisodeEnd, Hook, RedrawHook
from xdoe.execution._phase import PhaseRuntime, build_component
from xdoe.execution._worker import CONTINUE, component_error

if TYPE_CHECKING:
    from xdoe.execution._plan import RunPlan

__all__ = ["worker_main"]


class _RemoteBrain:
    """Stands in for an agent's brain inside a worker process: experiences
    are queued for the run process; updates arrive separately."""

    def __init__(self, name: str, outbox: list[Any]) -> None:
        self.name = name
        self.outbox = outbox
        self.mode: Any = None

    def thinking_values(self, *step: Any) -> None:
        """Queues the arguments of ``Brain.thinking_values`` for the run process."""
        self.outbox.append(("x", self.name, step))
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

    def step_writer(self, worker: int, agent: str, sensor_id: str | None = None,
                    actuator_id: str | None = None) -> Callable[..., None] | None:
        """:meth:`RunRecorder.step_writer` of the run process: the steps the
        policy wants go there, where that writer of the same arguments
        (``key``) writes them."""
        policy = self.policy
        if not policy.enabled:
            return None
        key, append, wants = (worker, agent, sensor_id, actuator_id), self.outbox.append, policy.wants

        def write(episode: int, step: int, *values: Any) -> None:
            if wants(step, values[4]):  # values: sensors, actions, rewards, objective, done, ...
                append(("s", key, (episode, step, *values)))

        return write

    def flush(self) -> None:
        """Nothing here: the run process commits at the episode's ``ep`` message."""


class _Locked:
    """A pipe end whose ``send`` a second thread (the watchdog's) may use too."""

    def __init__(self, conn: Any) -> None:
        self.conn, self.lock = conn, threading.Lock()

    def send(self, msg: Any) -> None:
        with self.lock:
            self.conn.send(msg)


class _ToRunProcess(Hook):
    """The worker process's hook in the one episode loop
    (:meth:`PhaseRuntime.run`): every episode end goes to the run process
    (``ep``, after its rows: a batch), and before the next step the messages
    that arrived are handled (muscle updates; ``stop`` and ``close`` stop
    the phase); after a step, a batch of ``flush_every`` items is sent."""

    def __init__(self, w: int, out: Any, inbox: deque[Any], outbox: list[Any], muscles: dict[str, Any],
                 flush_every: int) -> None:
        self.w, self.out, self.inbox, self.outbox, self.muscles = w, out, inbox, outbox, muscles
        self.flush_every = flush_every
        self.stop = CONTINUE  # a stop that arrived before the first step

    def flush(self) -> None:
        if self.outbox:
            self.out.send(("batch", self.w, self.outbox[:]))
            self.outbox.clear()

    def handle(self) -> int:
        """Apply the messages that arrived; the highest stop verdict among them (``CONTINUE``: none)."""
        stop = CONTINUE
        inbox, muscles = self.inbox, self.muscles
        while inbox:
            item = inbox.popleft()
            if item[0] == "upd":
                for name, update in item[1]:
                    try:
                        muscles[name].update(update)
                    except Exception as exc:
                        raise component_error(f"agent {name!r}: muscle.update", exc) from exc
            elif item[0] in ("stop", "close"):
                stop = max(stop, item[1] if item[0] == "stop" else int(Verdict.STOP_RUN))
        return stop

    def on_phase_start(self, runner: Any) -> None:
        self.stop = self.handle()

    def on_step(self, worker: Any) -> int:
        if len(self.outbox) >= self.flush_every:
            self.flush()
        stop = self.handle() if self.inbox else CONTINUE
        return self.stop if self.stop > stop else stop

    def on_episode_end(self, end: EpisodeEnd) -> int:
        # STOP_PHASE/STOP_RUN of the worker's own step: this worker is done; the run process,
        # which judges every episode end, passes a phase stop on to the other workers (not
        # this worker's own step budget: each worker counts its own steps)
        episode = end.episode
        self.outbox.append(("ep", episode.episode, episode.steps, episode.rewards, episode.objectives,
                            end.truncated, end.verdict, end.cut_by))
        self.flush()
        return self.handle() if self.inbox else CONTINUE


def worker_main(plan: "RunPlan", phase_index: int, w: int, policy: Any, out: Any, inp: Any,
                 flush_every: int, board: Any = None, parent: int | None = None) -> None:
    """Body of worker process ``w``: build worker ``w`` of the phase, run its
    episodes, talk to the run process (see the module docstring).

    ``phase_config.step_timeout`` holds here too (issue 25): a call into a
    component that does not return within it ends the worker with
    ``("timeout", w, message)``; a worker its watchdog cannot end is killed
    by the run process (``board``: :class:`~xdoe.execution._watchdog.WatchBoard`,
    slot ``w``). Observations outside their space are reported to the run
    process (``("w", sensor, message)`` in a batch).

    ``parent``: the run process's pid. When it ends (SIGKILLed with its
    xrun, say) this worker exits at once: nobody would read its rows, and
    the run is recorded ``interrupted`` by whoever ran it or by the restart."""
    import contextlib
    import warnings

    from xdoe._plugins import observation_report
    from xdoe.errors import ObservationSpaceWarning
    from xdoe.execution._watchdog import RunTimeout, Watchdog, kill_stuck_runs

    if parent is not None:  # no worker outlives its run process, however that ends
        from xdoe._process import watch_process

        watch_process(parent, lambda: os._exit(0), name="xdoe-watch-run-process")
    out = _Locked(out)
    warnings.simplefilter("ignore", ObservationSpaceWarning)  # the run process warns
    step_timeout = plan.phases[phase_index].step_timeout
    limits: Any = contextlib.nullcontext()
    if step_timeout:
        kill_stuck_runs(board, w)

        def stuck(message: str) -> None:  # the watchdog's thread: the main one is stuck in plugin code
            out.send(("timeout", w, message))

        limits = Watchdog(None, lambda: step_timeout, on_stuck=stuck)
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
        with limits, observation_report(lambda uid, message: outbox.append(("w", uid, message))):
            _worker_phase(plan, phase_index, w, policy, out, inbox, arrived, outbox, flush_every)
    except RunTimeout as exc:
        out.send(("timeout", w, str(exc)))
    except BaseException as exc:  # noqa: BLE001 - reported to the run process
        try:
            out.send(("error", w, one_line(exc), _traceback.format_exc()))
        except Exception:  # pragma: no cover - the run process is gone
            pass


def _worker_phase(plan: "RunPlan", phase_index: int, w: int, policy: Any, out: Any, inbox: deque[Any],
                  arrived: threading.Event, outbox: list[Any], flush_every: int) -> None:
    phase = plan.phases[phase_index]
    brains: dict[str, Any] = {a.name: _RemoteBrain(a.name, outbox) for a in phase.agents}
    run_condition = None if plan.run_condition is None else build_component(plan.run_condition, TerminationCondition)
    recorder = _RemoteRecorder(policy, outbox) if policy is not None else None
    rt = PhaseRuntime(plan, phase, brains, run_condition, recorder, only_workers=[w])  # type: ignore[arg-type]
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
                raise component_error(f"agent {name!r}: muscle setup", exc) from exc

    result = PhaseResult(phase.index, phase.name, phase.mode)  # the run process keeps the real one
    to_run = _ToRunProcess(w, out, inbox, outbox, muscles, flush_every)
    hooks: list[Hook] = [to_run, RedrawHook(rt, rt.workers)] if rt.has_samplers else [to_run]
    rt.run(result, hooks, judge=False)  # the run process judges the episodes
    to_run.flush()
    rt.close()
    out.send(("done", w))  # after every row of this worker: the run process reads them in order
    # wait for "close" so that no update is sent into a closed pipe
    while True:
        while not inbox:
            arrived.wait(timeout=1.0)
            arrived.clear()
        if inbox.popleft()[0] == "close":
            return


