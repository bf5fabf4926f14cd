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
run failed with the stored message and goes on. (Not covered: C code that
holds the GIL without end — the watchdog thread itself cannot run then.)
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

__all__ = ["RunTimeout", "Watchdog", "run_hung", "kill_stuck_runs", "GRACE"]

#: Seconds a run has, after its time limit raised :class:`RunTimeout`, to end
#: before the watchdog records it failed and (in worker processes) kills the process.
GRACE = 5.0
#: Set in ``xrun``'s worker processes: a run stuck beyond :data:`GRACE` kills its process.
KILL_STUCK = False
#: The signal the watchdog interrupts the main thread with.
SIGNAL = signal.SIGALRM

_HUNG = threading.Event()


def run_hung() -> bool:
    """Whether a run of this process passed a time limit and has not ended yet."""
    return _HUNG.is_set()


def kill_stuck_runs() -> None:
    """In this (worker) process, a run still stuck :data:`GRACE` seconds after
    its time limit kills the process (:data:`KILL_STUCK`)."""
    global KILL_STUCK
    KILL_STUCK = True


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
    (``update`` rather than the helper ``update`` calls); ``None`` when no
    component method is running."""
    found, owner = None, None
    while frame is not None:
        code = frame.f_code
        if code.co_argcount and code.co_varnames[0] == "self":
            this = frame.f_locals.get("self")
            if owner is not None and this is owner:
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
        signal.signal(SIGNAL, self._previous if self._previous is not None else signal.SIG_DFL)
        _HUNG.clear()

    def _raise(self, signum: int, frame: FrameType | None) -> None:
        if self.message is not None and not self._stop.is_set():
            raise RunTimeout(self.message)

    def _watch(self) -> None:
        bases = _component_bases()
        started = time.monotonic()
        current: FrameType | None = None
        since = started
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
            del top
            if frame is not None and limit and now - since > limit:
                self._fire(f"no progress for {limit:g} s in {where(frame)} (phase_config.step_timeout)")
                return
            if self.run_timeout and now - started > self.run_timeout:
                stuck = now - since if frame is not None else 0.0
                self._fire(f"no progress for {stuck:.0f} s in {where(frame)} (run timeout "
                           f"{self.run_timeout:g} s)" if frame is not None and stuck >= 1.0 else
                           f"the run took more than its run timeout of {self.run_timeout:g} s"
                           + (f" (in {where(frame)})" if frame is not None else ""))
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
