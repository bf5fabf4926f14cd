"""Time limits of a run (issue 25): ``run_config.timeout`` (seconds for the
whole run, also ``xrun experiment-start --run-timeout``) and
``phase_config.step_timeout`` (seconds one call into a component — an
environment's ``update``, a brain's ``thinking``... — may take, i.e. seconds
without a step). Both are off by default.

:class:`Watchdog` is a daemon thread beside the run. Every fraction of the
smaller limit it looks at the main thread's stack (``sys._current_frames``;
nothing is added to the step loop) for the innermost frame of a component
method (``self`` an :class:`~xdoe.environment.Environment`,
:class:`~xdoe.agent.Brain`, :class:`~xdoe.agent.Muscle`,
:class:`~xdoe.agent.Objective`, :class:`~xdoe.environment.Reward`,
:class:`~xdoe.conditions.TerminationCondition` or
:class:`~xdoe.simulation.SimulationController`). The same frame object found
again means the same call has not returned: the run makes no progress.

When a limit is passed the run fails with ``no progress for N s in
<Class>.<method>`` (``run took more than N s (run_config.timeout) ...`` when
the run is slow but moving): the watchdog raises :class:`RunTimeout` in the
main thread (a signal handler, so a ``time.sleep`` or a blocking read is cut
short too). :func:`run_hung` turns true, so the claim heartbeat
(:class:`xdoe.store.ClaimHeartbeat`) stops advancing and another ``xrun``
takes the run over after ``--heartbeat-timeout`` if this process cannot end
it. A plugin that swallows :class:`RunTimeout`, or C code that blocks without
returning to the interpreter, is not stopped by it: in an ``xrun`` worker
process (:data:`KILL_STUCK`) the watchdog then records the run failed and
kills its own process after :data:`GRACE` seconds; the parent reports the
run failed with the stored message and goes on.

C code that holds the GIL without end (or anything else that keeps the
watchdog thread itself from running) is ended from outside: the watchdog
publishes, on every look, when the run started, which component call it is
in and since when, and the limits, in a :class:`WatchBoard` slot in shared
memory (:func:`publish_to`). The process that started the worker (``xrun``'s
process pool, or the run process of ``--parallel-workers``) reads the
slots (:meth:`WatchBoard.overdue`) and SIGKILLs a worker still running
:data:`GRACE` + :data:`MARGIN` seconds after its limit was passed, failing
its run with the same ``no progress ...`` message computed from the
published state.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from types import FrameType
from typing import Any, Callable

from xdoe.errors import RunTimeout

__all__ = ["RunTimeout", "Watchdog", "run_hung", "kill_stuck_runs", "GRACE", "MARGIN", "WatchBoard", "deadline", "publish_to"]

#: Seconds a run has, after its time limit raised :class:`RunTimeout`, to end
#: before the watchdog records it failed and (in worker processes) kills the process.
GRACE = 5.0
#: Seconds a supervising process waits after :data:`GRACE` (the watchdog looks
#: at least once a second, so its own kill comes first when it can run).
MARGIN = 2.0
#: Set in ``xrun``'s worker processes: a run stuck beyond :data:`GRACE` kills its process.
KILL_STUCK = False
#: The signal the watchdog interrupts the main thread with.
SIGNAL = signal.SIGALRM

_HUNG = threading.Event()


def run_hung() -> bool:
    """Whether a run of this process passed a time limit and has not ended yet."""
    return _HUNG.is_set()


def kill_stuck_runs(board: "WatchBoard | None" = None, index: int | None = None) -> None:
    """In this (worker) process, a run still stuck :data:`GRACE` seconds after
    its time limit kills the process (:data:`KILL_STUCK`); with ``board``,
    the runs' watchdogs also publish there, so that the process that started
    this one can kill it when the watchdog itself cannot run
    (:meth:`WatchBoard.overdue`), in slot ``index`` (default: the first free one)."""
    global KILL_STUCK
    KILL_STUCK = True
    if board is not None:
        publish_to(board, index)


def _component_bases() -> tuple[type, ...]:
    from xdoe.agent import Brain, Muscle, Objective
    from xdoe.conditions import TerminationCondition
    from xdoe.environment import Environment, Reward
    from xdoe.simulation import SimulationController

    return (Environment, Reward, Brain, Muscle, Objective, TerminationCondition, SimulationController)


def component_frame(frame: FrameType | None, bases: tuple[type, ...]) -> FrameType | None:
    """The frame of the component method the executor called and that has
    not returned: the innermost frame of ``frame``'s stack whose ``self`` is
    a component, followed outwards while ``self`` is that same component
    (``update`` rather than the helper ``update`` calls; not into a form the
    base class derived, ``xdoe._plugins.derive_forms``); ``None`` when no
    component method is running."""
    from xdoe._plugins import is_derived_code

    found, owner = None, None
    while frame is not None:
        code = frame.f_code
        if code.co_argcount and code.co_varnames[0] == "self":
            this = frame.f_locals.get("self")
            if owner is not None and this is owner:
                if not is_derived_code(code):  # the method the plugin wrote, not the form derived from it
                    found = frame
            elif owner is None and isinstance(this, bases):
                found, owner = frame, this
            elif owner is not None and isinstance(this, bases):
                break  # another component (e.g. the simulation controller) called it
        frame = frame.f_back
    return found


def where(frame: FrameType) -> str:
    """``Class.method`` of a component frame."""
    return f"{type(frame.f_locals.get('self')).__name__}.{frame.f_code.co_name}"


def deadline(started: float, since: float, name: str, step_timeout: float | None,
             run_timeout: float | None, seen: float | None = None) -> tuple[float, str] | None:
    """When a run passes its first time limit and the message it then fails
    with; ``None`` without limits. ``started``: when the run started,
    ``since``: when the component call ``name`` (``Class.method``, ``""``
    when none runs) started, on the ``time.monotonic`` clock (system-wide on
    Linux: the same in every process). ``seen`` (for a supervising process):
    when the watchdog last looked; a run in no component call then passes
    ``step_timeout`` seconds later (its process ran no Python code since)."""
    due: list[tuple[float, str]] = []
    if step_timeout and name:
        due.append((since + step_timeout,
                    f"no progress for {step_timeout:g} s in {name} (phase_config.step_timeout)"))
    elif step_timeout and seen is not None:
        due.append((seen + step_timeout, f"no progress for {step_timeout:g} s (phase_config.step_timeout): "
                                         "its process stopped running Python code (C code holding the GIL?) "
                                         "in a call the watchdog could not see"))
    if run_timeout:
        end = started + run_timeout
        stuck = end - since if name else 0.0
        due.append((end, f"no progress for {stuck:.0f} s in {name} (run timeout {run_timeout:g} s)"
                    if name and stuck >= 1.0 else f"the run took more than its run timeout of {run_timeout:g} s"
                    + (f" (in {name})" if name else "")))
    return min(due, key=lambda d: d[0]) if due else None


class Watchdog:
    """Enforces a run's time limits while the ``with`` block runs (see the
    module docstring). Start it in the thread that runs the run.

    Args:
        run_timeout: seconds for the whole run (``None``: no limit).
        step_timeout: called with no arguments, the current phase's seconds
            without a step (``None``: no limit).
        on_stuck: called (from the watchdog thread) with the message when the
            run has not ended :data:`GRACE` seconds after :class:`RunTimeout`
            was raised (e.g. to record it failed); then, in worker processes
            (:data:`KILL_STUCK`), the process is killed.

    Attributes:
        message: why the run was stopped (``None`` while it was not).
    """

    def __init__(self, run_timeout: float | None, step_timeout: Callable[[], float | None],
                 on_stuck: Callable[[str], None] | None = None) -> None:
        self.run_timeout, self.step_timeout, self.on_stuck = run_timeout, step_timeout, on_stuck
        self.message: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._previous: Any = None
        self._target = threading.main_thread().ident

    def __enter__(self) -> "Watchdog":
        if threading.current_thread() is not threading.main_thread():
            return self  # signal handlers need the main thread: limits apply to runs there only
        self._previous = signal.signal(SIGNAL, self._raise)
        self._thread = threading.Thread(target=self._watch, name="xdoe-watchdog", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._thread is None:
            return
        self._stop.set()
        self._thread.join()
        if _SLOT is not None:
            _SLOT.clear()  # no run: nothing for the supervising process to watch
        signal.signal(SIGNAL, self._previous if self._previous is not None else signal.SIG_DFL)
        _HUNG.clear()

    def _raise(self, signum: int, frame: FrameType | None) -> None:
        if self.message is not None and not self._stop.is_set():
            raise RunTimeout(self.message)

    def _watch(self) -> None:
        bases = _component_bases()
        started = time.monotonic()
        current: FrameType | None = None
        since, name = started, ""
        slot = _SLOT
        if slot is not None:  # at once: the run may never let this thread look again
            slot.write(started, since, name, self.step_timeout(), self.run_timeout)
        while True:
            limit = self.step_timeout()
            limits = [x for x in (limit, self.run_timeout) if x]
            if self._stop.wait(min(1.0, max(0.02, min(limits) / 10)) if limits else 0.5):
                return
            now = time.monotonic()
            top = sys._current_frames().get(self._target)  # noqa: SLF001 - the documented way to see a thread's stack
            frame = component_frame(top, bases)
            if frame is not current:
                current, since = frame, now
                name = "" if frame is None else where(frame)
            del top
            if slot is not None:
                slot.write(started, since, name, limit, self.run_timeout)
            due = deadline(started, since, name, limit, self.run_timeout)
            if due is not None and now > due[0]:
                self._fire(due[1])
                return

    def _fire(self, message: str) -> None:
        self.message = message
        _HUNG.set()
        signal.pthread_kill(self._target, SIGNAL)  # type: ignore[arg-type]
        if self._stop.wait(GRACE):
            return  # the run ended
        if self.on_stuck is not None:
            try:
                self.on_stuck(message)
            except Exception:  # noqa: BLE001 - best effort: the process is killed anyway
                pass
        if KILL_STUCK:
            os.kill(os.getpid(), signal.SIGKILL)


# -- watching from another process ---------------------------------------------------------

_FIELDS = 7  # per slot: sequence number (odd while written), pid, started, since, step and run limit, seen
_NAME = 120  # bytes of ``Class.method``
_SLOT: "_Slot | None" = None  # where this process's watchdogs publish (publish_to)


class WatchBoard:
    """Slots in shared memory through which the watchdogs of worker processes
    tell the process that started them where their runs are (see the module
    docstring). Made before the workers start and handed to them (process
    arguments, a pool's ``initargs``); each worker calls :func:`publish_to`.

    Args:
        context: the ``multiprocessing`` context the workers are started with.
        slots: how many worker processes may publish (one slot each).
    """

    def __init__(self, context: Any, slots: int) -> None:
        self.slots = slots
        self._numbers = context.RawArray("d", _FIELDS * slots)
        self._names = context.RawArray("c", _NAME * slots)
        self._lock = context.Lock()

    def _claim(self, index: int | None) -> "_Slot | None":
        pid = os.getpid()
        with self._lock:
            if index is None:
                free = [i for i in range(self.slots) if self._numbers[i * _FIELDS + 1] in (0, pid)]
                if not free:
                    return None
                index = free[0]
            self._numbers[index * _FIELDS + 1] = pid
        return _Slot(self, index)

    def _read(self, index: int) -> tuple[int, float, float, str, float, float, float] | None:
        numbers, base = self._numbers, index * _FIELDS
        for _ in range(1000):
            seq = numbers[base]
            values = numbers[base + 1:base + _FIELDS]
            raw = self._names[index * _NAME:(index + 1) * _NAME]
            if seq % 2 == 0 and numbers[base] == seq:  # not written meanwhile
                pid, started, since, step, run, seen = values
                name = raw.split(b"\0", 1)[0].decode("utf-8", "replace")
                return int(pid), started, since, name, step, run, seen
            time.sleep(0)
        return None

    def overdue(self, now: float | None = None) -> list[tuple[int, str]]:
        """``(pid, message)`` of every worker whose run passed a time limit
        more than :data:`GRACE` + :data:`MARGIN` seconds ago (by what its
        watchdog last published) and whose slot was not cleared since: its
        watchdog could not end it. The caller kills those processes."""
        now = time.monotonic() if now is None else now
        found = []
        for index in range(self.slots):
            state = self._read(index)
            if state is None or not state[0] or not (state[4] or state[5]):
                continue
            pid, started, since, name, step, run, seen = state
            due = deadline(started, since, name, step or None, run or None, seen)
            if due is not None and now > due[0] + GRACE + MARGIN:
                found.append((pid, due[1]))
        return found


class _Slot:
    """One worker's slot of a :class:`WatchBoard` (a seqlock: a reader retries
    while the sequence number is odd or changes)."""

    def __init__(self, board: WatchBoard, index: int) -> None:
        self.board, self.index = board, index

    def write(self, started: float, since: float, name: str, step: float | None, run: float | None) -> None:
        numbers, base = self.board._numbers, self.index * _FIELDS
        numbers[base] += 1
        numbers[base + 2], numbers[base + 3] = started, since
        numbers[base + 4], numbers[base + 5] = step or 0.0, run or 0.0
        numbers[base + 6] = time.monotonic()
        raw = name.encode("utf-8", "replace")[:_NAME - 1]
        self.board._names[self.index * _NAME:(self.index + 1) * _NAME] = raw + b"\0" * (_NAME - len(raw))
        numbers[base] += 1

    def clear(self) -> None:
        self.write(0.0, 0.0, "", None, None)


def publish_to(board: WatchBoard, index: int | None = None) -> bool:
    """In a worker process: this process's watchdogs publish their runs'
    state in a slot of ``board`` (slot ``index``, or the first free one);
    ``False`` when every slot is taken (then nothing is published)."""
    global _SLOT
    _SLOT = board._claim(index)
    return _SLOT is not None
