"""``xrun status`` and ``xrun export``: look at a campaign in the store
(``xrun tree`` is in :mod:`xdoe.cli._tree`).

Exit codes: ``status`` 0 when every run finished, 1 otherwise (something is
missing, running, failed or interrupted: scripts can wait on it), 2 for
unusable input (no such folder or experiment); ``export`` 0 when the file
was written, 1 when there is nothing to export (the reason is printed), 2 for
an unknown suffix, missing pyarrow or unknown experiment. None of them (nor
``xrun tree``) creates a store: a missing one is exit 2 ("no store at ...").
A store that cannot be read: 1.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Callable

import click

from xdoe.cli._common import EXIT_FAILED, EXIT_OK, fail, handle_errors, store_option
from xdoe.store import HEARTBEAT_TIMEOUT

__all__ = ["status_command", "export_command"]

F = Callable[..., Any]


def _experiment_option(func: F) -> F:
    return click.option("--experiment", "-e", metavar="UID", default=None,
                        help="Only the runs of this experiment.")(func)


_STYLES = {"finished": "green", "running": "yellow", "failed": "bold red",
           "interrupted": "magenta", "missing": "dim", "invalid": "red"}


def _open_store(store_url: str | None) -> Any:
    """The existing store (read-only commands never create one).

    Raises:
        InputError: there is no store at the URL (exit 2), with the way out.
    """
    from xdoe.errors import NoStoreError
    from xdoe.store import Store

    try:
        return Store(store_url, create=False)
    except NoStoreError as exc:
        raise NoStoreError(f"{exc} — run `xrun experiment-start` first or pass --store") from None


def _when(value: Any) -> str:
    return "" if value is None else value.strftime("%Y-%m-%d %H:%M:%S")


@click.command("status", short_help="Show the status of every run of a campaign, and the counts.")
@click.argument("output_dir", required=False, type=click.Path(path_type=Path))
@_experiment_option
@store_option
@click.option("--heartbeat-timeout", default=HEARTBEAT_TIMEOUT, show_default=True, metavar="SECONDS",
              type=click.FloatRange(min=0), help="A running instance without a heartbeat for this "
              "long (or whose process is gone, on this host) counts as interrupted.")
@click.option("--only", "only", multiple=True, metavar="STATUS",
              type=click.Choice(["finished", "running", "failed", "interrupted", "missing", "invalid"]),
              help="List only runs with this status (repeatable); the counts cover all runs.")
@click.option("--quiet", "-q", is_flag=True, help="Print only the counts.")
@handle_errors
def status_command(output_dir: Path | None, experiment: str | None, store_url: str | None,
                   heartbeat_timeout: float, only: tuple[str, ...], quiet: bool) -> None:
    """Status of every run of a campaign: finished, running, failed (with its
    one-line reason), interrupted or missing, and the counts.

    The runs are those of OUTPUT_DIR (an xgen output folder: design.csv and
    run-*.yaml; a run counts as done only for the document as it is now) or,
    without it, those in the store (of --experiment when given).

    Exit 0 when every run finished, 1 otherwise, 2 for unusable input.
    """
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from xdoe.store._status import campaign_status, summarize

    with _open_store(store_url) as store:
        status = campaign_status(store, output_dir, experiment, heartbeat_timeout=heartbeat_timeout)
    console = Console()
    if not quiet:
        table = Table(title=f"xrun status · {store.url}")
        table.add_column("run", no_wrap=True)
        table.add_column("point", justify="right")
        table.add_column("rep", justify="right")
        table.add_column("status", no_wrap=True)
        table.add_column("instance", justify="right")
        table.add_column("started (UTC)", no_wrap=True)
        table.add_column("reason", overflow="fold", ratio=1)
        for r in status.runs:
            if only and r.status not in only:
                continue
            style = _STYLES.get(r.status, "")
            table.add_row(
                escape(r.run), "" if r.design_point is None else str(r.design_point),
                "" if r.repetition is None else str(r.repetition),
                f"[{style}]{r.status}[/{style}]" if style else r.status,
                "" if r.instance_id is None else str(r.instance_id), _when(r.start),
                escape(r.reason or ""))
        console.print(table)
    console.print(summarize(status.counts), markup=False, highlight=False)
    sys.exit(EXIT_OK if status.all_finished else EXIT_FAILED)


@click.command("export", short_help="Write one row per episode, worker and agent to CSV or Parquet.")
@_experiment_option
@click.option("--output", "-o", "output", required=True, metavar="FILE.csv|FILE.parquet",
              type=click.Path(dir_okay=False, path_type=Path),
              help="The table to write; the suffix picks the format (Parquet needs pyarrow).")
@click.option("--all-instances", is_flag=True,
              help="Every run instance (adds an 'instance' column) instead of, per run, the latest "
                   "finished one (else the latest).")
@store_option
@handle_errors
def export_command(experiment: str | None, output: Path, all_instances: bool,
                   store_url: str | None) -> None:
    """Write one long table, one row per episode, worker and agent: experiment,
    run, design_point, repetition, seed, one column per factor, phase, mode,
    worker, episode, agent, steps, reward, objective, wall_time.

    Streams from the store (memory stays flat); the file appears only when complete.
    """
    from xdoe.store import export_episodes
    from xdoe.store._export import check_experiment, selected_phases

    scope = f"experiment {experiment!r} in store" if experiment else "store"
    with _open_store(store_url) as store:
        check_experiment(store, experiment)
        if not selected_phases(store, experiment, all_instances=all_instances):
            fail(f"nothing to export: no run of {scope} {store.url} has recorded a phase "
                 f"(run `xrun experiment-start` first); {output} not written", EXIT_FAILED)
        result = export_episodes(store, output, experiment, all_instances=all_instances)
    click.echo(f"wrote {result.rows:,} rows of {result.runs:,} runs ({len(result.columns)} columns) "
               f"to {result.path} in {result.seconds:.1f} s")
    if result.rows == 0:
        fail(f"no episodes matched in {scope} {store.url}: the recorded phases have no episode "
             f"(only the header was written)", EXIT_FAILED)
