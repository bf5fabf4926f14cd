"""``xrun status`` and ``xrun export``: look at a campaign in the store
(``xrun tree`` is in :mod:`xdoe.cli._tree`).

Both work on one experiment, chosen as every read command chooses it
(:mod:`xdoe.cli._select`: ``[DIR]``, ``-e UID``, ``--store``), or on every
experiment with ``--all``.

Exit codes: ``status`` 0 when every run finished, 1 otherwise (something is
missing, running, failed or interrupted: scripts can wait on it), 2 for
unusable input (no such folder or experiment, several experiments and no
``-e``/``--all``); ``export`` 0 when the file was written, 1 when there is
nothing to export (the reason is printed), 2 for an unknown suffix, missing
pyarrow or unknown experiment. None of them (nor ``xrun tree``) creates a
store: a missing one, or one that cannot be opened, is exit 2. A store that
cannot be read once open: 1.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Callable

import click

from xdoe.cli._common import (EXIT_FAILED, EXIT_INPUT, EXIT_OK, OVERWRITE_HINT, Number, check_output, console, fail,
                              handle_errors, output_options)
from xdoe.cli._select import all_option, choose_experiment, open_store, select_options, store_of
from xdoe.store import HEARTBEAT_TIMEOUT

__all__ = ["status_command", "export_command"]

F = Callable[..., Any]

_STYLES = {"finished": "green", "pruned": "cyan", "running": "yellow", "failed": "bold red",
           "interrupted": "magenta", "missing": "dim", "invalid": "red"}


def _when(value: Any) -> str:
    return "" if value is None else value.isoformat(" ", "seconds")[:19]  # 2026-11-26 04:02:02


@click.command("status", short_help="Show the status of every run of a campaign, and the counts.")
@click.argument("output_dir", required=False, type=click.Path(path_type=Path))
@select_options
@all_option
@click.option("--heartbeat-timeout", default=HEARTBEAT_TIMEOUT, show_default=True, metavar="SECONDS",
              type=Number(min=0, infinite=True), help="A running instance without a heartbeat for this "
              "long (or whose process is gone, on this host) counts as interrupted.")
@click.option("--only", "only", multiple=True, metavar="STATUS",
              type=click.Choice(["finished", "pruned", "running", "failed", "interrupted", "missing", "invalid"]),
              help="List only runs with this status (repeatable); the counts cover all runs.")
@click.option("--quiet", "-q", is_flag=True, help="Print only the counts.")
@click.option("--run", "run_uid", metavar="UID", default=None,
              help="Only this run, with its full error and traceback (the table cuts reasons to one line).")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True,
              help="json: one object with every run (full reasons) and the counts, for scripts.")
@handle_errors
def status_command(output_dir: Path | None, experiment: str | None, store_url: str | None, every: bool,
                   heartbeat_timeout: float, only: tuple[str, ...], quiet: bool, run_uid: str | None,
                   fmt: str) -> None:
    """Status of every run of a campaign: finished, running, failed (with its
    one-line reason), interrupted or missing, and the counts.

    The runs are those of one experiment's design in OUTPUT_DIR (an xgen
    output folder: its manifest, design table and run files; a run counts as
    done only for the document as it is now) or, without it, its runs in the
    store; -e UID chooses the experiment where there are several, --all
    takes every one. OUTPUT_DIR may also be a run uid (when no such folder
    exists): the same as --run.

    Exit 0 when every run finished, 1 otherwise, 2 for unusable input.
    """

    with open_store(store_of(output_dir, store_url)) as store:
        status = None
        if output_dir is not None and run_uid is None and not output_dir.exists():
            # `xrun status RUN`: one indexed query, whatever the size of the store
            status = store.views.campaign_status(None, experiment, heartbeat_timeout=heartbeat_timeout,
                                           include_branches=True, run=str(output_dir))
            if status.runs:
                output_dir, run_uid = None, str(output_dir)
        if run_uid is None:
            experiment = choose_experiment(output_dir, experiment, store, every=every, allow_all=True)
            status = store.views.campaign_status(output_dir, experiment, heartbeat_timeout=heartbeat_timeout)
        elif status is None:  # --run UID
            if output_dir is None:
                store.views.check_experiment(experiment)
            status = store.views.campaign_status(output_dir, experiment, heartbeat_timeout=heartbeat_timeout,
                                           include_branches=True, run=run_uid)
        if run_uid is not None:
            if not status.runs:
                fail(f"no run {run_uid!r} in {store.url}" + (f" for {output_dir}" if output_dir else ""))
            latest = store.runs.instance(status.runs[0].instance_id) if status.runs[0].instance_id else None
    if fmt == "json":
        click.echo(_status_json(status, only, experiment))
        sys.exit(EXIT_OK if status.all_finished else EXIT_FAILED)
    out = console()
    if run_uid is not None:
        _print_run(out, status.runs[0], latest)
        sys.exit(EXIT_OK if status.all_finished else EXIT_FAILED)
    if not quiet:
        from rich.markup import escape
        from rich.table import Table

        title = f"{experiment or 'every experiment'} · status · {store.url}"
        table = Table(title=escape(title))
        rows = [r for r in status.runs if not only or r.status in only]
        cells = [[r.run, "" if r.design_point is None else str(r.design_point),
                  "" if r.repetition is None else str(r.repetition), r.status,
                  "" if r.instance_id is None else str(r.instance_id), _when(r.start)] for r in rows]
        names = ["run", "point", "rep", "status", "instance", "started (UTC)"]
        columns = zip(*cells) if cells else [()] * len(names)
        fixed = [max([len(n), *map(len, column)]) for n, column in zip(names, columns)]
        spare = out.width - sum(fixed) - 3 * (len(names) + 1) - 1
        if len(rows) > PLAIN_ROWS and spare >= 12:  # rich lays out ~1,000 rows a second: draw its frame ourselves
            _plain_table(out, title, names, fixed, [c + [r.reason or ""] for r, c in zip(rows, cells)], spare)
            _print_warnings(out, rows)
            out.print(status.summary, markup=False, highlight=False)
            sys.exit(EXIT_OK if status.all_finished else EXIT_FAILED)
        for c in cells:
            c[0] = escape(c[0])
        for name, chars in zip(names, fixed):  # these keep their width; the reason gets what is left
            table.add_column(name, no_wrap=True, min_width=chars,
                             justify="right" if name in ("point", "rep", "instance") else "left")
        spare = out.width - sum(fixed) - 3 * (len(names) + 1) - 1
        # one line, cut with an ellipsis; in full with --run UID or --format json
        table.add_column("reason", overflow="ellipsis", no_wrap=True, max_width=max(12, spare))
        for r, row in zip(rows, cells):
            style = _STYLES.get(r.status, "")
            row[3] = f"[{style}]{r.status}[/{style}]" if style else r.status
            table.add_row(*row, escape(r.reason or ""))
        out.print(table)
        _print_warnings(out, rows)
    out.print(status.summary, markup=False, highlight=False)
    sys.exit(EXIT_OK if status.all_finished else EXIT_FAILED)


#: above this many rows ``xrun status`` draws its table without rich's layout (:func:`_plain_table`)
PLAIN_ROWS = 500


def _plain_table(out: Any, title: str, names: list[str], widths: list[int], rows: list[list[str]],
                 reason_width: int) -> None:
    """The status table as rich draws it when it fits the console
    (``box.HEAVY_HEAD``, one space of padding, numbers right-aligned, the
    status coloured on a terminal, the reason cut to one line with an
    ellipsis), written line by line: 10,000 runs in a fraction of a second
    instead of rich's ten. ``tests/cli/test_inspect.py`` compares the two."""
    reason_width = max(len("reason"), min(reason_width, max([len("reason")] + [len(r[-1]) for r in rows])))
    widths = [*widths, reason_width]
    right = {1, 2, 4}
    colour = out.is_terminal and not out.no_color
    ansi = {"finished": "32", "pruned": "36", "running": "33", "failed": "1;31", "interrupted": "35", "missing": "2", "invalid": "31"}

    def rule(left: str, fill: str, mid: str, end: str) -> str:
        return left + mid.join(fill * (w + 2) for w in widths) + end

    total = sum(widths) + 3 * len(widths) + 1
    import textwrap

    heading = []
    for line in textwrap.wrap(title, total, break_on_hyphens=False) or [""]:  # rich wraps the title at the table's width, centred
        left = (total - len(line)) // 2
        heading.append(" " * left + line + " " * (total - len(line) - left))
    lines = [*heading, rule("┏", "━", "┳", "┓"),
             "┃ " + " ┃ ".join(n.rjust(w) if i in right else n.ljust(w)
                             for i, (n, w) in enumerate(zip([*names, "reason"], widths))) + " ┃",
             rule("┡", "━", "╇", "┩")]
    # the other columns are as wide as their widest cell: only the reason is cut
    w0, w1, w2, w3, w4, w5, w6 = widths
    for run, point, rep, status, instance, started, reason in rows:
        reason = " ".join(reason.split())
        if len(reason) > w6:
            reason = reason[:w6 - 1] + "…"
        shown = status.ljust(w3)
        if colour and status in ansi:
            shown = f"\x1b[{ansi[status]}m{status}\x1b[0m" + shown[len(status):]
        lines.append(f"│ {run:<{w0}} │ {point:>{w1}} │ {rep:>{w2}} │ {shown} │ {instance:>{w4}} │ "
                     f"{started:<{w5}} │ {reason:<{w6}} │")
    lines.append(rule("└", "─", "┴", "┘"))
    out.file.write("\n".join(lines) + "\n")


