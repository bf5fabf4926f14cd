"""Running a campaign on a SLURM cluster as job arrays.

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
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Sequence

from xdoe.errors import InputError, XdoeError

__all__ = [
    "DEFAULT_MAX_ARRAY_SIZE",
    "SlurmError",
    "SlurmOptions",
    "ArrayChunk",
    "SubmittedArray",
    "max_array_size",
    "plan_arrays",
    "render_sbatch",
    "check_store_for_slurm",
    "submit",
    "wait_for",
    "job_states",
]

DEFAULT_MAX_ARRAY_SIZE = 1001
"""SLURM's default ``MaxArraySize`` (indices 0..1000), used when ``scontrol`` cannot be asked."""

_COMMAND_TIMEOUT = 60.0  # seconds for one sbatch/squeue/scontrol call
_SAFE_VALUE = re.compile(r"^[^\s'\"\\`$;]+$")  # partition, time, mem: one plain word


class SlurmError(XdoeError):
    """A SLURM command is missing, failed or timed out (the CLI exits with code 1)."""


@dataclass(frozen=True)
class SlurmOptions:
    """How to submit the job arrays.

    Attributes:
        partition: ``--partition``; ``None``: the cluster's default partition.
        time: ``--time`` limit per array task, SLURM syntax (``30``, ``2:00:00``, ``1-00:00:00``).
        cpus_per_task: ``--cpus-per-task``; with ``runs_per_task > 1`` the task
            runs that many of its runs at once (``xrun experiment-start --jobs``).
        mem: ``--mem`` per task, SLURM syntax (``4G``, ``500M``).
        array_parallelism: at most this many tasks of one array run at once (``--array=0-K%P``).
        runs_per_task: run files per array task (>= 1), run one after another.
        store_url: SQLAlchemy URL of the shared store, exported as ``XRUN_STORE``
            in the scripts (they are written with mode 0600).
        allow_sqlite: accept a ``sqlite:`` store (see :func:`check_store_for_slurm`).
        results: directory for results files (``xrun experiment-start --results``).
        job_name: ``--job-name`` of every array.
        sbatch_args: further ``#SBATCH`` options, each one word such as ``--account=proj1``.
        python: interpreter the tasks run; default the submitter's (``sys.executable``).
        task_command: shell command the run files are appended to, replacing
            ``<python> -m xdoe.cli._xrun experiment-start --store "$XRUN_STORE" --quiet``;
            ``{python}`` in it is replaced by the shell-quoted interpreter.

    Raises:
        InputError: a count below 1, or a value that is not one plain word
            (it would change the script's meaning).
    """

    partition: str | None = None
    time: str | None = None
    cpus_per_task: int | None = None
    mem: str | None = None
    array_parallelism: int | None = None
    runs_per_task: int = 1
    store_url: str | None = None
    allow_sqlite: bool = False
    results: Path | None = None
    job_name: str = "xrun"
    sbatch_args: tuple[str, ...] = ()
    python: str = field(default_factory=lambda: sys.executable)
    task_command: str | None = None

    def __post_init__(self) -> None:
        for name in ("cpus_per_task", "array_parallelism", "runs_per_task"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or value < 1):
                raise InputError(f"SLURM option {name.replace('_', '-')}: expected an integer >= 1, got {value!r}")
        for name in ("partition", "time", "mem", "job_name"):
            value = getattr(self, name)
            if value is not None and not _SAFE_VALUE.match(value):
                raise InputError(
                    f"SLURM option {name.replace('_', '-')}: {value!r} is not one plain word "
                    "(no spaces, quotes, '$', ';' or backslashes)"
                )
        for arg in self.sbatch_args:
            if not arg.startswith("-") or "\n" in arg or "\r" in arg:
                raise InputError(f"extra sbatch option {arg!r}: expected one option such as --account=proj1")
        object.__setattr__(self, "sbatch_args", tuple(self.sbatch_args))


