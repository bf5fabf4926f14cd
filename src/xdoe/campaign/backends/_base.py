"""The interface every backend implements: :class:`Backend` (``map_runs``
over :class:`~xdoe.campaign.RunTask` objects, a context manager), and
:class:`FutureBackend`, the base of the backends that run a callable and hand
back a future (``concurrent.futures.Future`` or a Dask future: the job handle
with ``done()`` and ``result()``). The SLURM backend hands back
:class:`~xdoe.campaign.backends.SlurmJob` handles instead.

Backends (:func:`xdoe.campaign.make_backend`):

* :class:`SequentialBackend` (default, ``--jobs 1``): one run after another in
  this process, with per-run phase/episode progress; the debugging path.
* :class:`ProcessPoolBackend` (``--jobs N``): a
  :class:`concurrent.futures.ProcessPoolExecutor` with the ``spawn`` start
  method, one run per task. A worker process that dies (killed, out of
  memory, ``os._exit``) breaks the pool: its run fails with
  ``worker process died``, its instance is marked failed and its claim
  released; the other runs that were in flight are marked interrupted and
  run again in a new pool, so only the dead process's run fails (a run that
  had just finished, its result on the way back, is not run again: its
  result is read from the store).
* :class:`DaskBackend` (``--dask ADDRESS`` or ``--dask local``): each run is a
  task ``client.submit(execute_task, task)`` (a store opened per run: Dask
  workers outlive campaigns); results land in the shared
  store. A run whose Dask worker dies repeatedly fails with ``KilledWorker``.
* :class:`SlurmBackend` (``xrun submit --slurm``): job arrays of
  ``xrun experiment-start`` tasks sharing a PostgreSQL store.

Example::

    options = CampaignOptions(store_url=url, jobs=2).for_workers()
    tasks = [task_for(plan, options) for plan in plans]
    with make_backend(options) as backend:
        for result in backend.map_runs(tasks):
            print(result.uid, result.status)
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import deque
from concurrent.futures import FIRST_COMPLETED, wait
from types import TracebackType
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Sequence

from xdoe.campaign._stop import stop_requested
from xdoe.campaign._tasks import DONE_STATUSES, RunTask, execute_task
from xdoe.execution import RunResult

if TYPE_CHECKING:
    from xdoe.execution import ProgressEvent

__all__ = ["Backend", "FutureBackend", "failed_result", "stops"]

ProgressCallback = Callable[["ProgressEvent"], None]


class Backend(ABC):
    """Runs :class:`~xdoe.campaign.RunTask` objects somewhere; a context
    manager that releases its resources.

    ``map_runs(tasks)`` yields a :class:`~xdoe.execution.RunResult` per task
    as they finish (not in order).
    """

    #: Whether results arrive from other processes (no per-run progress).
    remote = True
    #: Tasks kept in flight at once.
    capacity: int = 1

    @abstractmethod
    def map_runs(self, tasks: Sequence[RunTask], *, fail_fast: bool = False,
                 progress: "ProgressCallback | None" = None,
                 started: Callable[[RunTask], None] | None = None) -> Iterator[RunResult]:
        """Execute every task; yield results as they finish.

        Args:
            tasks: the runs.
            fail_fast: submit nothing more after the first failed result
                (runs in flight still finish).
            progress: per-run phase/episode progress (in-process backend only).
            started: called with each task when it is handed to the backend.
        """

    def start(self) -> None:
        """Start now what the first task would start (worker processes), so
        that their start-up overlaps with the caller's work before it hands
        out tasks; nothing runs and nothing is written. Default: nothing."""

    def close(self) -> None:
        """Release processes and connections."""

    def __enter__(self) -> "Backend":
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


class FutureBackend(Backend):
    """A backend that runs ``fn(*args)`` and returns a future (the job handle)."""

    @abstractmethod
    def submit(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run ``fn(*args)``; a future of its result."""

    def map_runs(self, tasks: Sequence[RunTask], *, fail_fast: bool = False,
                 progress: "ProgressCallback | None" = None,
                 started: Callable[[RunTask], None] | None = None) -> Iterator[RunResult]:
        futures: dict[Any, RunTask] = {}
        queue = deque(tasks)
        failed = False
        while queue or futures:
            while queue and not failed and not stop_requested() and len(futures) < self.capacity:
                task = queue.popleft()
                if started is not None:
                    started(task)
                futures[self.submit(execute_task, task)] = task
            if not futures:
                break
            done = self._wait(list(futures))
            for fut in done:
                task = futures.pop(fut)
                result = self._result(fut, task)
                if stops(result, fail_fast):
                    failed = True
                yield result

    def _wait(self, futures: list[Any]) -> Iterable[Any]:
        done, _ = wait(futures, return_when=FIRST_COMPLETED)
        return done

    def _result(self, fut: Any, task: RunTask) -> RunResult:
        try:
            return fut.result()  # type: ignore[no-any-return]
        except Exception as exc:  # noqa: BLE001 - the backend failed, not the run
            return failed_result(task, f"{type(exc).__name__}: {exc}")


def stops(result: RunResult, fail_fast: bool) -> bool:
    """Whether no more runs should start after ``result``: it failed and
    ``fail_fast`` is asked, or it hit what every later run would hit too
    (``stop_campaign``: no space left on a device)."""
    return result.stop_campaign or (fail_fast and result.status not in DONE_STATUSES)


def failed_result(task: RunTask, error: str) -> RunResult:
    """A ``failed`` result for a task whose process or backend failed (the
    uid from the task's plan: nothing is parsed again)."""
    return RunResult(uid=task.uid, status="failed", error=error, file=task.file, task_key=task.key)