def _status_json(status: Any, only: tuple[str, ...], experiment: str | None) -> str:
    """``{"experiment": UID or null (every one), "runs": [...], "counts": {...},
    "all_finished": bool}``, times in ISO 8601."""
    import dataclasses
    import json

    def plain(value: Any) -> Any:
        return value.isoformat() if hasattr(value, "isoformat") else list(value) if isinstance(value, tuple) else value

    # each RunStatus's fields, one level deep (dataclasses.asdict's deep copies: 0.6 s of 10,000 runs)
    runs = [{f.name: plain(getattr(r, f.name)) for f in dataclasses.fields(r)}
            for r in status.runs if not only or r.status in only]
    return json.dumps({"experiment": experiment, "runs": runs, "counts": status.counts, "all_finished": status.all_finished}, indent=2)


def _print_warnings(console: Any, rows: list[Any]) -> None:
    """``run <uid> warning: <line>`` for each warning of ``rows``' instances,
    as ``xrun experiment-start`` printed it."""
    for r in rows:
        for line in r.warnings:
            console.print(f"run {r.run} warning: {line}", markup=False, highlight=False, soft_wrap=True)


def _print_run(console: Any, r: Any, instance: Any) -> None:
    """One run's status in full: every field, the whole reason and the traceback."""
    fields = [("run", r.run), ("status", r.status), ("design point", r.design_point),
              ("repetition", r.repetition), ("seed", r.seed), ("instance", r.instance_id),
              ("instances", r.instances), ("host", r.host), ("started (UTC)", _when(r.start)),
              ("ended (UTC)", _when(r.end)), ("file", r.file), ("reason", r.reason)]
    for name, value in fields:
        if value not in (None, ""):
            console.print(f"{name}: {value}", markup=False, highlight=False, soft_wrap=True)
    _print_warnings(console, [r])
    if instance is not None and instance.traceback:
        console.print(instance.traceback.rstrip(), markup=False, highlight=False, soft_wrap=True)


