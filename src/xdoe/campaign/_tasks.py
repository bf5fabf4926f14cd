"""One run of a campaign, the single path every backend takes
(:func:`execute_task`), which makes running safe when several ``xrun``
processes (on one machine or many) are given the same files and store:

1. the plan parsed once by the caller travels with the task (``RunTask.plan``;
   a task without one loads its file once, in the process that runs it);
2. claim the run in the store (:meth:`xdoe.store.Store.claim_run`); a run another
   process holds is not run (status ``claimed``);
3. skip it when the store already has a finished instance of this exact
   document (status ``skipped``; ``rerun=True`` runs it again); running
   instances left behind by a dead owner are marked ``interrupted``;
4. execute it with :func:`xdoe.execution.run` (which decides: skip, resume or
   new instance) while a heartbeat thread keeps the claim alive;
5. release the claim.

:func:`skip_finished` and :func:`skip_finished_files` skip the finished runs
of a whole campaign with one store query before any task is made.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

from xdoe._files import file_sha256
from xdoe.errors import InputError, StoreError
from xdoe.execution import DEFAULT_RESULTS, RunResult, load_file_plan, parallel_workers, run, run_hung
from xdoe.store import HEARTBEAT_TIMEOUT, ClaimHeartbeat, Store, document_hash

if TYPE_CHECKING:
    from xdoe.execution import ProgressEvent, RunPlan

__all__ = ["RunTask", "execute_task", "task_for", "skip_finished", "skip_finished_files",
           "DEFAULT_STALE_AFTER", "DONE_STATUSES", "WORKER_DIED"]

#: Seconds without a heartbeat after which a claim counts as abandoned (the store's one timeout).
DEFAULT_STALE_AFTER = HEARTBEAT_TIMEOUT
#: Statuses of a run task that are not failures: it ran to the end, was done
#: already, or another process is running it.
DONE_STATUSES = ("finished", "skipped", "claimed")
#: The error of a run whose worker process died.
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
        laydown: put ``laydown.svg`` into the run's results folder
            (``xrun experiment-start --no-laydown``: not).
        plan: the document parsed once by the caller; it is pickled to
            worker processes with the task, so nobody parses the file again.
        key: identifies the task (default: fresh and random per task, kept
            when it is retried); every result for it carries it as
            :attr:`~xdoe.execution.RunResult.task_key`, so results are
            matched to tasks even when two tasks name the same file or the
            same file by two names (``x.yaml``, ``./x.yaml``, absolute).
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
    laydown: bool = True
    plan: "RunPlan | None" = field(default=None, repr=False, compare=False)
    key: str = field(default_factory=lambda: os.urandom(8).hex())
    run_timeout: float | None = None

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
        """The run version (:func:`xdoe.store.document_hash`), ``None`` when
        the document cannot be read."""
        plan = self._loaded()
        return None if plan is None else document_hash(plan.document)


def execute_task(task: RunTask, *, store: "Store | None" = None, plan: "RunPlan | None" = None,
                 progress: "Callable[[ProgressEvent], None] | None" = None) -> RunResult:
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
    result = _execute(task, store, plan, progress)
    result.task_key = task.key
    return result


def _execute(task: RunTask, store: "Store | None", plan: "RunPlan | None",
             progress: "Callable[[ProgressEvent], None] | None") -> RunResult:
    digest = task.file_sha256
    plan = plan if plan is not None else task.plan
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
        if task.claim and not db.claim_run(plan.uid, content_hash, owner=task.owner,
                                           stale_after=task.stale_after):
            holder = db.claim_of(plan.uid, content_hash)
            where = f" by {holder.host} pid {holder.pid}" if holder is not None else ""
            return RunResult(uid=plan.uid, status="claimed", file=plan.file,
                             error=f"claimed{where}")
        try:
            result = _run_claimed(task, db, plan, content_hash, digest, progress)
        except BaseException:
            if task.claim:  # keep the run's own error: never hide it behind a failed release
                try:
                    db.release_claim(plan.uid, content_hash, owner=task.owner)
                except StoreError:
                    pass  # the claim goes stale and is taken over
            raise
        if task.claim:
            db.release_claim(plan.uid, content_hash, owner=task.owner)
        return result
    finally:
        if own:
            db.close()


def _run_claimed(task: RunTask, db: Store, plan: "RunPlan", content_hash: str, digest: str | None,
                 progress: "Callable[[ProgressEvent], None] | None") -> RunResult:
    """Steps 3 and 4 of the module docstring, the claim held."""
    finished = None
    if not task.rerun:
        # run_finished's query, kept for run()'s own decision (we hold the claim: it cannot change)
        finished = db.finished_instances(plan.uid, content_hash)
        if finished:
            return RunResult(uid=plan.uid, status="skipped", file=plan.file,
                             error="finished before (use --rerun to run it again)",
                             instance_id=max(finished.values()))  # the instance that finished it
    beat = None
    if task.claim:
        _interrupt_abandoned(db, plan.uid, content_hash, task.stale_after)
        beat = ClaimHeartbeat(db, plan.uid, content_hash, owner=task.owner, interval=task.stale_after / 4,
                              alive=lambda: not run_hung())
    with parallel_workers(task.parallel_workers), beat or contextlib.nullcontext():
        return run(plan, store=db, results=task.results, store_steps=task.store_steps, progress=progress,
                   rerun=task.rerun, heartbeat_timeout=task.stale_after, file_sha256=digest,
                   laydown=task.laydown, finished=finished, run_timeout=task.run_timeout)


def _interrupt_abandoned(db: "Store", uid: str, content_hash: str, stale_after: float) -> None:
    """We hold the claim, so no other claiming process runs this version: a
    ``running`` instance whose heartbeat is older than ``stale_after`` was
    left behind by a dead process; mark it interrupted (resumable)."""
    cutoff = _dt.datetime.now(_dt.timezone.utc) - _dt.timedelta(seconds=stale_after)
    for inst in db.instances("running", run_uid=uid):
        if inst.content_hash == content_hash and (inst.heartbeat or inst.start) < cutoff:
            db.mark_interrupted(inst.id, "abandoned: its claim went stale and was taken over")


def task_for(plan: "RunPlan", **options: object) -> RunTask:
    """The task of one parsed plan (``options``: the other :class:`RunTask`
    fields); the plan travels with it, so its file is parsed only once."""
    return RunTask(file=str(plan.file), plan=plan, **options)  # type: ignore[arg-type]


def _skipped(uid: str, instance: int, file: str | None) -> RunResult:
    return RunResult(uid=uid, status="skipped", instance_id=instance, file=file,
                     note=f"skipped: finished earlier (instance {instance})")


def skip_finished(plans: Sequence["RunPlan"], store: Store
                  ) -> tuple[list["RunPlan"], list[tuple[int, RunResult]]]:
    """Split ``plans`` into those to run and ``skipped`` results (with their
    positions) for the runs whose exact document finished before: one query
    (:meth:`xdoe.store.Store.finished_instances`) for all of them."""
    finished = store.finished_instances()
    if not finished:
        return list(plans), []
    todo, skipped = [], []
    for i, plan in enumerate(plans):
        instance = finished.get((plan.uid, document_hash(plan.document)))
        if instance is None:
            todo.append(plan)
        else:
            skipped.append((i, _skipped(plan.uid, instance, plan.file)))
    return todo, skipped


def _readable_sha256(path: str | Path) -> str | None:
    try:
        return file_sha256(path)
    except OSError:
        return None


def skip_finished_files(files: Sequence[str | Path], store: Store
                        ) -> tuple[list[int], list[tuple[int, RunResult]]]:
    """Skip run-document files whose exact bytes belong to a finished run,
    without reading them as documents: one sha256 per file and one store
    query (per 500 files) for all of them.

    The store records with each run the sha256 of the file it was started
    from (``Store.recorder(..., file_sha256=...)``); the same bytes are the
    same document, hence the same run version. A file not found this way (new,
    changed, reformatted, unreadable, or whose uid is its file name) is left
    to the normal path, which loads it and skips it by its content hash.

    Returns:
        the positions of the files still to load, and ``(position, result)``
        for each skipped file (``status="skipped"``, note ``"skipped: finished
        earlier (instance N)"``).

    Raises:
        StoreError: the store cannot be read.
    """
    digests = [_readable_sha256(f) for f in files]
    known = {d for d in digests if d is not None}
    if not known:
        return list(range(len(files))), []
    finished = store.finished_file_hashes(known)
    todo: list[int] = []
    skipped: list[tuple[int, RunResult]] = []
    for i, (path, digest) in enumerate(zip(files, digests)):
        hit = finished.get(digest) if digest is not None else None
        if hit is None:
            todo.append(i)
        else:
            skipped.append((i, _skipped(hit[0], hit[1], str(Path(path)))))
    return todo, skipped
