"""Running a campaign on a SLURM cluster as job arrays: :class:`SlurmBackend`
(behind the :class:`~xdoe.campaign.backends.Backend` interface) and its job
handles (:class:`SlurmJob`).

``xrun submit FILES... --slurm`` groups the run files into *tasks*
(``runs_per_task`` files each, in the order given), cuts the task list into
*chunks* that fit the cluster's ``MaxArraySize`` and submits one job array per
chunk with ``sbatch``. Array task ``i`` of a chunk with offset ``o`` runs task
``i + o``: it reads line ``i + o + 1`` of the submission's task list (absolute
paths separated by tabs) and runs ``xrun experiment-start`` on those files with
the submitter's Python interpreter, so that the same virtual environment is
used on the compute nodes. Every task writes to one shared store, which is why
a file-based SQLite store is refused (:func:`check_store_for_slurm`).

Layout of one submission (``<output>`` is the directory holding the run files)::

    <output>/slurm/<YYYYmmdd-HHMMSS>/tasks.tsv          one line per task
    <output>/slurm/<YYYYmmdd-HHMMSS>/array-000.sbatch   one script per chunk
    <output>/slurm/<YYYYmmdd-HHMMSS>/jobs.json          job ids, once submitted
    <output>/slurm/<YYYYmmdd-HHMMSS>/logs/%A_%a.out     one log per array task

SLURM's job-array semantics: https://slurm.schedmd.com/job_array.html (array
indices range over ``0 .. MaxArraySize - 1``; ``%K`` limits how many tasks of
an array run at once).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Callable, Iterator, Sequence

from xdoe.campaign._tasks import RunTask
from xdoe.campaign.backends._base import Backend, ProgressCallback, failed_result
from xdoe.campaign.backends._sbatch import (
    _COMMAND_TIMEOUT,
    ArrayChunk,
    SlurmError,
    SlurmOptions,
    SubmittedArray,
    _cluster_max_array_size,
    check_store_for_slurm,
    masked_url,
    plan_arrays,
    render_sbatch,
    task_list_text,
)
from xdoe.errors import InputError
from xdoe.execution import RunResult
from xdoe.store import Store


__all__ = ["submit", "queued", "wait_for", "job_states", "earlier_arrays", "SlurmJob", "SlurmBackend"]


# --- submitting --------------------------------------------------------------------------


def _output_dir(files: Sequence[Path]) -> Path:
    parents = {f.parent for f in files}
    if len(parents) == 1:
        return parents.pop()
    return Path(os.path.commonpath([str(p) for p in parents]))


def _run(argv: list[str], *, cwd: Path | None = None, what: str) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            argv, capture_output=True, text=True, timeout=_COMMAND_TIMEOUT, check=True, cwd=cwd
        )
    except FileNotFoundError:
        raise SlurmError(
            f"{argv[0]} not found on PATH: {what} needs the SLURM client commands; run on a login "
            "node of the cluster (a local test cluster: scripts/slurm.sh start, then "
            'eval "$(scripts/slurm.sh env)")'
        ) from None
    except subprocess.TimeoutExpired:
        raise SlurmError(f"{shlex.join(argv)} did not answer within {_COMMAND_TIMEOUT:.0f} s") from None
    except subprocess.CalledProcessError as exc:
        detail = (exc.stderr or exc.stdout or "").strip() or "no output"
        raise SlurmError(f"{shlex.join(argv)} failed (exit {exc.returncode}): {detail}") from None


def _write_private(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)


def submit(
    run_files: Sequence[Path | str],
    options: SlurmOptions,
    *,
    dry_run: bool = False,
    workdir: Path | None = None,
    submission_dir: Path | None = None,
    max_array_size: int | None = None,
    sbatch: str = "sbatch",
) -> list[SubmittedArray]:
    """Write the task list and the sbatch scripts, then submit one job array per chunk.

    Args:
        run_files: run documents, in the order their tasks should be numbered.
        options: resources, store and command.
        dry_run: render the scripts but write nothing and submit nothing.
        workdir: working directory of the tasks (``--chdir``) and of ``sbatch``;
            default the current directory, so that relative paths in the store
            URL or the run documents resolve as on the submitting node.
        submission_dir: where to write; default ``<output>/slurm/<YYYYmmdd-HHMMSS>``
            with ``<output>`` the (common) directory of the run files. Written
            atomically: a temporary directory beside it is renamed into place.
        max_array_size: the cluster's ``MaxArraySize``; default :func:`max_array_size`.
        sbatch: the sbatch executable.

    Returns:
        One :class:`SubmittedArray` per chunk, in order; ``job_id`` is ``None`` in a dry run.

    Raises:
        InputError: a run file is missing; the store is unsuitable
            (:func:`check_store_for_slurm`); the submission directory exists.
        SlurmError: sbatch is missing, fails or prints no job id. When no
            array was submitted, the submission directory is removed again;
            otherwise the arrays submitted before the failure are named in the
            message (and in ``jobs.json``) so that they can be cancelled.
    """
    files = [Path(f).resolve() for f in run_files]
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        raise InputError(f"run file(s) not found: {shown}")
    if options.task_command is None or options.store_url is not None:
        check_store_for_slurm(options.store_url, options.allow_sqlite)
    workdir = (workdir or Path.cwd()).resolve()
    size = max_array_size if max_array_size is not None else _cluster_max_array_size()
    chunks = plan_arrays(files, options.runs_per_task, size)
    n_tasks = sum(c.size for c in chunks)

    if submission_dir is None:
        submission_dir = _output_dir(files) / "slurm" / datetime.now().strftime("%Y%m%d-%H%M%S")
        while submission_dir.exists():  # two submissions within one second
            stem, _, count = submission_dir.name.partition("+")
            submission_dir = submission_dir.with_name(f"{stem}+{int(count or 0) + 1}")
    submission_dir = submission_dir.resolve()
    if submission_dir.exists():
        raise InputError(f"{submission_dir} exists already; choose another submission directory")
    task_list = submission_dir / "tasks.tsv"
    tasks_text = task_list_text(chunks)
    scripts = [
        (
            submission_dir / f"array-{chunk.number:03d}.sbatch",
            chunk,
            render_sbatch(chunk, options, task_list, workdir=workdir, n_tasks=n_tasks),
        )
        for chunk in chunks
    ]
    if dry_run:
        return [SubmittedArray(chunk, path, text, None) for path, chunk, text in scripts]

    submission_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{submission_dir.name}.", dir=submission_dir.parent))
    try:
        _write_private(tmp / "tasks.tsv", tasks_text)
        for path, _, text in scripts:
            _write_private(tmp / path.name, text)
        (tmp / "logs").mkdir()
        tmp.chmod(0o755)
        tmp.rename(submission_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise

    submitted: list[SubmittedArray] = []

    def record() -> None:
        jobs = {
            "store": masked_url(options.store_url),
            "workdir": str(workdir),
            "tasks": n_tasks,
            "runs": len(files),
            "arrays": [
                {"job_id": s.job_id, "script": s.script_path.name, "offset": s.chunk.offset, "size": s.chunk.size}
                for s in submitted
            ],
        }
        tmp_json = submission_dir / ".jobs.json.tmp"
        tmp_json.write_text(json.dumps(jobs, indent=2) + "\n", encoding="utf-8")
        tmp_json.replace(submission_dir / "jobs.json")

    try:
        for path, chunk, text in scripts:
            try:
                proc = _run([sbatch, "--parsable", str(path)], cwd=workdir, what="submitting to SLURM")
                job_id = proc.stdout.strip().split(";")[0]
                if not job_id.isdigit():
                    raise SlurmError(f"sbatch {path} printed no job id: {proc.stdout.strip()!r}")
            except SlurmError as exc:
                if not submitted:  # nothing to keep track of
                    shutil.rmtree(submission_dir, ignore_errors=True)
                    raise
                record()
                ids = " ".join(s.job_id or "" for s in submitted)
                raise SlurmError(
                    f"{exc} (already submitted: job arrays {ids}, recorded in {submission_dir / 'jobs.json'}; "
                    f"cancel them with scancel {ids})"
                ) from None
            submitted.append(SubmittedArray(chunk, path, text, job_id))
    except KeyboardInterrupt:  # Ctrl-C between two arrays: the ones submitted are recorded
        if submitted:
            record()
        raise
    record()
    return submitted


# --- waiting ------------------------------------------------------------------------------


def queued(job_ids: Sequence[str], *, squeue: str = "squeue") -> dict[str, dict[str, int]]:
    """The tasks of the jobs (arrays included) still in SLURM's queue, by state.

    One ``squeue -h -r -j ID,...`` call (``-r``: one line per array task,
    pending ones included); a job id the controller has already forgotten
    counts as gone.

    Returns:
        job id -> ``{state: tasks}`` (e.g. ``{"PENDING": 3, "RUNNING": 2}``)
        of each job with a task pending, running, completing...; a job that
        left the queue is absent.

    Raises:
        SlurmError: squeue is missing or fails.
    """
    ids = [str(j) for j in job_ids]
    if not ids:
        return {}
    try:
        proc = _run([squeue, "-h", "-r", "-o", "%F %T", "-j", ",".join(ids)], what="reading the queue")
    except SlurmError as exc:
        if "Invalid job id" in str(exc):  # every id forgotten (older SLURM: an error)
            return {}
        raise
    out: dict[str, dict[str, int]] = {}
    for line in proc.stdout.splitlines():
        job, _, state = line.strip().partition(" ")
        if job in ids:
            states = out.setdefault(job, {})
            states[state] = states.get(state, 0) + 1
    return out


def wait_for(job_ids: Sequence[str], timeout: float | None = 600.0, *, poll: float = 0.5,
             squeue: str = "squeue", progress: Callable[[dict[str, dict[str, int]]], None] | None = None) -> None:
    """Block until none of the jobs (arrays included) is pending, running or
    completing (:func:`queued`, every ``poll`` seconds).

    Args:
        timeout: seconds to wait at most; ``None``: no limit.
        progress: called with :func:`queued`'s answer whenever it changed
            (first with the jobs as found, last with ``{}``).

    Raises:
        SlurmError: the jobs are still queued after ``timeout`` seconds, or squeue fails.
    """
    ids = [str(j) for j in job_ids]
    deadline = None if timeout is None else time.monotonic() + timeout
    last: dict[str, dict[str, int]] | None = None
    while True:
        now = queued(ids, squeue=squeue) if ids else {}
        if progress is not None and now != last:
            progress(now)
        last = now
        if not now:
            return
        if deadline is not None and time.monotonic() > deadline:
            raise SlurmError(f"jobs still queued after {timeout:.0f} s: {' '.join(sorted(now)[:10])}")
        time.sleep(poll)


def job_states(job_id: str, *, scontrol: str = "scontrol") -> dict[str, str]:
    """Final (or current) state of each task of a job array, from ``scontrol show job``.

    Returns:
        ``{array task id: JobState}``, e.g. ``{"0": "COMPLETED", "1": "FAILED"}``;
        tasks cancelled together while pending share one key such as ``"2-5"``.
        Without accounting, the controller forgets finished jobs after its
        ``MinJobAge`` (300 s by default).

    Raises:
        SlurmError: scontrol is missing or fails (e.g. the job is unknown).
    """
    proc = _run([scontrol, "show", "job", "-o", str(job_id)], what="reading job states")
    states: dict[str, str] = {}
    for line in proc.stdout.splitlines():
        fields = dict(m.groups() for m in re.finditer(r"(\w+)=(\S*)", line))
        if "JobState" in fields:
            states[fields.get("ArrayTaskId", fields.get("JobId", ""))] = fields["JobState"]
    return states


def earlier_arrays(files: Sequence[Path], *, squeue: str = "squeue") -> list[SubmittedArray]:
    """The job arrays of earlier submissions of ``files``' folder (``<output>/slurm/*/``:
    ``jobs.json`` and ``tasks.tsv``, as :func:`submit` writes them) that are
    still queued (:func:`queued`) and hold at least one of ``files``, oldest
    first: a driver started again waits for them instead of submitting their
    runs a second time. A submission without ``jobs.json`` (its submitter
    killed between ``sbatch`` and the record) is not found: its runs are
    submitted again, and the store's claims let each run once.

    Returns:
        one :class:`SubmittedArray` per array (its chunk's tasks read back
        from ``tasks.tsv``, its script's text from its file).

    Raises:
        SlurmError: squeue is missing or fails.
    """
    if not files:
        return []
    wanted = {Path(f).resolve() for f in files}
    found: list[SubmittedArray] = []
    for jobs_file in sorted((_output_dir([Path(f).resolve() for f in files]) / "slurm").glob("*/jobs.json")):
        folder = jobs_file.parent
        try:
            jobs = json.loads(jobs_file.read_text(encoding="utf-8"))
            lines = (folder / "tasks.tsv").read_text(encoding="utf-8").splitlines()
        except (OSError, ValueError):  # unreadable: as if absent
            continue
        tasks = [tuple(Path(p) for p in line.split("\t")) for line in lines]
        for number, entry in enumerate(jobs.get("arrays", [])):
            offset, size = int(entry["offset"]), int(entry["size"])
            chunk = ArrayChunk(number=number, offset=offset, tasks=tuple(tasks[offset:offset + size]))
            if entry.get("job_id") and wanted.intersection(p for task in chunk.tasks for p in task):
                script = folder / entry["script"]
                text = script.read_text(encoding="utf-8") if script.is_file() else ""
                found.append(SubmittedArray(chunk, script, text, str(entry["job_id"])))
    alive = queued([a.job_id for a in found if a.job_id], squeue=squeue)
    return [a for a in found if a.job_id in alive]


@dataclass
class SlurmJob:
    """The handle of one submitted job array (``job_id`` is ``None`` in a dry run).

    Attributes:
        array: what was submitted (chunk, script path and text, job id).
    """

    array: SubmittedArray

    @property
    def job_id(self) -> str | None:
        """SLURM's job id of the array."""
        return self.array.job_id

    @property
    def chunk(self) -> ArrayChunk:
        """The tasks of the submission this array runs."""
        return self.array.chunk

    def states(self) -> dict[str, str]:
        """``{array task id: JobState}`` (:func:`job_states`); empty in a dry run."""
        return {} if self.job_id is None else job_states(self.job_id)

    def done(self) -> bool:
        """Whether no task of the array is pending, running or completing."""
        if self.job_id is None:
            return True
        try:
            wait_for([self.job_id], timeout=0.0)
        except SlurmError:
            return False
        return True

    def wait(self, timeout: float = 600.0, *, poll: float = 0.5) -> None:
        """Block until the array left the queue (:func:`wait_for`)."""
        if self.job_id is not None:
            wait_for([self.job_id], timeout, poll=poll)


class SlurmBackend(Backend):
    """Runs tasks as SLURM job arrays of ``xrun experiment-start`` (see the
    module docstring); the array tasks record into the shared store, from
    which :meth:`map_runs` reads the results once the arrays left the queue.

    Args:
        options: partition, time, memory, runs per task, the store URL...
        dry_run: write nothing, submit nothing; :meth:`submit_files` returns
            handles without job ids (their scripts in ``array.script``).
        timeout: seconds :meth:`map_runs` waits for the arrays.

    Raises:
        InputError: the store is unsuitable for many nodes
            (:func:`check_store_for_slurm`).
    """

    remote = True

    def __init__(self, options: SlurmOptions, *, dry_run: bool = False, timeout: float = 3600.0) -> None:
        check_store_for_slurm(options.store_url, options.allow_sqlite)
        self.options = options
        self.dry_run = dry_run
        self.timeout = timeout

    def submit_files(self, files: Sequence[Path], *, max_array_size: int | None = None) -> list[SlurmJob]:
        """Submit run files as job arrays (:func:`submit`); one handle per array.

        Raises:
            InputError: a run file is missing, the submission directory exists.
            SlurmError: sbatch is missing or fails.
        """
        arrays = submit(files, self.options, dry_run=self.dry_run, max_array_size=max_array_size)
        return [SlurmJob(a) for a in arrays]

    def queued_jobs(self, files: Sequence[Path]) -> list[SlurmJob]:
        """Handles of the arrays earlier submissions of ``files``' folder left
        in the queue holding some of ``files`` (:func:`earlier_arrays`); none in a dry run.

        Raises:
            SlurmError: squeue is missing or fails.
        """
        return [] if self.dry_run else [SlurmJob(a) for a in earlier_arrays(files)]

    def wait(self, jobs: Sequence[SlurmJob], timeout: float | None = None, *, poll: float = 1.0,
             progress: Callable[[dict[str, dict[str, int]]], None] | None = None) -> None:
        """Block until the arrays left the queue (:func:`wait_for`: ``progress``
        hears job id -> ``{state: tasks}`` whenever it changed); ``timeout``
        in seconds, ``None``: no limit. Ctrl-C (``KeyboardInterrupt``) stops
        waiting; the arrays keep running.

        Raises:
            SlurmError: still queued after ``timeout``, or squeue fails.
        """
        wait_for([j.job_id for j in jobs if j.job_id is not None], timeout, poll=poll, progress=progress)

    def map_runs(self, tasks: Sequence[RunTask], *, fail_fast: bool = False,
                 progress: "ProgressCallback | None" = None,
                 started: Callable[[RunTask], None] | None = None) -> Iterator[RunResult]:
        """Submit the tasks' files, wait for the arrays, then yield each run's
        result from the store (its newest instance); ``fail_fast`` and
        ``progress`` do not apply to arrays already queued."""
        for task in tasks:
            if started is not None:
                started(task)
        jobs = self.submit_files([Path(t.file) for t in tasks])
        if self.dry_run:
            return
        for job in jobs:
            job.wait(self.timeout)
        with Store(self.options.store_url) as store:
            for task in tasks:
                inst = store.runs.latest_instance(task.uid, task.content_hash)
                if inst is None:
                    yield failed_result(task, "the SLURM task recorded no instance (see its log)")
                    continue
                yield RunResult(uid=task.uid, status=inst.status, instance_id=inst.id, file=task.file,
                                error=inst.error, results_dir=inst.results_dir, task_key=task.key)
