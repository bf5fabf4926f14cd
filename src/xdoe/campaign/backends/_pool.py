"""A local process pool: ``--jobs N`` runs at once (see :class:`ProcessPoolBackend`)."""

from __future__ import annotations

import multiprocessing
import os
import signal
import socket
import threading
import warnings
from collections import deque
from datetime import datetime, timedelta, timezone
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from time import monotonic, sleep
from typing import Any, Callable, Iterator, Sequence

from xdoe._process import become_subreaper, end_descendants, pid_ended, process_alive, watch_process
from xdoe.campaign._stop import stop_requested
from xdoe.campaign._tasks import WORKER_DIED, RunTask, execute_in_worker
from xdoe.campaign.backends._base import FutureBackend, ProgressCallback, failed_result, stops
from xdoe.campaign.backends._warm import default_start_method, forkserver_started, start_forkserver, warm_modules
from xdoe.errors import DiskFullError, InputError, RunWarning, StoreLostError
from xdoe.execution import PhaseResult, RunResult, WatchBoard, kill_stuck_runs
from xdoe.store import Store

__all__ = ["ProcessPoolBackend"]


_STARTED: Any = None  # in pool workers: the queue telling the parent which task runs where
_PROGRESS: Any = None  # in pool workers: the queue of progress events for the parent's display
_IN_RUN = threading.Event()  # in pool workers: a task is executing
_TASK: "RunTask | None" = None  # in pool workers: the task executing, or the last one

#: Seconds the other workers of a broken pool have to end before they are SIGKILLed.
REAP_GRACE = 5.0
#: Seconds a worker whose parent died gives its run to record itself interrupted before it exits.
ORPHAN_GRACE = 2.5


_TERMED: Any = None  # in pool workers: shared slots for the pids of workers that got SIGTERM


def _on_sigterm(signum: int, frame: Any) -> None:
    """A worker got SIGTERM: note its pid in the first free shared slot (the
    first noted is the one killed from outside; the pool then terminates the
    others with SIGTERM too), then die of it as before."""
    slots = _TERMED
    if slots is not None:
        for i in range(len(slots)):
            if slots[i] == 0:
                slots[i] = os.getpid()
                break
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGTERM)


def _pool_init(queue: Any, progress: Any = None, parent: int | None = None, termed: Any = None,
               board: Any = None) -> None:
    global _STARTED, _PROGRESS, _TERMED
    _STARTED, _PROGRESS, _TERMED = queue, progress, termed
    become_subreaper()  # what a run's plugin code forks stays ours, and ends with the run (_pool_task)
    if termed is not None:
        signal.signal(signal.SIGTERM, _on_sigterm)
    # Ctrl-C between runs is the parent's; during a run xdoe.execution.run leaves it interrupted (resumable)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if parent is not None:  # no worker outlives its xrun, however that ends (SIGKILL too)
        watch_process(parent, _orphaned, name="xdoe-watch-parent")
    kill_stuck_runs(board)  # a run stuck past its time limit kills this worker; the parent reports it
    warnings.simplefilter("ignore", RunWarning)  # the parent prints them from the run's result


#: seconds between two forwarded episode-progress events of a worker (a display redraws
#: a few times a second; phase starts and ends are always forwarded)
PROGRESS_INTERVAL = 0.1


class _Throttled:
    """A progress callback forwarding to ``put`` every phase start and end
    (``episodes`` 0 or ``episodes_total``) and otherwise at most one event
    per :data:`PROGRESS_INTERVAL` seconds. An event carries absolute counts,
    so a display shows the same state from fewer events: ~10 a second
    instead of one per episode (~1000 a second on Taxi), each pickled by the
    worker and unpickled by the parent."""

    __slots__ = ("_put", "_next")

    def __init__(self, put: Callable[[Any], None]) -> None:
        self._put = put
        self._next = 0.0

    def __call__(self, event: Any) -> None:
        now = monotonic()
        if now >= self._next or event.episodes == 0 or event.episodes >= event.episodes_total:
            self._next = now + PROGRESS_INTERVAL
            self._put(event)


