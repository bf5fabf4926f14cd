"""``xrun experiment-start`` at scale: the options ``--jobs``, ``--dask`` and
``--parallel-workers`` and the routing of run documents to an execution
backend (:mod:`xdoe.campaign`), with one progress display and one list of
results for the summary table. Every document is parsed once, here: the plan
travels with its task to whatever process runs it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

import click

if TYPE_CHECKING:
    from xdoe.execution import RunPlan, RunResult
    from xdoe.store import Store

__all__ = ["scale_options", "run_plans", "all_done", "skip_finished_files"]

F = Callable[..., Any]


def scale_options(func: F) -> F:
    """``--jobs N|auto``, ``--in-process``, ``--dask ADDRESS|local``, ``--parallel-workers``."""
    func = click.option(
        "--in-process", is_flag=True,
        help="With --jobs 1, run the runs in this process instead of one worker process (for "
             "debuggers and profilers; a native crash of plugin code then ends xrun).",
    )(func)
    func = click.option(
        "--parallel-workers", is_flag=True,
        help="Run the workers of phases with worker > 1 in separate processes feeding the one brain "
             "(faster on CPU-bound environments; the order of experiences becomes timing-dependent).",
    )(func)
    func = click.option(
        "--dask", metavar="ADDRESS|local", default=None,
        help="Run each run as a task on a Dask cluster (scheduler address, or 'local' for a local "
             "cluster with --jobs workers); results go to the shared store.",
    )(func)
    func = click.option(
        "--jobs", "-j", metavar="N|auto", default="1", show_default=True,
        help="Run N run documents at once in separate processes ('auto': one per CPU).",
    )(func)
    return func


def all_done(results: Sequence["RunResult"]) -> bool:
    """Whether no result is a failure (finished, finished before, or run by another process)."""
    from xdoe.campaign import DONE_STATUSES

    return all(r.status in DONE_STATUSES for r in results)


def run_plans(
    plans: Sequence["RunPlan"],
    *,
    store_url: str | None,
    results: Path | None,
    store_steps: str,
    fail_fast: bool = False,
    display: Any = None,
    jobs: str | int = 1,
    dask: str | None = None,
    parallel_workers: bool = False,
    rerun: bool = False,
    stale_after: float | None = None,
    file_hashes: Mapping[str, str | None] | None = None,
    in_process: bool = False,
    laydown: bool = True,
    store: "Store | None" = None,
    run_timeout: float | None = None,
) -> list["RunResult | None"]:
    """Execute the loaded plans on the backend ``jobs``/``dask`` choose; every
    run is claimed in the store first (see :mod:`xdoe.campaign`).

    With one job the runs execute one after another in one worker process
    (``in_process``: in this process), so that whatever plugin code does —
    raise, ``sys.exit()``, crash natively, get SIGKILLed — fails only its
    run. Runs another ``xrun`` process holds are waited for, and taken over
    when that process dies (:func:`xdoe.campaign.run_all`); a full disk stops
    the campaign after the run that hit it.

    ``file_hashes`` maps a plan's ``file`` to the sha256 of the bytes it
    was parsed from (:func:`xdoe.execution.load_file_plan`), recorded with
    the run for :func:`skip_finished_files`. ``laydown``: each run's results
    folder gets its ``laydown.svg``. ``store``: the store at ``store_url``,
    already open (:func:`xdoe.cli._xrun.open_store_or_exit`), for the one
    query here; its connections are released before any run starts.
    ``run_timeout``: seconds each run may take (:attr:`RunTask.run_timeout`).

    Returns:
        one entry per plan, in the order of ``plans``: its result (whose
        ``file`` is the plan's, as the user named it), or ``None`` for a run
        that ``fail_fast`` kept from starting. Results are matched to plans
        by their task's key, never by file name (two plans may name the same
        file, or files of the same name in different folders).

    Raises:
        InputError: ``jobs`` is not a positive integer or ``auto``, or the
            Dask scheduler cannot be reached.
        StoreError: the store cannot be opened.
    """
    from xdoe.campaign import DEFAULT_STALE_AFTER, DONE_STATUSES, RunTask, make_backend, parse_jobs, run_all
    from xdoe.store import absolute_url

    n_jobs = parse_jobs(jobs)
    out: list["RunResult | None"] = [None] * len(plans)
    if not plans:
        return out
    remote = bool(dask) or n_jobs > 1
    file_hashes = file_hashes or {}
    todo = list(range(len(plans)))
    if not rerun:  # finished runs are skipped here, with one query for all of them
        _, done_before = _skip_finished(plans, store_url, store)
        for i, result in done_before:
            out[i] = result
            if display is not None:
                display.run_done()
                display.message(f"run {result.uid} {result.note}")
        todo = [i for i in todo if out[i] is None]
    if store is not None:
        store.close()  # its pooled connection: the runs' worker processes fork after this and share nothing
    url = absolute_url(store_url) if remote else store_url
    results_root = None if results is None else str(Path(results).resolve() if remote else results)
    position: dict[str, int] = {}
    tasks = []
    for i in todo:
        p = plans[i]
        task = RunTask(
            file=str(Path(p.file).resolve()) if (remote and p.file) else str(p.file),
            store_url=url, results=results_root, store_steps=store_steps,
            stale_after=DEFAULT_STALE_AFTER if stale_after is None else float(stale_after),
            rerun=rerun, parallel_workers=parallel_workers,
            file_sha256=file_hashes.get(str(p.file)) if p.file else None, laydown=laydown, plan=p,
            run_timeout=run_timeout,
        )
        position[task.key] = i
        tasks.append(task)
    show_progress = display is not None and getattr(display, "enabled", False) and not remote

    def started(task: RunTask) -> None:
        if display is not None and not remote:
            display.run_started(plans[position[task.key]].uid)

    def waiting(held: list["RunResult"]) -> None:
        if display is not None:
            names = ", ".join(f"{r.uid} ({r.error})" for r in held)
            display.message(f"waiting for {len(held)} run(s) another process holds: {names}; "
                            f"taken over if that process dies")

    from xdoe.execution import sigint_as_ctrl_c

    # a SIGINT inherited ignored (nohup ... &) still stops the campaign like Ctrl-C
    with sigint_as_ctrl_c(), make_backend(n_jobs, dask, isolate=not in_process,
                                          forward_progress=show_progress) as backend:
        for result in run_all(backend, tasks, fail_fast=fail_fast, started=started, waiting=waiting,
                              progress=display if show_progress else None):
            i = position[str(result.task_key)]
            result.file = plans[i].file  # as the user named it
            out[i] = result
            if display is not None:
                display.run_done()
                if result.status not in DONE_STATUSES:
                    display.message(f"run {result.uid} {result.status}: {result.error}")
    return out


def skip_finished_files(files: Sequence[str | Path], store_url: str | None
                        ) -> tuple[list[int], list[tuple[int, "RunResult"]]]:
    """:func:`xdoe.campaign.skip_finished_files` with the store at ``store_url``
    (a store that does not exist yet is not created: nothing finished in it)."""
    from xdoe.campaign import skip_finished_files as skip
    from xdoe.errors import NoStoreError
    from xdoe.store import Store

    try:
        with Store(store_url, create=False) as store:  # a new store is created only when a run starts
            return skip(files, store)
    except NoStoreError:
        return list(range(len(files))), []


def _skip_finished(plans: Sequence["RunPlan"], store_url: str | None, opened: "Store | None" = None,
                   ) -> tuple[list["RunPlan"], list[tuple[int, "RunResult"]]]:
    from xdoe.campaign import skip_finished
    from xdoe.store import Store

    if opened is not None:
        return skip_finished(plans, opened)
    with Store(store_url) as store:
        return skip_finished(plans, store)