@click.command("export", short_help="Write one row per episode, worker and agent to CSV or Parquet.")
@click.argument("output_dir", required=False, metavar="[DIR]",
                type=click.Path(exists=True, file_okay=False, path_type=Path))
@select_options
@all_option
@output_options("The table to write; the suffix picks the format (Parquet needs pyarrow).",
                metavar="FILE.csv|FILE.parquet", required=False)
@click.option("--to", "to", default=None, metavar="tensorboard:DIR|mlflow:URI",
              help="Instead of a table (-o), write the runs to TensorBoard (event files below "
                   "DIR/<experiment>/<run>) or MLflow (a tracking URI, e.g. file:///abs/mlruns) as "
                   "`experiment-start --log` does; a run the destination holds already is kept unless "
                   "--overwrite.")
@click.option("--all-instances", is_flag=True,
              help="Every run instance (adds an 'instance' column) instead of, per run, the latest "
                   "finished one (else the latest).")
@click.option("--include-branches", is_flag=True,
              help="Also the sessions branched or grown from these runs, after the design's runs, "
                   "labelled in a last column 'branch'.")
@handle_errors
def export_command(output_dir: Path | None, experiment: str | None, store_url: str | None, every: bool,
                   output: Path | None, overwrite: bool, to: str | None, all_instances: bool,
                   include_branches: bool) -> None:
    """Write one long table, one row per episode, worker and agent of the
    design's runs: experiment, run, design_point, repetition, seed, one
    column per factor, phase, mode, worker, episode, agent, steps, reward,
    objective, wall_time (and branch with --include-branches).

    The runs of one experiment: DIR's (an xgen output folder; its xrun.sqlite
    when --store is not given) or the store's; -e UID chooses where there
    are several, --all exports every experiment in the store.

    Streams from the store (memory stays flat); the file appears only when complete.

    --to tensorboard:DIR or --to mlflow:URI writes the runs to a tracker
    instead (the 'tensorboard' / 'mlflow' extra): one tracker run per run,
    its factor levels as hyperparameters, every episode.
    """
    if (output is None) == (to is None):
        fail("give either -o FILE (a table) or --to tensorboard:DIR|mlflow:URI", EXIT_INPUT)
    if to is not None:
        _export_to(output_dir, experiment, store_url, every, to, overwrite, all_instances, include_branches)
        return
    assert output is not None
    check_output(output, overwrite)
    with open_store(store_of(output_dir, store_url)) as store:
        experiment, scope = _export_scope(store, output_dir, experiment, every, all_instances, f"{output} not written")
        result = store.views.export_episodes(output, experiment, all_instances=all_instances,
                                       include_branches=include_branches, overwrite=overwrite, hint=OVERWRITE_HINT)
    click.echo(f"wrote {result.rows:,} rows of {result.runs:,} runs of {experiment or 'every experiment'} "
               f"({len(result.columns)} columns) to {result.path} in {result.seconds:.1f} s")
    if result.rows == 0:
        fail(f"no episodes matched in {scope} {store.url}: the recorded phases have no episode "
             f"(only the header was written)", EXIT_FAILED)