def _orphaned() -> None:
    """The parent process died (the watch thread): a run in progress is
    interrupted like a Ctrl-C (SIGINT, once the run watches it: recorded
    ``interrupted``, its claim released, resumable), given
    :data:`ORPHAN_GRACE` seconds; a run that has not ended by then (still
    starting, or stuck in plugin code) is marked ``interrupted`` from here.
    Then this worker exits: nobody would read its results, and its pool's
    queues keep it waiting for work forever otherwise."""
    deadline = monotonic() + ORPHAN_GRACE
    signalled = False
    while _IN_RUN.is_set() and monotonic() < deadline:
        if not signalled and signal.getsignal(signal.SIGINT) not in (signal.SIG_IGN, signal.SIG_DFL, None):
            os.kill(os.getpid(), signal.SIGINT)  # xdoe.execution.run watches it: the run ends interrupted
            signalled = True
        sleep(0.05)
    task = _TASK
    if _IN_RUN.is_set() and task is not None and task.content_hash is not None:
        threading.Timer(ORPHAN_GRACE / 2, os._exit, (0,)).start()  # a store that does not answer: exit anyway
        try:
            with Store(task.options.store_url) as db:
                db.runs.fail_running_instances(task.uid, task.content_hash, host=socket.gethostname(),
                                          pids={os.getpid()}, error="interrupted: xrun died", status="interrupted")
                if task.options.claim:
                    db.runs.release_claim(task.uid, task.content_hash, owner=task.owner)
        except Exception:  # noqa: BLE001 - best effort: a dead owner's running instance is resumed anyway
            pass
    os._exit(0)


def _running(pid: int) -> bool:
    """Whether worker ``pid`` still runs (exists and is no zombie)."""
    return bool(process_alive(socket.gethostname(), pid))


def _pool_task(key: int, task: RunTask) -> RunResult:
    global _TASK
    _TASK = task
    _IN_RUN.set()
    if task.plan is None:  # this worker reads the file (the run-document models are imported only then):
        from xdoe.documents import RunDocumentWarning  # the caller printed its warnings when it loaded it

        warnings.simplefilter("ignore", RunDocumentWarning)  # (no duplicate: it replaces the same filter)
    try:
        if _STARTED is not None:
            _STARTED.put((key, os.getpid()))
        return execute_in_worker(task, None if _PROGRESS is None else _Throttled(_PROGRESS.put))
    finally:
        _IN_RUN.clear()
        end_descendants()  # whatever the run started ends with it (SIGTERM-ignoring grandchildren too)