@dataclass(frozen=True)
class ArrayChunk:
    """One job array: ``tasks[i]`` runs as array index ``i``, which is task ``offset + i`` overall.

    Attributes:
        number: 0-based number of the chunk in its submission.
        offset: index of the chunk's first task in the submission's task list.
        tasks: per array index, the run files (absolute paths) that task runs.
    """

    number: int
    offset: int
    tasks: tuple[tuple[Path, ...], ...]

    @property
    def size(self) -> int:
        """Number of array tasks (the array indices are ``0 .. size - 1``)."""
        return len(self.tasks)

    @property
    def n_runs(self) -> int:
        """Number of run files in the chunk."""
        return sum(len(t) for t in self.tasks)


@dataclass(frozen=True)
class SubmittedArray:
    """A job array as submitted (or, in a dry run, as it would be).

    Attributes:
        chunk: the tasks of the array.
        script_path: where the sbatch script is (in a dry run: would be) written.
        script: the script's text.
        job_id: SLURM's job id of the array; ``None`` in a dry run.
    """

    chunk: ArrayChunk
    script_path: Path
    script: str
    job_id: str | None


# --- cluster configuration -------------------------------------------------------


def max_array_size(scontrol: str = "scontrol") -> int:
    """The cluster's ``MaxArraySize`` from ``scontrol show config``.

    Array indices may range over ``0 .. MaxArraySize - 1``. Returns
    :data:`DEFAULT_MAX_ARRAY_SIZE` (1001, SLURM's default) when ``scontrol`` is
    missing, fails, times out or does not report the value.
    """
    try:
        proc = subprocess.run(
            [scontrol, "show", "config"], capture_output=True, text=True, timeout=_COMMAND_TIMEOUT, check=True
        )
    except (OSError, subprocess.SubprocessError):
        return DEFAULT_MAX_ARRAY_SIZE
    match = re.search(r"^\s*MaxArraySize\s*=\s*(\d+)\s*$", proc.stdout, re.MULTILINE)
    return int(match.group(1)) if match else DEFAULT_MAX_ARRAY_SIZE


_cluster_max_array_size = max_array_size  # submit() has a parameter of that name


# --- planning and rendering ------------------------------------------------------------


def plan_arrays(run_files: Sequence[Path], runs_per_task: int, max_array_size: int) -> list[ArrayChunk]:
    """Group run files into tasks and tasks into job arrays that the cluster accepts.

    Task ``t`` holds ``run_files[t * runs_per_task : (t + 1) * runs_per_task]``
    (the last task may hold fewer). Chunk ``c`` holds tasks
    ``c * max_array_size`` onwards, at most ``max_array_size`` of them, so its
    array indices ``0 .. size - 1`` stay below ``MaxArraySize``; its ``offset``
    is the index of its first task.

    Raises:
        InputError: no run files, ``runs_per_task < 1``, or ``max_array_size < 1``
            (``MaxArraySize = 0`` disables job arrays on the cluster).
    """
    if runs_per_task < 1:
        raise InputError(f"runs per task: expected an integer >= 1, got {runs_per_task}")
    if max_array_size < 1:
        raise InputError(f"the cluster does not accept job arrays (MaxArraySize = {max_array_size})")
    files = [Path(f) for f in run_files]
    if not files:
        raise InputError("no run files to submit")
    tasks = [tuple(files[i : i + runs_per_task]) for i in range(0, len(files), runs_per_task)]
    return [
        ArrayChunk(number=n, offset=start, tasks=tuple(tasks[start : start + max_array_size]))
        for n, start in enumerate(range(0, len(tasks), max_array_size))
    ]


def _default_task_command(options: SlurmOptions) -> str:
    parts = [shlex.quote(options.python), "-m", "xdoe.cli._xrun", "experiment-start", '--store "$XRUN_STORE"', "--quiet"]
    if options.results is not None:
        parts += ["--results", shlex.quote(str(options.results))]
    if options.cpus_per_task and options.cpus_per_task > 1 and options.runs_per_task > 1:
        parts += ["--jobs", str(min(options.cpus_per_task, options.runs_per_task))]
    return " ".join(parts)


