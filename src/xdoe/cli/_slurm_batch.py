"""``xrun optimize --slurm``: one batch's run files as SLURM job arrays.

:func:`run_batch` submits the batch's run files that are not finished yet
(through :class:`~xdoe.campaign.backends.SlurmBackend`, the one path of
``xrun submit``), or re-attaches to the arrays an earlier driver of the same
output folder left in the queue holding them, and waits until those arrays
left the queue, saying so as their tasks start and end. The array tasks run
``xrun experiment-start`` into the shared store, whose claims let each run
run once even when it is submitted twice; the driver then reads the
responses from the store as under ``--jobs``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any, Callable, Sequence

import click

from xdoe.cli._ctrl_c import EXIT_INTERRUPTED
from xdoe.cli._jobs import skip_finished_files
from xdoe.errors import InputError

__all__ = ["check_slurm_scale", "run_batch", "task_arguments"]

#: Seconds between two looks at the queue while a batch runs.
POLL = 1.0
#: Seconds between two progress lines (the first and the last are always said).
PROGRESS_EVERY = 10.0


def check_slurm_scale(jobs: str, dask: str | None, in_process: bool) -> None:
    """Refuse the local scale options beside ``--slurm`` (the array tasks run the runs).

    Raises:
        InputError: ``--jobs`` other than 1, ``--dask`` or ``--in-process``.
    """
    clash = [name for name, given in (("--jobs " + jobs.strip(), jobs.strip() != "1"), ("--dask", bool(dask)),
                                      ("--in-process", in_process)) if given]
    if clash:
        raise InputError(f"--slurm runs each batch's runs as SLURM array tasks: {' and '.join(clash)} cannot "
                         f"apply (several runs at once per task: --runs-per-task R -c C)")


def task_arguments(*, store_steps: str, run_timeout: float | None, laydown: bool,
                   parallel_workers: bool) -> tuple[str, ...]:
    """The ``xrun experiment-start`` options each array task runs with, from
    ``xrun optimize``'s own (:attr:`~xdoe.campaign.backends.SlurmOptions.run_args`)."""
    args: list[str] = []
    if store_steps != "none":
        args += ["--store-steps", store_steps]
    if run_timeout is not None:
        args += ["--run-timeout", repr(run_timeout)]
    if not laydown:
        args.append("--no-laydown")
    if parallel_workers:
        args.append("--parallel-workers")
    return tuple(args)


class _Progress:
    """Progress lines of the arrays waited for: their tasks pending, running,
    done; at most one every :data:`PROGRESS_EVERY` seconds, besides the
    first and the last."""

    def __init__(self, say: Callable[[str], None], ids: list[str], tasks: int) -> None:
        self.say = say
        self.ids = ", ".join(ids)
        self.tasks = tasks
        self.last = -float("inf")

    def __call__(self, queued: dict[str, dict[str, int]]) -> None:
        now = time.monotonic()
        if queued and now - self.last < PROGRESS_EVERY and self.last > -float("inf"):
            return
        self.last = now
        counts: dict[str, int] = {}
        for states in queued.values():
            for state, n in states.items():
                counts[state] = counts.get(state, 0) + n
        left = sum(counts.values())
        shown = ", ".join(f"{n} {state.lower()}" for state, n in sorted(counts.items()))
        self.say(f"  job array(s) {self.ids}: {shown + '; ' if shown else ''}"
                 f"{max(self.tasks - left, 0)} of {self.tasks} task(s) left the queue")


def run_batch(backend: Any, files: Sequence[Path], store_url: str, say: Callable[[str], None], resume: str) -> None:
    """Run ``files`` (a batch's run files) as SLURM job arrays and wait for them.

    The files the store holds as finished are left out; the others held by
    arrays still queued from an earlier submission of the folder are waited
    for there ("re-attached to job array N"), the rest submitted with
    ``backend`` (:meth:`~xdoe.campaign.backends.SlurmBackend.submit_files`).
    Returns once every array left the queue, whatever its tasks' end (a run
    that failed leaves its trial waiting: the caller reads the store).

    Ctrl-C while waiting exits 130 saying that the arrays keep running and
    that ``resume`` (the same command) re-attaches to them.

    Raises:
        InputError, SlurmError: as :meth:`~xdoe.campaign.backends.SlurmBackend.submit_files`.
    """
    todo, _ = skip_finished_files(list(files), store_url)
    left = [Path(files[i]) for i in todo]
    if not left:
        return
    from xdoe.execution import sigint_as_ctrl_c

    # a SIGINT inherited ignored (nohup xrun ... &) still stops the waiting, as it stops a campaign
    with sigint_as_ctrl_c():
        _submit_and_wait(backend, left, say, resume)


def _submit_and_wait(backend: Any, left: list[Path], say: Callable[[str], None], resume: str) -> None:
    """:func:`run_batch` of the files still to run."""
    jobs: list[Any] = []
    try:  # from the first array on, Ctrl-C leaves them running and says so
        for job in backend.queued_jobs(left):
            jobs.append(job)
            held = {p for task in job.chunk.tasks for p in task}
            say(f"re-attached to job array {job.job_id} (still queued from {job.array.script_path.parent}): "
                f"{sum(1 for f in left if f.resolve() in held)} run(s) of this batch")
        covered = {p for job in jobs for task in job.chunk.tasks for p in task}
        rest = [f for f in left if f.resolve() not in covered]
        for job in backend.submit_files(rest) if rest else []:
            jobs.append(job)
            first, last = job.chunk.offset, job.chunk.offset + job.chunk.size - 1
            say(f"submitted job array {job.job_id}: tasks {first}-{last} ({job.chunk.n_runs} run(s)), "
                f"logs in {job.array.script_path.parent / 'logs'}")
        ids = [str(job.job_id) for job in jobs]
        backend.wait(jobs, poll=POLL, progress=_Progress(say, ids, sum(job.chunk.size for job in jobs)))
    except KeyboardInterrupt:
        ids = [str(job.job_id) for job in jobs]
        running = (f"job array(s) {', '.join(ids)} keep running (scancel {' '.join(ids)} stops them), and the "
                   f"same command re-attaches to them") if ids else \
            "the same command re-attaches to any job array submitted meanwhile (recorded in its jobs.json)"
        click.echo(f"interrupted: stopped waiting; {running}\n{resume}", err=True)
        sys.exit(EXIT_INTERRUPTED)