class ProcessPoolBackend(FutureBackend):
    """``jobs`` runs at once in worker processes. One run per task; a dying
    worker fails only its own run (see the module docstring).
    ``forward_progress``: the workers' phase/episode progress reaches
    ``map_runs``'s ``progress``.

    Start method: ``forkserver`` where the platform has it (Linux, macOS),
    else ``spawn`` (``auto`` forks while this process has no other thread,
    else spawns). The forkserver imports :func:`warm_modules` once, and
    every worker is forked from it already warm: a worker's start costs a
    fork, not a Python start-up with numpy, gymnasium, SQLAlchemy and
    pydantic (~1 s each on a busy 2-core machine). Workers still share
    nothing with this process (no inherited store connection or thread).
    """

    def __init__(self, jobs: int, *, start_method: str | None = None, forward_progress: bool = False) -> None:
        if jobs < 1:
            raise InputError(f"--jobs must be at least 1, got {jobs}")
        self.jobs = jobs
        self.capacity = jobs
        self.forward_progress = forward_progress
        self.start_method = start_method or default_start_method()
        self._ctx: Any = None
        self._pool: ProcessPoolExecutor | None = None
        self._queue: Any = None
        self._termed: Any = None  # pids of workers that got SIGTERM, in order (_on_sigterm)
        self._progress: Any = None
        self._processes: dict[int, Any] = {}
        self._board: Any = None  # where the workers' watchdogs publish (xdoe.execution.WatchBoard)
        self._killed: dict[int, str] = {}  # workers killed for a time limit: why
        self._starting: threading.Thread | None = None  # start()'s thread forking the workers
        self._start_error: BaseException | None = None  # what that thread met (raised by _started)
        self.pools_created = 0

    def warm(self, tasks: Sequence[RunTask]) -> None:
        """Preload the modules ``tasks`` need into the forkserver (before it
        starts; it is shared by every pool of this process; once it runs,
        nothing is looked up: ``xrun`` starts it before reading the documents)."""
        if self.start_method == "forkserver" and not forkserver_started():
            start_forkserver(warm_modules(tasks))

    def start(self) -> None:
        """Fork the ``jobs`` workers now, from the running forkserver
        (:func:`~xdoe.campaign.backends._warm.start_forkserver`; nothing
        otherwise: a worker forked from a process not yet warm would import
        the run path itself), and return at once. A fork is asked of the
        forkserver, which answers only once it has loaded its modules: a
        thread of this process waits for that (:meth:`_fork_workers`),
        meanwhile this process reads the campaign. The first worker checks
        its components (:meth:`submit`, ``xrun``'s preflight) and runs the
        first run warm. They open no store before their first run. Every
        later use of the pool (:meth:`submit`, :meth:`map_runs`,
        :meth:`close`) first waits for that thread."""
        if self.start_method != "forkserver" or not forkserver_started() or self._pool is not None:
            return
        pool = self._ensure_pool()
        self._starting = threading.Thread(target=self._fork_workers, args=(pool,), name="xdoe-pool-start",
                                          daemon=True)
        self._starting.start()

    def _fork_workers(self, pool: ProcessPoolExecutor) -> None:
        """:meth:`start`'s thread: a worker per job (the pool forks one per
        task while none is idle), each fork waiting for the forkserver's
        preload. A pool that cannot start them is broken: its first task
        says so (``BrokenProcessPool``, handled as in any run). Any other
        error is kept for the next use of the pool (:meth:`_started`), which
        raises it where ``start`` itself would have."""
        try:
            for _ in range(self.jobs):
                pool.submit(os.getpid)
        except BrokenProcessPool:  # the next submit to the broken pool reports it
            return
        except Exception as exc:  # noqa: BLE001 - raised by the next use of the pool (_started)
            self._start_error = exc

    def _started(self, *, report: bool = True) -> None:
        """Wait for :meth:`start`'s thread (if any): the pool is then used by
        this thread alone. ``report``: raise the error that thread met
        (:meth:`close` only waits)."""
        thread, self._starting = self._starting, None
        if thread is not None:
            thread.join()
        error, self._start_error = self._start_error, None
        if error is not None and report:
            raise error

    def _ensure_pool(self) -> ProcessPoolExecutor:
        self._started()
        if self._pool is None:
            become_subreaper()  # the descendants of a worker that dies come to us (ended in _recover, close)
            method = self.start_method
            if method == "auto":  # fork (no re-import) is safe only without other threads
                method = "fork" if threading.active_count() == 1 else "spawn"
            self._ctx = multiprocessing.get_context(method)
            self._queue = self._ctx.SimpleQueue()
            self._termed = self._ctx.RawArray("q", max(8, 2 * self.jobs))
            self._progress = self._ctx.SimpleQueue() if self.forward_progress else None
            self._board = WatchBoard(self._ctx, max(8, 2 * self.jobs))
            self._pool = ProcessPoolExecutor(self.jobs, mp_context=self._ctx, initializer=_pool_init,
                                             initargs=(self._queue, self._progress, os.getpid(), self._termed,
                                                       self._board))
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
        since = datetime.now(timezone.utc) - timedelta(seconds=1)  # instances of this call start later
        # results are handed on only once the workers that produced them have their next runs:
        # a worker is not kept idle while the caller handles a result (draws its laydown.svg...)
        ready: list[RunResult] = []
        if self._pool is None and self.pools_created == 0:
            self.warm(tasks)
        while queue or in_flight:
            pool = self._ensure_pool()
            broken = False
            while queue and not failed and not stop_requested() and len(in_flight) < self.capacity:
                key, task = queue.popleft()
                if started is not None and key not in announced:
                    announced.add(key)
                    started(task)
                try:
                    in_flight[pool.submit(_pool_task, key, task)] = (key, task)
                except BrokenProcessPool:  # a worker died since the last wait: judged below with the runs in flight
                    queue.appendleft((key, task))
                    broken = True
                    break
            self._snapshot()
            yield from ready
            ready.clear()
            if not broken:
                if not in_flight:
                    break
                done = self._wait(list(in_flight), progress)
                self._snapshot()
                for fut in done:
                    key, task = in_flight.pop(fut)
                    try:
                        result = fut.result()
                    except BrokenProcessPool:
                        broken = True
                        in_flight[fut] = (key, task)  # judged below with the others
                        continue
                    except StoreLostError:
                        raise  # waited for --store-wait seconds: no run can be recorded any more
                    except (DiskFullError, KeyboardInterrupt) as exc:  # a full disk, or SIGINT (Ctrl-C) in the
                        if isinstance(exc, DiskFullError) and exc.store:  # worker: its run recorded interrupted
                            raise  # the store's disk is full: no run can be recorded any more
                        result = failed_result(task, str(exc) if isinstance(exc, DiskFullError) else "interrupted")
                        result.status, result.stop_campaign = "interrupted", True
                    except BaseException as exc:  # noqa: BLE001 - raised in the worker (sys.exit, unpicklable result...)
                        result = failed_result(task, f"{type(exc).__name__}: {exc}")
                    if stops(result, fail_fast):
                        failed = True  # before the next submissions: nothing more starts
                    ready.append(result)
            if broken:
                yield from self._recover(in_flight, queue, breaks, since)
                if fail_fast:
                    failed = True
        yield from ready

    def _wait(self, futures: list[Any], progress: "ProgressCallback | None") -> set[Any]:
        """Wait for a task to finish, meanwhile handing the workers' progress
        events to ``progress`` and killing workers stuck past a time limit
        (:meth:`_kill_overdue`)."""
        while True:
            done = wait(futures, timeout=0.2, return_when=FIRST_COMPLETED)[0]
            while self._progress is not None and not self._progress.empty():
                event = self._progress.get()
                if progress is not None:
                    progress(event)
            if done:
                return done
            self._kill_overdue()
            if any(pid_ended(pid) for pid in self._processes):  # a dead worker's run's children hold its pipes
                end_descendants(keep=set(self._processes))

    def _kill_overdue(self) -> None:
        """SIGKILL each worker whose run passed its time limit more than
        ``GRACE`` + ``MARGIN`` seconds ago without its watchdog ending it (C
        code holding the GIL, signals blocked...): its run then fails with
        the limit's ``no progress ...`` message (:meth:`_recover`)."""
        if self._board is None:
            return
        for pid, message in self._board.overdue():
            if pid in self._killed or pid not in self._processes or not _running(pid):
                continue
            self._killed[pid] = message
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def _recover(self, in_flight: dict[Future[Any], tuple[int, RunTask]],
                 queue: deque[tuple[int, RunTask]], breaks: dict[int, int],
                 since: datetime) -> Iterator[RunResult]:
        """The pool broke: find the process(es) that died on their own, fail
        their runs, requeue the rest (at the front, in order) and drop the pool.
        A run the pool's own termination cut off after it had ended in the
        store (finished or failed; its result was on its way back) is not run
        again: its result is read back from the store (:meth:`_ended_meanwhile`)."""
        pool, self._pool = self._pool, None
        assert pool is not None
        reaped = self._reap()
        pool.shutdown(wait=True, cancel_futures=True)  # joins the workers: exit codes known
        end_descendants()  # what the dead worker's run started, re-parented to us
        where: dict[int, int] = {}
        while self._queue is not None and not self._queue.empty():
            k, pid = self._queue.get()
            where[k] = pid
        self._queue = None
        dead = {pid: p.exitcode for pid, p in self._processes.items()
                if p.exitcode is not None and p.exitcode != -signal.SIGTERM and pid not in reaped}
        # SIGTERM is also how the pool stops the others once one died: the first
        # worker to note it got one, before any other died, was killed from outside
        termed = [pid for pid in (self._termed or []) if pid]
        if termed and not dead and self._processes.get(termed[0]) is not None:
            dead[termed[0]] = -signal.SIGTERM
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
                yield self._died(task, pid, self._killed.pop(pid, None) or WORKER_DIED + how)
            else:
                recovered = None if pid is None else self._ended_meanwhile(task, pid, since)
                if recovered is not None:
                    yield recovered
                    continue
                if pid is not None:
                    self._mark(task, {pid}, "interrupted", "stopped with a broken process pool; run again")
                retry.append((key, task))
        queue.extendleft(reversed(retry))

    def _reap(self) -> set[int]:
        """After a break the pool terminates its other workers (SIGTERM); one
        that cannot die of it (signals blocked, C code holding the GIL) would
        keep ``shutdown`` waiting for ever. Wait up to :data:`REAP_GRACE`
        seconds (killing workers past a time limit meanwhile), then SIGKILL
        the rest: their pids (their runs are run again), not counting those
        killed for a time limit."""
        def alive() -> list[int]:  # not Process.exitcode: the pool's own thread is joining them
            return [pid for pid in self._processes if _running(pid)]

        end = monotonic() + REAP_GRACE
        while alive() and monotonic() < end:
            self._kill_overdue()
            sleep(0.1)
        reaped = set()
        for pid in alive():
            if pid not in self._killed:
                reaped.add(pid)
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        return reaped

    def _ended_meanwhile(self, task: RunTask, pid: int, since: datetime) -> RunResult | None:
        """The result of ``task`` if worker ``pid`` ended its run (the store's
        newest instance of the run version: finished or failed, by ``pid`` on
        this host, started after ``since``) but was terminated with the broken
        pool before the result came back; else ``None``. Releases the claim
        the worker may not have released. Running a failed run again would
        only record the same failure twice."""
        content_hash = task.content_hash  # loads the plan of a task made without one
        plan = task.plan
        if plan is None or content_hash is None:
            return None
        try:
            with Store(task.options.store_url) as db:
                inst = db.runs.latest_instance(task.uid, content_hash)
                if (inst is None or inst.status not in ("finished", "failed") or inst.pid != pid
                        or inst.host != socket.gethostname() or inst.start < since):
                    return None
                sums, rows = db.runs.phase_sums(inst.id), db.runs.phases(inst.id)
                if task.options.claim:
                    db.runs.release_claim(task.uid, content_hash, owner=task.owner)
        except Exception:  # noqa: BLE001 - best effort: then the run is retried (and skipped as finished)
            return None
        modes = {p.index: p.mode for p in plan.phases}
        phases = [PhaseResult.from_sums(r.index, r.name, modes.get(r.index, ""), sums.get(r.index)) for r in rows]
        return RunResult(uid=task.uid, status=inst.status, instance_id=inst.id, results_dir=inst.results_dir,
                         file=task.file, phases=phases, episodes=sum(p.episodes for p in phases),
                         steps=sum(p.steps for p in phases), task_key=task.key,
                         wall_time=0.0 if inst.end is None else (inst.end - inst.start).total_seconds(),
                         error=inst.error if inst.status == "failed" else None,
                         note=f"{inst.status}; its result, lost when another worker process died, read from the store")

    def _mark(self, task: RunTask, pids: set[int], status: str, error: str) -> None:
        if task.content_hash is None:
            return  # no plan: the run never started, nothing to mark
        try:
            with Store(task.options.store_url) as db:
                db.runs.fail_running_instances(task.uid, task.content_hash, host=socket.gethostname(),
                                          pids=pids, error=error, status=status)
        except Exception:  # noqa: BLE001 - best effort: the result reports the failure anyway
            pass

    def _died(self, task: RunTask, pid: int | None, error: str) -> RunResult:
        result = failed_result(task, error)
        content_hash = task.content_hash
        if content_hash is None:
            return result  # no plan: the run never started, nothing to mark
        try:
            with Store(task.options.store_url) as db:
                if pid is not None:
                    db.runs.fail_running_instances(task.uid, content_hash, host=socket.gethostname(),
                                              pids={pid}, error=error)
                    latest = db.runs.latest_instance(task.uid, content_hash)
                    if latest is not None and latest.status == "failed":  # what it stored counts
                        result.instance_id = latest.id
                        if latest.pid == pid:  # its error (e.g. the time limit that killed it), the time it ran
                            result.error = latest.error or result.error
                            result.wall_time = max(0.0, ((latest.end or datetime.now(timezone.utc))
                                                         - latest.start).total_seconds())
                        result.episodes = len({(e["phase_index"], e["worker"], e["episode"])
                                               for e in db.runs.episodes(instance_id=latest.id)})
                if task.options.claim:
                    db.runs.release_claim(task.uid, content_hash, owner=task.owner)
        except Exception:  # noqa: BLE001 - best effort, as above
            pass
        return result

    def close(self) -> None:
        self._started(report=False)
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
            end_descendants()  # what the runs of workers that died started, re-parented to us