def _sbatch_path(path: Path) -> str:
    """A path as an ``#SBATCH`` value: double-quoted when it holds white space."""
    text = str(path)
    if '"' in text:
        raise InputError(f"{text!r}: paths used in sbatch options must not contain double quotes")
    return f'"{text}"' if any(c.isspace() for c in text) else text


def render_sbatch(
    chunk: ArrayChunk,
    options: SlurmOptions,
    task_list_file: Path,
    *,
    log_dir: Path | None = None,
    workdir: Path | None = None,
    n_tasks: int | None = None,
) -> str:
    """The bash sbatch script of one job array.

    Args:
        chunk: the array's tasks and offset (see :func:`plan_arrays`).
        options: resources, store and command.
        task_list_file: the submission's task list (absolute path; line ``t + 1``
            holds task ``t``'s run files separated by tabs).
        log_dir: where ``%A_%a.out`` logs go; default ``<task list's directory>/logs``.
        workdir: ``--chdir`` of the tasks; ``None``: the directory sbatch runs in.
        n_tasks: total tasks of the submission, for the header comment.

    Returns:
        The script text. It contains the store URL (password included) when
        ``options.store_url`` is set.
    """
    log_dir = log_dir if log_dir is not None else task_list_file.parent / "logs"
    array = f"0-{chunk.size - 1}" + (f"%{options.array_parallelism}" if options.array_parallelism else "")
    sbatch = [
        f"--job-name={options.job_name}",
        f"--array={array}",
        f"--output={_sbatch_path(log_dir / '%A_%a.out')}",
    ]
    if workdir is not None:
        sbatch.append(f"--chdir={_sbatch_path(workdir)}")
    if options.partition:
        sbatch.append(f"--partition={options.partition}")
    if options.time:
        sbatch.append(f"--time={options.time}")
    if options.cpus_per_task:
        sbatch.append(f"--cpus-per-task={options.cpus_per_task}")
    if options.mem:
        sbatch.append(f"--mem={options.mem}")
    sbatch.extend(options.sbatch_args)

    first, last = chunk.offset, chunk.offset + chunk.size - 1
    of_total = f" of {n_tasks}" if n_tasks is not None else ""
    per_task = f"{options.runs_per_task} run file{'s' if options.runs_per_task != 1 else ''} per task"
    if options.task_command is None:
        command = _default_task_command(options)
    else:
        command = options.task_command.replace("{python}", shlex.quote(options.python))

    lines = ["#!/bin/bash"]
    lines += [f"#SBATCH {arg}" for arg in sbatch]
    lines += [
        f"# Written by xrun submit: job array {chunk.number}, tasks {first}-{last}{of_total}, {per_task}.",
        "set -euo pipefail",
        "",
    ]
    if options.store_url is not None:
        lines.append(f"export XRUN_STORE={shlex.quote(options.store_url)}")
    lines += [
        f"TASK_LIST={shlex.quote(str(task_list_file))}",
        f"OFFSET={chunk.offset}",
        "TASK=$((SLURM_ARRAY_TASK_ID + OFFSET))",
        "# line TASK+1 of the task list holds this task's run files, separated by tabs",
        'LINE=$(sed -n "$((TASK + 1))p" "$TASK_LIST")',
        'if [ -z "$LINE" ]; then',
        '  echo "xrun task $TASK: no line $((TASK + 1)) in $TASK_LIST" >&2',
        "  exit 2",
        "fi",
        "IFS=$'\\t' read -r -a FILES <<< \"$LINE\"",
        'echo "xrun task $TASK (array $SLURM_ARRAY_JOB_ID index $SLURM_ARRAY_TASK_ID) on $(hostname): ${#FILES[@]} run file(s)"',
        f'{command} "${{FILES[@]}}"',
        "",
    ]
    return "\n".join(lines)