def _export_scope(store: Any, output_dir: Path | None, experiment: str | None, every: bool, all_instances: bool,
                  untouched: str) -> tuple[str | None, str]:
    """The experiment ``xrun export`` writes (:func:`choose_experiment`) and its
    description; exit 1 naming what stays ``untouched`` when no run of it has
    recorded a phase."""
    experiment = choose_experiment(output_dir, experiment, store, every=every, allow_all=True)
    scope = f"experiment {experiment!r} in store" if experiment else "store"
    if not store.views.selected_phases(experiment, all_instances=all_instances):
        fail(f"nothing to export: no run of {scope} {store.url} has recorded a phase "
             f"(run `xrun experiment-start` first); {untouched}", EXIT_FAILED)
    return experiment, scope


def _export_to(output_dir: Path | None, experiment: str | None, store_url: str | None, every: bool, to: str,
               overwrite: bool, all_instances: bool, include_branches: bool) -> None:
    """``xrun export --to``: the runs to a tracker (:func:`xdoe.tracking.export_runs`)."""
    from xdoe.documents import parse_log_target
    from xdoe.tracking import export_runs, missing_extras

    target = parse_log_target(to)  # InputError: exit 2
    for line in missing_extras([target]):
        fail(line, EXIT_INPUT)
    with open_store(store_of(output_dir, store_url)) as store:
        experiment, _ = _export_scope(store, output_dir, experiment, every, all_instances,
                                      f"nothing written to {target}")
        try:
            done = export_runs(store, target, experiment, all_instances=all_instances,
                               include_branches=include_branches, replace=overwrite)
        except Exception as exc:  # noqa: BLE001 - the tracker library's error, on one line
            from xdoe.errors import XdoeError, one_line

            if isinstance(exc, XdoeError):
                raise
            fail(f"{target}: {type(exc).__name__}: {one_line(exc)}", EXIT_FAILED)
    kept = f"; kept {done.kept:,} it holds already (--overwrite rewrites them)" if done.kept else ""
    click.echo(f"wrote {done.written:,} runs ({done.episodes:,} episode rows) of "
               f"{experiment or 'every experiment'} to {target} in {done.seconds:.1f} s{kept}")
