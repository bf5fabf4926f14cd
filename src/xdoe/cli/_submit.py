"""``xrun submit``: run a campaign's run files as SLURM job arrays.

The command object :data:`submit_command` is added to the ``xrun`` group in
:mod:`xdoe.cli._xrun` (``main.add_command(submit_command)``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import click

from xdoe.cli._common import handle_errors
from xdoe.cli._documents import checked_plans
from xdoe.errors import InputError

if TYPE_CHECKING:
    from xdoe.campaign.backends import SlurmOptions

__all__ = ["submit_command", "expand_run_files", "SLURM_PARAMETERS", "slurm_options", "slurm_settings"]

F = Callable[..., Any]
Decorator = Callable[[F], F]

#: The SLURM options of ``xrun submit`` and ``xrun optimize --slurm``, in
#: ``xrun submit``'s order; the names ``"store"`` and ``"results"`` mark where a command's own
#: ``--store`` and ``--results`` go (:func:`slurm_options`).
_SLURM_OPTIONS: list[Decorator | str] = [
    click.option("--partition", "-p", metavar="P", help="Partition (default: the cluster's default partition)."),
    click.option("--time", "-t", "time_limit", metavar="T",
                 help="Time limit per array task, e.g. 30, 2:00:00, 1-00:00:00."),
    click.option("--cpus-per-task", "-c", type=click.IntRange(min=1), metavar="C", help="CPUs per array task."),
    click.option("--mem", metavar="M", help="Memory per array task, e.g. 4G."),
    click.option("--array-parallelism", type=click.IntRange(min=1), metavar="K",
                 help="At most K tasks of each job array run at once (--array=0-N%K)."),
    click.option("--runs-per-task", type=click.IntRange(min=1), default=1, show_default=True, metavar="R",
                 help="Run files per array task, run one after another (several at once with -c C)."),
    "store",
    click.option("--allow-sqlite", is_flag=True,
                 help="Accept a sqlite:/// store. Only safe when every task runs on one node with a local disk."),
    "results",
    click.option("--job-name", default="xrun", show_default=True, help="SLURM job name of the arrays."),
    click.option("--sbatch-arg", "sbatch_args", multiple=True, metavar="OPT",
                 help="Further sbatch option written into every script, e.g. --sbatch-arg=--account=proj1 "
                      "(repeatable)."),
]


#: the parameter names :func:`slurm_options` gives a command, its own ``store_url`` and ``results``
#: aside: what :func:`slurm_settings` takes besides them
SLURM_PARAMETERS = ("partition", "time_limit", "cpus_per_task", "mem", "array_parallelism", "runs_per_task",
                    "allow_sqlite", "job_name", "sbatch_args")


def slurm_options(*, store: Decorator | None = None, results: Decorator | None = None) -> Decorator:
    """The SLURM options (``-p``, ``-t``, ``-c``, ``--mem``,
    ``--array-parallelism``, ``--runs-per-task``, ``--allow-sqlite``,
    ``--job-name``, ``--sbatch-arg``; the parameters of :func:`slurm_settings`)
    of ``xrun submit`` and ``xrun optimize``, with the command's own ``store``
    and ``results`` options, when given, at their place in ``xrun submit``'s order."""
    own = {"store": store, "results": results}

    def decorate(func: F) -> F:
        for option in reversed(_SLURM_OPTIONS):
            option = own[option] if isinstance(option, str) else option
            if option is not None:
                func = option(func)
        return func

    return decorate


def slurm_settings(*, partition: str | None, time_limit: str | None, cpus_per_task: int | None, mem: str | None,
                   array_parallelism: int | None, runs_per_task: int, allow_sqlite: bool, job_name: str,
                   sbatch_args: tuple[str, ...], store_url: str | None, results: Path | None,
                   run_args: tuple[str, ...] = ()) -> "SlurmOptions":
    """The :class:`~xdoe.campaign.backends.SlurmOptions` of :func:`slurm_options`' values.

    Raises:
        InputError: a value the script cannot hold (:class:`SlurmOptions`).
    """
    from xdoe.campaign.backends import SlurmOptions

    return SlurmOptions(partition=partition, time=time_limit, cpus_per_task=cpus_per_task, mem=mem,
                        array_parallelism=array_parallelism, runs_per_task=runs_per_task, store_url=store_url,
                        allow_sqlite=allow_sqlite, results=results.resolve() if results is not None else None,
                        job_name=job_name, sbatch_args=sbatch_args, run_args=run_args)


