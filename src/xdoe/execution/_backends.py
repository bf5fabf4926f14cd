"""Where runs execute: in this process, in a local process pool, or on a Dask
cluster, behind one small interface.

Every backend runs :class:`RunTask` objects through :func:`execute_task`,
which makes running safe when several ``xrun`` processes (on one machine or
many) are given the same files and store:

1. load the document and compute its content hash;
2. claim the run in the store (:func:`xdoe.store.claim_run`); a run another
   process holds is not run (status ``claimed``);
3. skip it when the store already has a finished instance of this exact
   document (status ``skipped``; ``rerun=True`` runs it again); running
   instances left behind by a dead owner are marked ``interrupted``;
4. execute it with :func:`xdoe.execution.run` while a heartbeat thread keeps
   the claim alive;
5. release the claim.

Backends (:func:`make_backend`):

* :class:`SequentialBackend` (default, ``--jobs 1``): one run after another in
  this process, with per-run phase/episode progress; the debugging path.
* :class:`ProcessPoolBackend` (``--jobs N``): a
  :class:`concurrent.futures.ProcessPoolExecutor` with the ``spawn`` start
  method, one run per task. A worker process that dies (killed, out of
  memory, ``os._exit``) breaks the pool: its run fails with
  ``worker process died``, its instance is marked failed and its claim
  released; the other runs that were in flight are marked interrupted and
  run again in a new pool, so only the dead process's run fails.
* :class:`DaskBackend` (``--dask ADDRESS`` or ``--dask local``): each run is a
  task ``client.submit(execute_task, task)``; results land in the shared
  store. A run whose Dask worker dies repeatedly fails with ``KilledWorker``.

Example::

    tasks = [RunTask(str(p), store_url=url) for p in files]
    with make_backend(jobs=2) as backend:
        for result in backend.map_runs(tasks):
            print(result.uid, result.status)
"""

from __future__ import annotations

import os
import signal
import socket
from abc import ABC, abstractmethod
from collections import deque
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Sequence

from xdoe.errors import InputError
from xdoe.execution._api import DEFAULT_RESULTS, RunResult, load_file_plan, load_plan, run

if TYPE_CHECKING:
    from xdoe.execution._plan import RunPlan
    from xdoe.execution._runner import ProgressCallback
    from xdoe.store import Store

__all__ = [
    "RunTask",
    "execute_task",
    "Backend",
    "SequentialBackend",
    "ProcessPoolBackend",
    "DaskBackend",
    "make_backend",
    "parse_jobs",
    "absolute_store_url",
    "DEFAULT_STALE_AFTER",
    "DONE_STATUSES",
]

#: Seconds without a heartbeat after which a claim counts as abandoned.
DEFAULT_STALE_AFTER = 120.0
#: Statuses of a run task that are not failures: it ran to the end, was done
#: already, or another process is running it.
DONE_STATUSES = ("finished", "skipped", "claimed")
WORKER_DIED = "worker process died"


@dataclass(frozen=True)
class RunTask:
    """One run document to execute (picklable).

    Attributes:
        file: the run-document file.
        store_url: the store's URL (``None``: ``$XRUN_STORE`` or the default;
            give an absolute URL to processes on other machines, see
            :func:`absolute_store_url`).
        results: root of the results folders (``None``: none written).
        store_steps: ``none``, ``all`` or ``every:N``.
        stale_after: seconds after which another process's claim counts as
            abandoned; the heartbeat beats every quarter of it.
        rerun: run it even when the store has a finished instance.
        parallel_workers: run the phases with ``worker > 1`` in worker
            processes (:mod:`xdoe.execution._parallel_workers`).
        claim: claim the run first (``False``: run unconditionally).
        owner: the claim owner; default a fresh id per task (kept when the
            task is retried, so the retry holds the same claim).
        file_sha256: sha256 of the file's bytes, for a task given an already
            loaded plan (:func:`xdoe.execution.load_file_plan`); a task that
            loads its file computes it from the bytes it parses.
    """

    file: str
    store_url: str | None = None
    results: str | None = str(DEFAULT_RESULTS)
    store_steps: str = "none"
    stale_after: float = DEFAULT_STALE_AFTER
    rerun: bool = False
    parallel_workers: bool = False
    claim: bool = True
    owner: str = field(default_factory=lambda: os.urandom(16).hex())
    file_sha256: str | None = None