def task_list_text(chunks: Sequence[ArrayChunk]) -> str:
    """The task list: one line per task (in task order), its run files separated by tabs.

    Raises:
        InputError: a path contains a tab or a line break.
    """
    lines = []
    for chunk in chunks:
        for task in chunk.tasks:
            for path in task:
                if any(c in str(path) for c in "\t\n\r"):
                    raise InputError(f"{path!r}: run file paths must not contain tabs or line breaks")
            lines.append("\t".join(str(p) for p in task))
    return "\n".join(lines) + "\n"


# --- the store --------------------------------------------------------------------------


def check_store_for_slurm(url: str | None, allow_sqlite: bool = False) -> str:
    """Check that the store URL suits many tasks on many nodes writing at once.

    Returns:
        ``url`` unchanged.

    Raises:
        InputError: no URL; an in-memory SQLite URL (each task would record
            into its own, lost database); a file-based ``sqlite:`` URL unless
            ``allow_sqlite`` (SQLite relies on file locks, which are unreliable
            on the network file systems compute nodes share, and it serialises
            all writers); a URL SQLAlchemy cannot parse.
    """
    if not url:
        raise InputError(
            "no store for the SLURM tasks: pass --store URL or set XRUN_STORE. The tasks run on many "
            "nodes at once and need a database server they can all reach, e.g. "
            "postgresql+psycopg://user@dbhost/xdoe (a local test server: scripts/postgres.sh start)"
        )
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise InputError(f"store URL {url!r} cannot be parsed: {exc}") from None
    if parsed.get_backend_name() == "sqlite":
        if parsed.database in (None, "", ":memory:"):
            raise InputError(
                f"store {url!r} is an in-memory SQLite database: every SLURM task would record into its "
                "own database, lost when the task ends; use a PostgreSQL URL"
            )
        if not allow_sqlite:
            raise InputError(
                f"store {url!r} is a SQLite file, refused for SLURM: its array tasks write at the same "
                "time from many nodes, SQLite serialises every writer and relies on file locks, which "
                "are unreliable on the network file systems clusters share (corrupt or locked "
                "databases). Use PostgreSQL (--store postgresql+psycopg://user@dbhost/xdoe; a local "
                "test server: scripts/postgres.sh start), or pass --allow-sqlite when every task "
                "runs on one node with a local disk"
            )
    return url


def _masked(url: str | None) -> str | None:
    if url is None:
        return None
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


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
            "store": _masked(options.store_url),
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
    record()
    return submitted


# --- waiting (tests, benchmarks, scripts) --------------------------------------------------


def wait_for(job_ids: Sequence[str], timeout: float = 600.0, *, poll: float = 0.5, squeue: str = "squeue") -> None:
    """Block until none of the jobs (arrays included) is pending, running or completing.

    Polls ``squeue -h -j ID,...``; a job id the controller has already
    forgotten counts as finished.

    Raises:
        SlurmError: the jobs are still queued after ``timeout`` seconds, or squeue fails.
    """
    ids = [str(j) for j in job_ids]
    if not ids:
        return
    deadline = time.monotonic() + timeout
    argv = [squeue, "-h", "-o", "%i %T", "-j", ",".join(ids)]
    while True:
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=_COMMAND_TIMEOUT)
        except FileNotFoundError:
            raise SlurmError(f"{squeue} not found on PATH") from None
        if proc.returncode != 0 and "Invalid job id" not in proc.stderr:
            raise SlurmError(f"{shlex.join(argv)} failed (exit {proc.returncode}): {proc.stderr.strip()}")
        if proc.returncode != 0 or not proc.stdout.strip():
            return
        if time.monotonic() > deadline:
            queued = " ".join(proc.stdout.split()[::2][:10])
            raise SlurmError(f"jobs still queued after {timeout:.0f} s: {queued}")
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