def expand_run_files(paths: tuple[str, ...]) -> list[Path]:
    """Run files in the order given; a directory stands for its ``run-*.yaml``
    files, sorted: with an xgen manifest, only those a manifest lists
    (:func:`xdoe._files.folder_run_files`; the others are named in a warning).

    Raises:
        InputError: a path does not exist, or a directory holds no ``run-*.yaml``.
    """
    from xdoe._files import folder_run_files

    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found, unlisted = folder_run_files(path)
            if unlisted:
                shown = ", ".join(p.name for p in unlisted[:5]) + (f" and {len(unlisted) - 5} more" if len(unlisted) > 5 else "")
                click.secho(f"warning: {path}: {len(unlisted)} run file(s) that no manifest lists are left out "
                            f"(added by an interrupted xgen generate? run it again to finish): {shown}",
                            fg="yellow", err=True)
            if not found:
                raise InputError(f"{path}: directory holds no run files (run-*.yaml)"
                                 + (" that its manifest lists" if unlisted else ""))
            files.extend(found)
        elif path.is_file():
            files.append(path)
        else:
            raise InputError(f"{path}: no such file or directory")
    return files


@click.command(
    "submit",
    short_help="Run run documents (files or folders) as SLURM job arrays.",
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=str))
@click.option("--slurm", "use_slurm", is_flag=True, help="Submit SLURM job arrays (the only backend so far; required).")
@slurm_options(
    store=click.option(
        "--store",
        "store_url",
        metavar="URL",
        help="Store shared by all tasks (SQLAlchemy URL), e.g. postgresql+psycopg://user@dbhost/xdoe. "
        "Default: $XRUN_STORE.",
    ),
    results=click.option("--results", type=click.Path(path_type=Path), help="Directory for the runs' results files."),
)
@click.option("--dry-run", is_flag=True, help="Print the scripts; write and submit nothing.")
@handle_errors
def submit_command(
    files: tuple[str, ...],
    use_slurm: bool,
    partition: str | None,
    time_limit: str | None,
    cpus_per_task: int | None,
    mem: str | None,
    array_parallelism: int | None,
    runs_per_task: int,
    store_url: str | None,
    allow_sqlite: bool,
    results: Path | None,
    job_name: str,
    sbatch_args: tuple[str, ...],
    dry_run: bool,
) -> None:
    """Run FILES (run documents, or directories of run-*.yaml) as SLURM job arrays.

    Every array task runs `xrun experiment-start` on its run files with this
    Python interpreter, in the current directory, recording into one shared
    store (PostgreSQL recommended). Arrays are cut below the cluster's
    MaxArraySize. Scripts, task list and logs go to <output>/slurm/<time>/.
    Prints the job ids; watch progress with `xrun status`. Every document is
    read and checked first, as `xrun experiment-start` checks it (exit 2,
    nothing submitted, when one cannot run).

    \b
    Example:
      export XRUN_STORE=postgresql+psycopg://me@dbhost/xdoe
      xrun submit _outputs --slurm -p short -t 1:00:00 --mem 2G --dry-run
    """
    from rich.console import Console

    from xdoe.campaign.backends import SlurmBackend
    from xdoe.store import mask_url

    if not use_slurm:
        raise InputError("choose where to run: --slurm (the only backend of xrun submit so far)")
    store_url = store_url or os.environ.get("XRUN_STORE") or None
    options = slurm_settings(partition=partition, time_limit=time_limit, cpus_per_task=cpus_per_task, mem=mem,
                             array_parallelism=array_parallelism, runs_per_task=runs_per_task,
                             allow_sqlite=allow_sqlite, job_name=job_name, sbatch_args=sbatch_args,
                             store_url=store_url, results=results)
    backend = SlurmBackend(options, dry_run=dry_run)  # checks the store first
    run_files = expand_run_files(files)
    # every document read and checked as experiment-start checks it, here rather than in each array
    # task after its wait in the queue: a document that cannot run is one line, exit 2, nothing submitted
    checked_plans(run_files, store_url=store_url, results=results)
    arrays = [job.array for job in backend.submit_files(run_files)]
    console = Console(stderr=dry_run, highlight=False, emoji=False)
    n_tasks = sum(a.chunk.size for a in arrays)
    if dry_run:
        for a in arrays:
            text = a.script
            if store_url is not None and mask_url(store_url) != store_url:
                text = text.replace(store_url, mask_url(store_url))
            click.echo(f"# ---- {a.script_path} ----")
            click.echo(text, nl=False)
        console.print(
            f"[bold]dry run:[/bold] {len(run_files)} runs in {n_tasks} tasks as {len(arrays)} job "
            f"array(s); nothing written, nothing submitted"
        )
        return
    for a in arrays:
        first, last = a.chunk.offset, a.chunk.offset + a.chunk.size - 1
        console.print(
            f"submitted job array [bold]{a.job_id}[/bold]: tasks {first}-{last} "
            f"({a.chunk.n_runs} runs), script {a.script_path}"
        )
    console.print(
        f"{len(run_files)} runs in {n_tasks} tasks as {len(arrays)} job array(s); "
        f"logs in {arrays[0].script_path.parent / 'logs'}; progress: xrun status"
    )