def execute_task(task: RunTask, *, store: "Store | None" = None, plan: "RunPlan | None" = None,
                 progress: "ProgressCallback | None" = None) -> RunResult:
    """Claim, execute and release one run (see the module docstring).

    Args:
        task: what to run.
        store: an open store to use (default: open ``task.store_url``).
        plan: the already loaded document (default: load ``task.file``).
        progress: phase/episode progress callback (in-process use).

    Returns:
        the :class:`RunResult`; status ``finished``, ``failed``,
        ``interrupted``, ``invalid`` (the document cannot be read),
        ``skipped`` (finished before) or ``claimed`` (another process holds
        it). Never raises for a failing run.

    Raises:
        StoreError: the store cannot be opened or written.
    """
    from xdoe.execution._parallel_workers import parallel_workers
    from xdoe.store import (
        ClaimHeartbeat,
        Store,
        claim_of,
        claim_run,
        document_hash,
        release_claim,
        run_finished,
    )

    digest = task.file_sha256
    if plan is None:
        try:
            plan, digest = load_file_plan(task.file)
        except InputError as exc:
            return RunResult(uid=Path(task.file).stem, status="invalid", error=str(exc), file=task.file)
    own = store is None
    db = Store(task.store_url) if own else store
    assert db is not None
    try:
        content_hash = document_hash(plan.document)
        if task.claim and not claim_run(db, plan.uid, content_hash, owner=task.owner,
                                        stale_after=task.stale_after):
            holder = claim_of(db, plan.uid, content_hash)
            where = f" by {holder.host} pid {holder.pid}" if holder is not None else ""
            return RunResult(uid=plan.uid, status="claimed", file=plan.file,
                             error=f"claimed{where}")
        try:
            if not task.rerun and run_finished(db, plan.uid, content_hash):
                return RunResult(uid=plan.uid, status="skipped", file=plan.file,
                                 error="finished before (use --rerun to run it again)")
            if task.claim:
                _interrupt_abandoned(db, plan.uid, content_hash, task.stale_after)
                beat = ClaimHeartbeat(db, plan.uid, content_hash, owner=task.owner,
                                      interval=task.stale_after / 4)
            else:
                beat = None
            with parallel_workers(task.parallel_workers):
                if beat is None:
                    return run(plan, store=db, results=task.results, store_steps=task.store_steps,
                               progress=progress, rerun=task.rerun, heartbeat_timeout=task.stale_after,
                               file_sha256=digest)
                with beat:
                    return run(plan, store=db, results=task.results, store_steps=task.store_steps,
                               progress=progress, rerun=task.rerun, heartbeat_timeout=task.stale_after,
                               file_sha256=digest)
        finally:
            if task.claim:
                release_claim(db, plan.uid, content_hash, owner=task.owner)
    finally:
        if own:
            db.close()


def _interrupt_abandoned(db: "Store", uid: str, content_hash: str, stale_after: float) -> None:
    """We hold the claim, so no other claiming process runs this version: a
    ``running`` instance whose heartbeat is older than ``stale_after`` was
    left behind by a dead process; mark it interrupted (resumable)."""
    import datetime as _dt

    from xdoe.store import utcnow

    cutoff = utcnow() - _dt.timedelta(seconds=stale_after)
    for inst in db.instances("running", run_uid=uid):
        if inst.content_hash == content_hash and (inst.heartbeat or inst.start) < cutoff:
            db.mark_interrupted(inst.id, "abandoned: its claim went stale and was taken over")


# -- the interface ---------------------------------------------------------------------

