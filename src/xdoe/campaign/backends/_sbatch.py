"""SLURM job arrays on paper: options, chunks below ``MaxArraySize``, the
sbatch script and task list, the store check (no cluster is contacted here
except ``scontrol`` for ``MaxArraySize``). Submitting: :mod:`xdoe.campaign.backends._slurm`.

SLURM's job-array semantics: https://slurm.schedmd.com/job_array.html (array
indices range over ``0 .. MaxArraySize - 1``; ``%K`` limits how many tasks of
an array run at once).
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from xdoe.errors import InputError, SlurmError
from xdoe.store import mask_url

__all__ = [
    "DEFAULT_MAX_ARRAY_SIZE",
    "SlurmError",
    "SlurmOptions",
    "ArrayChunk",
    "SubmittedArray",
    "max_array_size",
    "plan_arrays",
    "render_sbatch",
    "task_list_text",
    "check_store_for_slurm",
    "masked_url",
]

DEFAULT_MAX_ARRAY_SIZE = 1001
"""SLURM's default ``MaxArraySize`` (indices 0..1000), used when ``scontrol`` cannot be asked."""

_COMMAND_TIMEOUT = 60.0  # seconds for one sbatch/squeue/scontrol call
_SAFE_VALUE = re.compile(r"^[^\s'\"\\`$;]+$")  # partition, time, mem: one plain word


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
        run_args: further ``xrun experiment-start`` options of that default
            command, one word each (shell-quoted), e.g. ``("--store-steps", "all")``.

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
    run_args: tuple[str, ...] = ()

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
        object.__setattr__(self, "run_args", tuple(str(a) for a in self.run_args))


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
    parts += [shlex.quote(a) for a in options.run_args]
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
    from xdoe.store import url_database

    try:
        backend, database = url_database(url)
    except ValueError as exc:
        raise InputError(f"store URL {url!r} cannot be parsed: {exc}") from None
    if backend == "sqlite":
        if database in (None, "", ":memory:"):
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


def masked_url(url: str | None) -> str | None:
    """``url`` with its password masked (``None`` stays ``None``)."""
    return None if url is None else mask_url(url)


