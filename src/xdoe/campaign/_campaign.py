"""A campaign: many run documents executed, skipped or resumed
(:class:`Campaign`).

The campaign owns the store, its one frozen :class:`CampaignOptions` and the
run/skip/resume decision: it reads the state of all its runs with one query
(:meth:`store.runs.run_states <xdoe.store.runs._runs.Runs.run_states>`), hashes each document once (the plan's
:attr:`~xdoe.execution.RunPlan.content_hash`, carried to the process that
runs it), skips the runs that finished before, and hands the others to a
backend as :class:`RunTask` objects (each claimed, decided under its claim
and run by :func:`execute_task`; :func:`xdoe.execution.run` runs one plan).
Runs other processes hold are waited for, and taken over if they die
(:func:`run_all`).

:func:`skip_finished_files` skips, before they are even parsed, the files
whose exact bytes belong to a finished run (one sha256 per file, one query).

Example::

    plans = [load_file_plan(f)[0] for f in files]
    results = Campaign(plans, CampaignOptions(store_url=url, jobs=2)).run()
"""

from __future__ import annotations

import contextlib
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

from xdoe._files import file_sha256
from xdoe.campaign._options import CampaignOptions
from xdoe.campaign._tasks import DONE_STATUSES, RunTask, task_for
from xdoe.campaign._waiting import run_all
from xdoe.campaign.backends import make_backend
from xdoe.errors import RunWarning
from xdoe.execution import Decision, RunResult, decision_for, sigint_as_ctrl_c
from xdoe.store import Store

if TYPE_CHECKING:
    from xdoe.campaign.backends import Backend
    from xdoe.execution import ProgressEvent, RunPlan

__all__ = ["Campaign", "all_done", "skip_finished_files"]


