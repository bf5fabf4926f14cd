"""Running a campaign to the end, including the runs other processes hold.

:func:`run_all` runs every task on a backend. A run another ``xrun`` process
holds (its result is ``claimed``) is not the end of it: such a run is only
done when that process finishes it. So :func:`run_all` waits, and every
``poll`` seconds executes those tasks again, which (through the one path of
:func:`~xdoe.campaign.execute_task`)

* skips a run the holder finished meanwhile (``skipped``),
* takes over a claim whose holder is gone — at once when it ran on this host
  and its process no longer exists (SIGKILL, a crash), else once its heartbeat
  is older than the options' ``heartbeat_timeout`` — and resumes the run, and
* runs a run the holder left unfinished (it failed: it runs again, as any
  failed run does when started again).

So ``xrun experiment-start`` exits 0 only when every run finished.
"""

from __future__ import annotations

import time
from typing import Callable, Iterator, Sequence

from xdoe.campaign._stop import stop_requested
from xdoe.campaign._tasks import RunTask
from xdoe.campaign.backends._base import Backend, ProgressCallback, stops
from xdoe.execution import RunResult

__all__ = ["run_all"]


def run_all(backend: Backend, tasks: Sequence[RunTask], *, fail_fast: bool = False,
            progress: ProgressCallback | None = None, started: Callable[[RunTask], None] | None = None,
            waiting: Callable[[list[RunResult]], None] | None = None,
            poll: float | None = None) -> Iterator[RunResult]:
    """``backend.map_runs(tasks)``, then wait for the runs other processes
    hold (see the module docstring); yields one final result per task.

    Args:
        backend, tasks, fail_fast, progress, started: as
            :meth:`~xdoe.campaign.Backend.map_runs`. After a run that stops
            the campaign (``fail_fast``, a full disk) nothing is waited for:
            held runs are yielded as ``claimed``.
        waiting: called with the held runs' ``claimed`` results whenever the
            set of runs waited for changes (to tell the user).
        poll: seconds between two looks (default: a quarter of the tasks'
            ``options.heartbeat_timeout``, at most 2 s).
    """
    by_key = {task.key: task for task in tasks}
    if poll is None:
        poll = min([2.0] + [t.options.heartbeat_timeout / 4 for t in tasks])
    batch: Sequence[RunTask] = tasks
    told: set[str | None] = set()
    stopped = False
    while True:
        held: list[RunResult] = []
        for result in backend.map_runs(batch, fail_fast=fail_fast, progress=progress, started=started):
            stopped = stopped or stops(result, fail_fast)
            if result.status == "claimed" and result.task_key in by_key:
                held.append(result)
            else:
                yield result
        if not held or stopped or stop_requested():
            yield from held
            return
        if waiting is not None and {r.task_key for r in held} != told:
            told = {r.task_key for r in held}
            waiting(held)
        time.sleep(poll)
        batch = [by_key[str(r.task_key)] for r in held]
