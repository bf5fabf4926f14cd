"""One run of a campaign, the single path every backend takes
(:func:`execute_task`), which makes running safe when several ``xrun``
processes (on one machine or many) are given the same files and store:

1. the plan parsed once by the caller travels with the task (``RunTask.plan``,
   with its content hash computed once; a task without one loads its file
   once, in the process that runs it);
2. claim the run in the store and read its state in the same transaction
   (:meth:`store.runs.claim_run_state <xdoe.store.runs._runs.Runs.claim_run_state>`); a run another
   process holds is not run (status ``claimed``);
3. with the run's state (read under the claim, because another process may
   have finished it since the campaign read the state of all its runs) decide with the one rule
   (:func:`xdoe.execution.decision_for`): skip it when the store has
   a finished instance of this exact document (status ``skipped``;
   ``rerun`` runs it again); ``running`` instances left behind by a dead
   owner are marked ``interrupted`` and resumed;
4. execute it with :func:`xdoe.execution.run`, given the decision, while a
   heartbeat thread keeps the claim alive;
5. release the claim.

The options of every task are the campaign's one
:class:`~xdoe.campaign.CampaignOptions`.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from xdoe.campaign._options import CampaignOptions
from xdoe.errors import InputError, StoreError
from xdoe.execution import RunResult, decision_for, load_file_plan
from xdoe.store import HEARTBEAT_TIMEOUT, ClaimHeartbeat, Store

if TYPE_CHECKING:
    from xdoe.execution import ProgressEvent, RunPlan
    from xdoe.store import RunState

__all__ = ["RunTask", "execute_task", "execute_in_worker", "task_for", "worker_store",
           "DEFAULT_STALE_AFTER", "DONE_STATUSES", "WORKER_DIED"]

#: Seconds without a heartbeat after which a claim counts as abandoned (the store's one timeout).
DEFAULT_STALE_AFTER = HEARTBEAT_TIMEOUT
#: Statuses of a run task that are not failures: it ran to the end, was done
#: already, or another process is running it.
DONE_STATUSES = ("finished", "pruned", "skipped", "claimed")
#: The error of a run whose worker process died.
WORKER_DIED = "worker process died"


@dataclass(frozen=True)
class RunTask:
    """One run document to execute (picklable).

    Attributes:
        file: the run-document file (absolute for remote backends).
        options: the campaign's options (store, results, time limits...).
        plan: the document parsed once by the caller; it is pickled to
            worker processes with the task (with its content hash), so
            nobody parses the file or hashes the document again.
        owner: the claim owner; default a fresh id per task (kept when the
            task is retried, so the retry holds the same claim).
        key: identifies the task (default: fresh and random per task, kept
            when it is retried); every result for it carries it as
            :attr:`~xdoe.execution.RunResult.task_key`, so results are
            matched to tasks even when two tasks name the same file or the
            same file by two names (``x.yaml``, ``./x.yaml``, absolute).
    """

    file: str
    options: CampaignOptions = field(default_factory=CampaignOptions)
    plan: "RunPlan | None" = field(default=None, repr=False, compare=False)
    owner: str = field(default_factory=lambda: os.urandom(16).hex())
    key: str = field(default_factory=lambda: os.urandom(8).hex())

    def _loaded(self) -> "RunPlan | None":
        """The plan; a task made without one loads its file (once: cached)."""
        if self.plan is None:
            try:
                object.__setattr__(self, "plan", load_file_plan(self.file)[0])
            except Exception:  # noqa: BLE001 - unreadable: callers fall back to the file name
                return None
        return self.plan

    @property
    def uid(self) -> str:
        """The run uid: the plan's, else the file name's stem."""
        plan = self._loaded()
        return plan.uid if plan is not None else Path(self.file).stem

    @property
    def content_hash(self) -> str | None:
        """The run version (the plan's :attr:`~xdoe.execution.RunPlan.content_hash`),
        ``None`` when the document cannot be read."""
        plan = self._loaded()
        try:
            return None if plan is None else plan.content_hash
        except InputError:
            return None


def task_for(plan: "RunPlan", options: CampaignOptions | None = None) -> RunTask:
    """The task of one parsed plan; the plan travels with it, so its file is
    parsed only once (a remote backend gets the file's absolute path)."""
    options = options or CampaignOptions()
    file = str(Path(plan.file).resolve()) if (options.remote and plan.file) else str(plan.file)
    return RunTask(file=file, options=options, plan=plan)


_WORKER_STORES: dict[tuple[int, str | None], Store] = {}


def worker_store(url: str | None, wait: float = 0.0) -> Store:
    """The store at ``url`` opened once per worker process of the local pool
    (its workers run many tasks of one campaign and end with it: one store,
    not one per run), waiting ``wait`` seconds for it when it goes away
    (``--store-wait``). Keyed by process id, so a forked child never uses its
    parent's connections. Not for Dask workers: they outlive campaigns (a
    SQLite file replaced between two would still be written through the old
    connection)."""
    key = (os.getpid(), url)
    store = _WORKER_STORES.get(key)
    if store is None:
        if not any(k[0] == key[0] for k in _WORKER_STORES):
            from multiprocessing.util import Finalize

            # closed when the worker process ends (multiprocessing runs its finalizers before
            # os._exit): a SQLite store's last connection to close folds its WAL into the file
            # and removes -wal/-shm, so the file alone holds every row once the campaign ends
            Finalize(None, _close_worker_stores, args=(key[0],), exitpriority=10)
        store = _WORKER_STORES[key] = Store(url, wait=wait)
    store.database.wait = wait
    return store


def _close_worker_stores(pid: int) -> None:
    """Close the stores :func:`worker_store` opened in process ``pid`` (at its exit)."""
    for key in [k for k in _WORKER_STORES if k[0] == pid]:
        _WORKER_STORES.pop(key).close()


def execute_in_worker(task: RunTask, progress: "Callable[[ProgressEvent], None] | None" = None) -> RunResult:
    """:func:`execute_task` in a worker process of the local pool, with the
    process's one store (:func:`worker_store`)."""
    return execute_task(task, store=worker_store(task.options.store_url, task.options.store_wait),
                        progress=progress)


def execute_task(task: RunTask, *, store: "Store | None" = None,
                 progress: "Callable[[ProgressEvent], None] | None" = None) -> RunResult:
    """Claim, decide, execute and release one run (see the module docstring).

    Args:
        task: what to run.
        store: an open store to use (default: open ``task.options.store_url``
            for this task).
        progress: phase/episode progress callback (in-process use).

    Returns:
        the :class:`RunResult`; status ``finished``, ``failed``,
        ``interrupted``, ``invalid`` (the document cannot be read),
        ``skipped`` (finished before) or ``claimed`` (another process holds
        it). Never raises for a failing run.

    Raises:
        StoreError: the store cannot be opened or written.
    """
    result = _execute(task, store, progress)
    result.task_key = task.key
    return result


def _execute(task: RunTask, store: "Store | None",
             progress: "Callable[[ProgressEvent], None] | None") -> RunResult:
    plan = task.plan
    if plan is None:
        try:
            plan = load_file_plan(task.file)[0]
        except InputError as exc:
            return RunResult(uid=Path(task.file).stem, status="invalid", error=str(exc), file=task.file)
    options = task.options
    own = store is None
    db = Store(options.store_url, wait=options.store_wait) if own else store
    assert db is not None
    try:
        try:
            content_hash = plan.content_hash
        except InputError as exc:
            return RunResult(uid=plan.uid, status="invalid", error=str(exc), file=plan.file)
        state = None
        if options.claim:  # the claim and the run's state under it: one transaction
            state = db.database.again(lambda: db.runs.claim_run_state(plan.uid, content_hash, owner=task.owner,
                                                                      stale_after=options.heartbeat_timeout))
            if state is None:
                holder = db.runs.claim_of(plan.uid, content_hash)
                where = f" by {holder.host} pid {holder.pid}" if holder is not None else ""
                return RunResult(uid=plan.uid, status="claimed", file=plan.file, error=f"claimed{where}")
        elif not options.rerun:
            state = db.database.again(lambda: db.runs.run_state(plan.uid, content_hash))
        try:
            result = _run_claimed(task, db, plan, state, progress)
        except BaseException:
            if options.claim:  # keep the run's own error: never hide it behind a failed release
                try:
                    db.runs.release_claim(plan.uid, content_hash, owner=task.owner)
                except StoreError:
                    pass  # the claim goes stale and is taken over
            raise
        if options.claim:
            db.database.again(lambda: db.runs.release_claim(plan.uid, content_hash, owner=task.owner))
        return result
    finally:
        if own:
            db.close()


def _run_claimed(task: RunTask, db: Store, plan: "RunPlan", state: "RunState | None",
                 progress: "Callable[[ProgressEvent], None] | None") -> RunResult:
    """Steps 3 and 4 of the module docstring, the claim held; ``state``: the
    run's state read under it (``None``: not read, ``rerun`` without claims)."""
    # the executor is imported here, by the process that runs the run: a campaign's
    # parent process (which only hands out tasks) never loads numpy, gymnasium or the step loop
    from xdoe.execution import parallel_workers, run, run_hung

    options = task.options
    decision = None
    if state is not None:
        if options.claim:
            state = _interrupt_abandoned(db, state, options.heartbeat_timeout)
        decision = decision_for(state, rerun=options.rerun, heartbeat_timeout=options.heartbeat_timeout)
        if decision.action == "skip" and state.finished is not None:
            return RunResult(uid=plan.uid, status="skipped", file=plan.file, instance_id=state.finished,
                             note=f"skipped: finished by another process meanwhile (instance {state.finished}; "
                                  "--rerun runs it again)")  # the instance that finished it
    beat = None
    if options.claim:
        beat = ClaimHeartbeat(db.runs, plan.uid, plan.content_hash, owner=task.owner,
                              interval=options.heartbeat_timeout / 4, alive=lambda: not run_hung())
    with parallel_workers(options.parallel_workers), beat or contextlib.nullcontext():
        return run(plan, store=db, results=options.results, store_steps=options.store_steps,
                   progress=progress, rerun=options.rerun, heartbeat_timeout=options.heartbeat_timeout,
                   run_timeout=options.run_timeout, decision=decision, log=options.log)


def _interrupt_abandoned(db: Store, state: "RunState", stale_after: float) -> "RunState":
    """We hold the claim, so no other claiming process runs this version: a
    ``running`` instance whose heartbeat is older than ``stale_after`` was
    left behind by a dead process; mark it interrupted (resumable). Returns
    the state as it is now."""
    cutoff = _dt.datetime.now(_dt.timezone.utc) - _dt.timedelta(seconds=stale_after)
    marked = set()
    for inst in state.running:
        if (inst.heartbeat or inst.start) < cutoff:
            db.runs.mark_interrupted(inst.id, "abandoned: its claim went stale and was taken over")
            marked.add(inst.id)
    if not marked:
        return state
    latest = state.latest
    if latest is not None and latest.id in marked:
        latest = replace(latest, status="interrupted")
    return replace(state, latest=latest, running=tuple(i for i in state.running if i.id not in marked))