class Campaign:
    """Run documents executed, skipped or resumed with one set of options.

    Args:
        plans: the loaded run documents (:func:`xdoe.execution.load_file_plan`).
        options: how to run them (default :class:`CampaignOptions`).
        store: the store at ``options.store_url``, already open (the caller
            keeps owning it); default: the campaign opens it (once) when it
            reads the runs' states, and releases its connections before any
            run starts (worker processes share nothing with this one).
        backend: the backend to run on, already made (and perhaps started:
            :meth:`Backend.start <xdoe.campaign.backends.Backend.start>`)
            from these options by :func:`~xdoe.campaign.make_backend`; the
            caller keeps owning it (closes it). Default: the campaign makes
            one for :meth:`run` and closes it after.

    Attributes:
        plans, options: as given.
    """

    def __init__(self, plans: Sequence["RunPlan"], options: CampaignOptions | None = None, *,
                 store: Store | None = None, backend: "Backend | None" = None) -> None:
        self.plans = list(plans)
        self.options = options or CampaignOptions()
        self._store = store
        self._backend = backend

    def decisions(self) -> list["Decision"]:
        """What to do with each plan (in order): ``skip`` (finished, or
        running in a live process), ``resume`` or ``new``, by the one rule
        (:func:`xdoe.execution.decision_for`), from the state of all runs read
        with one query (none with ``rerun``).

        Raises:
            StoreError: the store cannot be opened or read.
        """
        options = self.options
        if options.rerun or not self.plans:
            return [Decision("new") for _ in self.plans]
        versions = [(p.uid, p.content_hash) for p in self.plans]
        store = self._store if self._store is not None else Store(options.store_url)
        try:
            states = store.runs.run_states(versions)
        finally:
            if self._store is None or not options.in_this_process:
                store.close()  # its pooled connection: the runs' worker processes fork after this
        return [decision_for(states[v], heartbeat_timeout=options.heartbeat_timeout) for v in versions]

    def run(self, *, progress: "Callable[[ProgressEvent], None] | None" = None,
            started: "Callable[[RunPlan], None] | None" = None,
            on_result: "Callable[[RunPlan, RunResult], None] | None" = None,
            waiting: "Callable[[list[RunResult]], None] | None" = None) -> list[RunResult | None]:
        """Execute the campaign: skip the runs that finished before, run the
        others on the backend the options choose (each claimed first), wait
        for the runs other processes hold.

        With one job the runs execute one after another in one worker process
        (``in_process``: in this process), so that whatever plugin code does
        (raise, ``sys.exit()``, crash natively, get SIGKILLed) fails only its
        run; a full disk stops the campaign after the run that hit it.

        Args:
            progress: phase/episode progress of the run executing (one job
                only; forwarded from the worker process).
            started: called with each plan when its run is handed to the backend.
            on_result: called with each plan and its final result as it
                arrives (also for the runs skipped as finished before).
            waiting: called with the ``claimed`` results of the runs other
                processes hold whenever that set changes.

        Returns:
            one entry per plan, in the order of ``plans``: its result (whose
            ``file`` is the plan's, as the user named it), or ``None`` for a
            run that ``fail_fast`` kept from starting. Results are matched to
            plans by their task's key, never by file name.

        Raises:
            InputError: the Dask scheduler cannot be reached.
            StoreError: the store cannot be opened.
        """
        out: list[RunResult | None] = [None] * len(self.plans)
        options = self.options
        todo = []
        for i, (plan, decision) in enumerate(zip(self.plans, self.decisions())):
            if decision.action == "skip" and decision.instance is None:  # finished before (not: running)
                out[i] = RunResult(uid=plan.uid, status="skipped", instance_id=decision.instance_id,
                                   file=plan.file, note=decision.note)
                if on_result is not None:
                    on_result(plan, out[i])  # type: ignore[arg-type]
            else:  # decided again under its claim: another process may change it meanwhile
                todo.append(i)
        if not todo:
            return out
        worker_options = options.for_workers()
        position: dict[str, int] = {}
        tasks = []
        for i in todo:
            task = task_for(self.plans[i], worker_options)
            position[task.key] = i
            tasks.append(task)

        def handed(task: RunTask) -> None:
            if started is not None:
                started(self.plans[position[task.key]])

        progress = None if options.remote else progress  # results only from remote backends
        # a SIGINT inherited ignored (nohup ... &) still stops the campaign like Ctrl-C; a run's
        # warnings travel in its result (RunResult.warnings), not as Python warnings here
        given = self._backend
        with sigint_as_ctrl_c(), warnings.catch_warnings(), \
                (contextlib.nullcontext(given) if given is not None
                 else make_backend(options, forward_progress=progress is not None, store=self._store)) as backend:
            warnings.simplefilter("ignore", RunWarning)
            for result in run_all(backend, tasks, fail_fast=options.fail_fast, started=handed,
                                  waiting=waiting, progress=progress):
                i = position[str(result.task_key)]
                result.file = self.plans[i].file  # as the user named it
                out[i] = result
                if on_result is not None:
                    on_result(self.plans[i], result)
        return out


def all_done(results: Sequence[RunResult]) -> bool:
    """Whether no result is a failure (finished, finished before, or run by another process)."""
    return all(r.status in DONE_STATUSES for r in results)


def _skipped(uid: str, instance: int, file: str | None) -> RunResult:
    return RunResult(uid=uid, status="skipped", instance_id=instance, file=file,
                     note=f"skipped: finished earlier (instance {instance})")


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
    from (:attr:`xdoe.execution.RunPlan.file_sha256`); the same bytes are the
    same document, hence the same run version. A file not found this way
    (new, changed, reformatted, unreadable, or whose uid is its file name)
    is left to the campaign, which loads it and skips it by its content hash.

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
    finished = store.runs.finished_file_hashes(known)
    todo: list[int] = []
    skipped: list[tuple[int, RunResult]] = []
    for i, (path, digest) in enumerate(zip(files, digests)):
        hit = finished.get(digest) if digest is not None else None
        if hit is None:
            todo.append(i)
        else:
            skipped.append((i, _skipped(hit[0], hit[1], str(Path(path)))))
    return todo, skipped