class Backend(ABC):
    """Runs tasks somewhere; a context manager that releases its resources.

    ``submit(fn, *args)`` returns a future (``concurrent.futures.Future``, or
    a Dask future with the same ``result()``); ``map_runs(tasks)`` yields a
    :class:`RunResult` per task as they finish (not in order).
    """

    #: Whether results arrive from other processes (no per-run progress).
    remote = True

    @abstractmethod
    def submit(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run ``fn(*args)``; a future of its result."""

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
        futures: dict[Any, RunTask] = {}
        queue = deque(tasks)
        failed = False
        while queue or futures:
            while queue and not failed and len(futures) < self.capacity:
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
                if fail_fast and result.status not in DONE_STATUSES:
                    failed = True
                yield result

    #: Tasks kept in flight at once.
    capacity: int = 1

    def _wait(self, futures: list[Any]) -> Iterable[Any]:
        done, _ = wait(futures, return_when=FIRST_COMPLETED)
        return done

    def _result(self, fut: Any, task: RunTask) -> RunResult:
        try:
            return fut.result()
        except Exception as exc:  # noqa: BLE001 - the backend failed, not the run
            return _failed(task, f"{type(exc).__name__}: {exc}")

    def close(self) -> None:
        """Release processes and connections."""

    def __enter__(self) -> "Backend":
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


def _failed(task: RunTask, error: str) -> RunResult:
    return RunResult(uid=_uid_of(task), status="failed", error=error, file=task.file)


def _uid_of(task: RunTask) -> str:
    try:
        return load_plan(task.file).uid
    except Exception:  # noqa: BLE001
        return Path(task.file).stem


class SequentialBackend(Backend):
    """Runs every task in this process, one after another, sharing one open
    store per store URL; per-run progress works."""

    remote = False

    def __init__(self, plans: "dict[str, RunPlan] | None" = None) -> None:
        self._plans = plans or {}
        self._stores: dict[str | None, Store] = {}

    def submit(self, fn: Callable[..., Any], *args: Any) -> "Future[Any]":
        fut: Future[Any] = Future()
        try:
            fut.set_result(fn(*args))
        except BaseException as exc:  # noqa: BLE001 - delivered through the future
            if isinstance(exc, KeyboardInterrupt):
                raise
            fut.set_exception(exc)
        return fut

    def map_runs(self, tasks: Sequence[RunTask], *, fail_fast: bool = False,
                 progress: "ProgressCallback | None" = None,
                 started: Callable[[RunTask], None] | None = None) -> Iterator[RunResult]:
        from xdoe.store import Store

        for task in tasks:
            if started is not None:
                started(task)
            store = self._stores.get(task.store_url)
            if store is None:
                store = self._stores[task.store_url] = Store(task.store_url)
            result = execute_task(task, store=store, plan=self._plans.get(task.file), progress=progress)
            yield result
            if fail_fast and result.status not in DONE_STATUSES:
                return

    def close(self) -> None:
        for store in self._stores.values():
            store.close()
        self._stores.clear()


# -- local process pool ------------------------------------------------------------------

_STARTED: Any = None  # in pool workers: the queue telling the parent which task runs where


def _pool_init(queue: Any) -> None:
    global _STARTED
    _STARTED = queue
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle


def _pool_task(key: int, task: RunTask) -> RunResult:
    if _STARTED is not None:
        _STARTED.put((key, os.getpid()))
    return execute_task(task)


class ProcessPoolBackend(Backend):
    """``jobs`` runs at once in worker processes (``spawn`` start method by
    default; ``forkserver`` also works). One run per task; a dying worker
    fails only its own run (see the module docstring)."""

    def __init__(self, jobs: int, *, start_method: str = "spawn") -> None:
        import multiprocessing

        if jobs < 1:
            raise InputError(f"--jobs must be at least 1, got {jobs}")
        self.jobs = jobs
        self.capacity = jobs
        self._ctx = multiprocessing.get_context(start_method)
        self._pool: ProcessPoolExecutor | None = None
        self._queue: Any = None
        self._processes: dict[int, Any] = {}
        self.pools_created = 0

    def _ensure_pool(self) -> ProcessPoolExecutor:
        if self._pool is None:
            self._queue = self._ctx.SimpleQueue()
            self._pool = ProcessPoolExecutor(self.jobs, mp_context=self._ctx, initializer=_pool_init,
                                             initargs=(self._queue,))
            self._processes = {}
            self.pools_created += 1
        return self._pool

    def submit(self, fn: Callable[..., Any], *args: Any) -> "Future[Any]":
        return self._ensure_pool().submit(fn, *args)

    def _snapshot(self) -> None:
        # the pool starts its processes lazily: keep every Process object so
        # that their exit codes can be read after a break
        procs = getattr(self._pool, "_processes", None) or {}
        self._processes.update(procs)

    def map_runs(self, tasks: Sequence[RunTask], *, fail_fast: bool = False,
                 progress: "ProgressCallback | None" = None,
                 started: Callable[[RunTask], None] | None = None) -> Iterator[RunResult]:
        queue: deque[tuple[int, RunTask]] = deque(enumerate(tasks))
        in_flight: dict[Future[Any], tuple[int, RunTask]] = {}
        breaks: dict[int, int] = {}
        announced: set[int] = set()
        failed = False
        while queue or in_flight:
            pool = self._ensure_pool()
            while queue and not failed and len(in_flight) < self.capacity:
                key, task = queue.popleft()
                if started is not None and key not in announced:
                    announced.add(key)
                    started(task)
                in_flight[pool.submit(_pool_task, key, task)] = (key, task)
            self._snapshot()
            if not in_flight:
                break
            done, _ = wait(list(in_flight), return_when=FIRST_COMPLETED)
            self._snapshot()
            broken = False
            for fut in done:
                key, task = in_flight.pop(fut)
                try:
                    result = fut.result()
                except BrokenProcessPool:
                    broken = True
                    in_flight[fut] = (key, task)  # judged below with the others
                    continue
                except Exception as exc:  # noqa: BLE001 - e.g. an unpicklable result
                    result = _failed(task, f"{type(exc).__name__}: {exc}")
                if fail_fast and result.status not in DONE_STATUSES:
                    failed = True
                yield result
            if broken:
                yield from self._recover(in_flight, queue, breaks)
                if fail_fast:
                    failed = True

    def _recover(self, in_flight: dict[Future[Any], tuple[int, RunTask]],
                 queue: deque[tuple[int, RunTask]], breaks: dict[int, int]) -> Iterator[RunResult]:
        """The pool broke: find the process(es) that died on their own, fail
        their runs, requeue the rest (at the front, in order) and drop the pool."""
        pool, self._pool = self._pool, None
        assert pool is not None
        pool.shutdown(wait=True, cancel_futures=True)  # joins the workers: exit codes known
        where: dict[int, int] = {}
        while self._queue is not None and not self._queue.empty():
            k, pid = self._queue.get()
            where[k] = pid
        self._queue = None
        dead = {pid: p.exitcode for pid, p in self._processes.items()
                if p.exitcode is not None and p.exitcode != -signal.SIGTERM}
        entries = sorted(in_flight.values(), key=lambda e: e[0])
        in_flight.clear()
        retry: list[tuple[int, RunTask]] = []
        for key, task in entries:
            pid = where.get(key)
            breaks[key] = breaks.get(key, 0) + 1
            if (pid is not None and pid in dead) or breaks[key] >= 3:
                code = dead.get(pid) if pid is not None else None
                how = (f" (killed by {signal.Signals(-code).name})" if code is not None and code < 0
                       else f" (exit code {code})" if code is not None else "")
                yield self._died(task, pid, WORKER_DIED + how)
            else:
                if pid is not None:
                    self._mark(task, {pid}, "interrupted", "stopped with a broken process pool; run again")
                retry.append((key, task))
        queue.extendleft(reversed(retry))

    def _mark(self, task: RunTask, pids: set[int], status: str, error: str) -> None:
        from xdoe.store import Store, document_hash, fail_running_instances

        try:
            plan = load_plan(task.file)
            with Store(task.store_url) as db:
                fail_running_instances(db, plan.uid, document_hash(plan.document), host=socket.gethostname(),
                                       pids=pids, error=error, status=status)
        except Exception:  # noqa: BLE001 - best effort: the result reports the failure anyway
            pass

    def _died(self, task: RunTask, pid: int | None, error: str) -> RunResult:
        from xdoe.store import Store, document_hash, fail_running_instances, release_claim

        result = _failed(task, error)
        try:
            plan = load_plan(task.file)
            content_hash = document_hash(plan.document)
            with Store(task.store_url) as db:
                if pid is not None:
                    fail_running_instances(db, plan.uid, content_hash, host=socket.gethostname(),
                                           pids={pid}, error=error)
                if task.claim:
                    release_claim(db, plan.uid, content_hash, owner=task.owner)
        except Exception:  # noqa: BLE001 - best effort, as above
            pass
        return result

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


# -- Dask -------------------------------------------------------------------------------------

class DaskBackend(Backend):
    """Each run a task on a Dask distributed cluster.

    Args:
        address: a scheduler address (``tcp://host:8786``) or ``"local"``
            for a :class:`distributed.LocalCluster` on the loopback interface
            without dashboard.
        n_workers: workers of the local cluster (one thread each); default
            the CPU count.
    """

    def __init__(self, address: str, *, n_workers: int | None = None) -> None:
        try:
            from distributed import Client, LocalCluster
        except ImportError as exc:  # pragma: no cover - distributed is a dependency
            raise InputError(f"--dask needs the 'distributed' package: {exc}") from None
        self.cluster: Any = None
        if address == "local":
            self.cluster = LocalCluster(host="127.0.0.1", n_workers=n_workers or os.cpu_count() or 1,
                                        threads_per_worker=1, processes=True, dashboard_address=None)
            self.client = Client(self.cluster)
        else:
            try:
                self.client = Client(address, timeout="20s")
            except (OSError, TimeoutError) as exc:
                self.close()
                raise InputError(f"--dask {address}: cannot connect to the scheduler: {exc}") from None
        workers = self.client.scheduler_info().get("workers", {})
        self.capacity = max(1, sum(int(w.get("nthreads", 1)) for w in workers.values())) * 2

    def submit(self, fn: Callable[..., Any], *args: Any) -> Any:
        return self.client.submit(fn, *args, pure=False)

    def _wait(self, futures: list[Any]) -> Iterable[Any]:
        from distributed import wait as dask_wait

        done, _ = dask_wait(futures, return_when="FIRST_COMPLETED")
        return done

    def _result(self, fut: Any, task: RunTask) -> RunResult:
        try:
            return fut.result()
        except Exception as exc:  # noqa: BLE001 - KilledWorker, lost connection ...
            name = type(exc).__name__
            error = f"{WORKER_DIED} ({name}: {exc})" if name == "KilledWorker" else f"{name}: {exc}"
            return _failed(task, error)

    def close(self) -> None:
        client = getattr(self, "client", None)
        if client is not None:
            client.close()
        if self.cluster is not None:
            self.cluster.close()


# -- choosing ---------------------------------------------------------------------------------

def parse_jobs(value: str | int | None) -> int:
    """``--jobs``: a positive integer or ``auto`` (the CPU count available to us).

    Raises:
        InputError: anything else.
    """
    if value is None:
        return 1
    if isinstance(value, str) and value.strip().lower() == "auto":
        try:
            return max(1, len(os.sched_getaffinity(0)))
        except AttributeError:  # pragma: no cover - not Linux
            return max(1, os.cpu_count() or 1)
    try:
        jobs = int(value)
    except (TypeError, ValueError):
        raise InputError(f"--jobs: expected a positive integer or 'auto', got {value!r}") from None
    if jobs < 1:
        raise InputError(f"--jobs: expected a positive integer or 'auto', got {value!r}")
    return jobs


def absolute_store_url(url: str | None) -> str:
    """The store URL other processes should open: ``$XRUN_STORE``/the
    default resolved, and a relative SQLite path made absolute."""
    from sqlalchemy.engine import make_url

    from xdoe.store._engine import resolve_url

    resolved = resolve_url(url)
    try:
        parsed = make_url(resolved)
    except Exception:  # noqa: BLE001 - Store() reports malformed URLs
        return resolved
    db = parsed.database or ""
    if parsed.get_backend_name() == "sqlite" and db and db != ":memory:" and not db.startswith("file:") \
            and not os.path.isabs(db):
        return parsed.set(database=str(Path(db).resolve())).render_as_string(hide_password=False)
    return resolved


def make_backend(jobs: int = 1, dask: str | None = None,
                 plans: "dict[str, RunPlan] | None" = None) -> Backend:
    """The backend for ``--jobs``/``--dask``: Dask when ``dask`` is given
    (``jobs`` > 1 sizes a local cluster), a process pool for ``jobs > 1``,
    else in-process (``plans`` maps file names to loaded plans to skip
    reloading them)."""
    if dask:
        return DaskBackend(dask, n_workers=jobs if jobs > 1 else None)
    if jobs > 1:
        return ProcessPoolBackend(jobs)
    return SequentialBackend(plans)
