"""``xrun``: execute run documents and record them in the store.

Commands:

- ``xrun experiment-start FILES...``: run each document phase by phase;
- ``xrun experiment-check FILES...``: validate documents and construct every
  component without running.

Exit codes (:mod:`xdoe.cli._common`): 0 all runs finished; 1 some run failed
(the others still ran unless ``--fail-fast``); 2 unusable input (a document
that cannot be read: one line ``file:line: ...`` each, nothing runs).

Extending: shared options are decorators (:func:`store_option`,
:func:`results_option`, :func:`store_steps_option`); loading and checking
is :func:`~xdoe.cli._documents.checked_plans`; running many documents (skip, claim, backends) is
:mod:`xdoe.campaign`. Heavy modules (the executor, the store,
gymnasium, rich) are imported when a command runs.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

import click

from xdoe.cli._ctrl_c import EXIT_INTERRUPTED, CtrlC, RememberArgs, resume_line
from xdoe.cli._common import (EXIT_FAILED, EXIT_INPUT, EXIT_OK, Number, Program, document_warnings, fail, handle_errors,
                              open_store_or_exit, store_option, without_pydantic_plugins)
from xdoe.cli._documents import checked_plans
from xdoe.cli._jobs import scale_options, skip_finished_files
from xdoe.cli._submit import expand_run_files, submit_command
from xdoe.cli._summary import summary_table
from xdoe.campaign import STORE_WAIT
from xdoe.errors import InputError, XdoeError
from xdoe.store import HEARTBEAT_TIMEOUT

if TYPE_CHECKING:
    from xdoe.campaign import CampaignOptions
    from xdoe.execution import RunPlan, RunResult

__all__ = [
    "main",
    "store_option",
    "results_option",
    "store_steps_option",
    "open_store_or_exit",
    "summary_table",
]

F = Callable[..., Any]


# -- shared options ------------------------------------------------------------

def results_option(func: F) -> F:
    """``--results DIR`` (default ``_outputs/results``)."""
    return click.option(
        "--results", "results", metavar="DIR", default="_outputs/results", show_default=True,
        type=click.Path(file_okay=False, path_type=Path),
        help="Root folder of the per-run results files.",
    )(func)


def _parse_store_steps(ctx: click.Context, param: click.Parameter, value: str) -> str:
    from xdoe.store import StepPolicy

    try:
        return str(StepPolicy.parse(value))
    except InputError as exc:
        raise click.BadParameter(str(exc)) from None


def store_steps_option(func: F) -> F:
    """``--store-steps none|all|every:N``."""
    return click.option(
        "--store-steps", default="none", show_default=True, metavar="none|all|every:N",
        callback=_parse_store_steps, help="Which steps the store keeps (episodes are always kept).",
    )(func)


# -- loading -----------------------------------------------------------------------

def _with_folders(files: Sequence[str]) -> tuple[str, ...]:
    """``files`` with each folder replaced by its ``run-*.yaml`` files (other
    paths stay as given: a missing one is reported with the documents' errors).

    Raises:
        InputError: a folder holds no ``run-*.yaml``.
    """
    return tuple(str(f) for raw in files for f in (expand_run_files((raw,)) if Path(raw).is_dir() else [raw]))


# -- running -------------------------------------------------------------------------

class _Display:
    """The rich progress display (runs done/total, current run and phase,
    episodes, steps/s); a no-op when disabled. ``quiet`` (``-q``): only
    errors among the messages (a failed run), as every command's ``-q``."""

    def __init__(self, total: int, enabled: bool, quiet: bool = False) -> None:
        self.enabled = enabled
        self.quiet = quiet
        self.progress: Any = None
        if not enabled:
            return
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.console = Console(stderr=True, emoji=False)
        self.progress = Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"), TimeElapsedColumn(),
            console=self.console, transient=True,
        )
        self.runs = self.progress.add_task("runs", total=total, rate="")
        self.episodes = self.progress.add_task("", total=1, rate="", visible=False)
        self._start = time.perf_counter()
        self.progress.start()

    def run_started(self, uid: str) -> None:
        self._start = time.perf_counter()
        if self.enabled:
            self.progress.update(self.episodes, description=uid, completed=0, visible=True, rate="")

    def __call__(self, event: Any) -> None:
        if not self.enabled:
            return
        elapsed = max(time.perf_counter() - self._start, 1e-9)
        self.progress.update(
            self.episodes,
            description=f"{event.run} · {event.phase} ({event.phase_index + 1}/{event.phases}) episodes",
            completed=event.episodes, total=event.episodes_total,
            rate=f"{event.steps / elapsed:,.0f} steps/s",
        )

    def run_done(self) -> None:
        if self.enabled:
            self.progress.advance(self.runs)

    def message(self, text: str, *, error: bool = False) -> None:
        """A line to stderr (above the progress bar); under ``-q`` errors only."""
        if self.quiet and not error:
            return
        if self.enabled:
            self.progress.console.print(text, markup=False, highlight=False)
        else:
            click.echo(text, err=True)

    def waiting(self, held: list[Any]) -> None:
        names = ", ".join(f"{r.uid} ({r.error})" for r in held)
        self.message(f"waiting for {len(held)} run(s) another process holds: {names}; "
                     f"taken over if that process dies")

    def stop(self) -> None:
        if self.enabled:
            self.progress.stop()


# -- the application ----------------------------------------------------------------

@click.group(cls=Program, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="xdoe", prog_name="xrun")
def main() -> None:
    """Execute run documents phase by phase and record them in the store."""


@main.command("experiment-start", cls=RememberArgs,
              short_help="Run run documents (files or folders) and record them in the store.")
@click.argument("files", nargs=-1, required=True)
@store_option
@results_option
@store_steps_option
@click.option("--fail-fast", is_flag=True, help="Stop at the first failed run.")
@click.option("--quiet", "-q", is_flag=True, help="No progress display and no summary table.")
@click.option("--laydown/--no-laydown", default=True, show_default=True,
              help="Put the lay-down diagram laydown.svg into each run's results folder (drawn once per "
                   "run structure; --no-laydown for smoke tests).")
@scale_options
@click.option("--rerun", is_flag=True,
              help="Run again runs that finished before (a new instance) instead of skipping them.")
@click.option("--heartbeat-timeout", type=Number(min=0, min_open=True, infinite=True), default=HEARTBEAT_TIMEOUT,
              show_default=True, metavar="SECONDS",
              help="A running instance (or claim) without heartbeat for this long counts as dead: "
                   "its run is resumed.")
@click.option("--store-wait", type=Number(min=0, infinite=True), default=STORE_WAIT, show_default=True,
              metavar="SECONDS",
              help="A store that goes away during the campaign (its server stopped or restarting) is "
                   "waited for this long, with back-off: no run starts meanwhile and the runs in flight "
                   "keep their episodes; then the campaign goes on where it was. Past it, the campaign "
                   "stops with one line saying how to resume (exit 1).")
@click.option("--run-timeout", type=Number(min=0.001, infinite=True), default=None, metavar="SECONDS",  # MIN_SECONDS
              help="Seconds each run may take (the smaller of this and the document's run_config.timeout); "
                   "a run passing it fails with 'no progress for N s in <Class>.<method>', the others go on. "
                   "Default: no limit.")
@click.option("--log", "log", multiple=True, metavar="tensorboard:DIR|mlflow:URI",
              help="Also log every run's episodes, as they are recorded, to TensorBoard (event files below "
                   "DIR/<experiment>/<run>) or MLflow (a tracking URI, e.g. file:///abs/mlruns); repeatable; "
                   "needs the 'tensorboard' / 'mlflow' extra. A logging failure is a warning of its run, "
                   "never a failure (docs/tracking.md).")
@handle_errors
def experiment_start(files: tuple[str, ...], quiet: bool, jobs: str, **options: Any) -> None:
    """Run each run document FILES (e.g. _outputs/run-*.yaml, or the folder _outputs).

    A folder stands for its run-*.yaml files.

    A run whose document finished before is skipped (--rerun runs it
    again as a new instance); an interrupted one (Ctrl-C, killed, its node
    lost) continues from its last finished phase and, inside a phase, from
    its last checkpoint.

    Whatever plugin code does (raise, sys.exit, crash, get killed), only its
    run fails: runs execute in a worker process (--in-process: in this one).
    A full disk stops the campaign; the run that hit it resumes next time.
    A run passing its time limit (--run-timeout, run_config.timeout,
    phase_config.step_timeout) fails and its worker process is killed.
    Runs another xrun holds are waited for, and taken over if it dies.

    Ctrl-C: no new run starts, the running ones record their interruption,
    the summary and the command that resumes the campaign are printed (exit
    130); a second Ctrl-C stops at once.

    Exit 0 when every run finished (now, earlier or in another xrun), 1 when
    a run failed or was interrupted, 2 when a document cannot be read or the
    store cannot be opened (then nothing runs and nothing is written), 130
    after Ctrl-C.
    """
    resume = resume_line(click.get_current_context())
    try:
        _experiment_start(files, quiet, jobs, resume, **options)
    except KeyboardInterrupt:  # before or after the campaign: nothing is half done
        click.echo(f"interrupted\n{resume}", err=True)
        sys.exit(EXIT_INTERRUPTED)


def _check_log_targets(log: Sequence[str], plans: Sequence[Any]) -> None:
    """Refuse, before anything runs (exit 2), a log target whose library
    (its extra) is not installed: ``--log`` or a document's ``run_config.log``."""
    targets = [*log, *(t for plan in plans for t in plan.log)]
    if not targets:
        return
    from xdoe.tracking import missing_extras

    missing = missing_extras(targets)
    if missing:
        for line in missing:
            click.secho(f"error: {line}", fg="red", err=True)
        sys.exit(EXIT_INPUT)


def _experiment_start(files: tuple[str, ...], quiet: bool, jobs: str, resume: str,
                      written: Mapping[str, tuple[str, Any]] | None = None, **options: Any) -> None:
    from xdoe.campaign import CampaignOptions, parse_jobs

    opts = CampaignOptions(jobs=parse_jobs(jobs), **options)
    files = _with_folders(files)
    backend = None
    if len(files) > 1 and not opts.dask and opts.jobs > 1:
        from xdoe.campaign import make_backend, start_forkserver

        # first thing: the workers' imports (numpy, gymnasium, the executor, the store) and their
        # start overlap with everything this process does before the first run starts, which needs
        # none of them; the first worker checks the components and then runs the first run warm
        if start_forkserver():
            backend = make_backend(opts)
            backend.start()
    try:
        _start_campaign(files, quiet, resume, opts, backend, written)
    finally:
        if backend is not None:
            backend.close()


def _start_campaign(files: tuple[str, ...], quiet: bool, resume: str, opts: "CampaignOptions",
                    backend: Any, written: Mapping[str, tuple[str, Any]] | None = None) -> None:
    from xdoe.campaign import Campaign, all_done, clear_stop, stop_requested
    from xdoe.errors import StoreError, StoreLostError

    # files whose exact bytes finished before are skipped unread (one query;
    # a store that does not exist yet is not created for it)
    try:
        todo, done_before = (list(range(len(files))), []) if opts.rerun else skip_finished_files(files, opts.store_url)
    except StoreError as exc:
        fail(str(exc), EXIT_INPUT)
    plans = checked_plans([files[i] for i in todo], store_url=opts.store_url, results=opts.results,
                          written=written, workers=backend)
    _check_log_targets(opts.log, plans)
    store = open_store_or_exit(opts.store_url)  # unreachable now: exit 2 at once
    store.database.wait = opts.store_wait  # lost later (--in-process records through this store): waited for
    display = _Display(len(plans) + len(done_before), enabled=not quiet and sys.stderr.isatty(),
                       quiet=quiet)
    for _, result in done_before:
        display.run_done()
        display.message(f"run {result.uid} {result.note}")
    finished = _Finished(display, opts)
    try:
        with CtrlC(display, resume) as ctrl_c:
            try:
                per_plan = Campaign(plans, opts, store=store, backend=backend).run(
                    progress=display if display.enabled else None,
                    started=None if opts.remote else (lambda plan: display.run_started(plan.uid)),
                    on_result=finished, waiting=display.waiting)
            finally:
                finished.close()
            interrupted = ctrl_c.count > 0 or stop_requested()
    except StoreLostError as exc:  # waited --store-wait seconds in vain: one line, like a full disk
        display.stop()
        fail(f"{exc}; the campaign stopped (finished runs are kept, the runs in flight resume); {resume}",
             EXIT_FAILED)
    finally:
        clear_stop()
        display.stop()
        store.close()
    skipped = [p.uid for p, r in zip(plans, per_plan) if r is None]  # kept from starting by --fail-fast
    # back into the order of FILES: plans[k] is the document of files[todo[k]]
    merged = [(todo[k], r) for k, r in enumerate(per_plan) if r is not None] + done_before
    outcomes = [r for _, r in sorted(merged, key=lambda item: item[0])]
    if not quiet:
        from xdoe.cli._common import console as make_console
        from xdoe.results import levels_text

        levels = {p.uid: levels_text((p.document.get("design_point") or {}).get("levels")) for p in plans}
        console = make_console()  # piped: wide enough that no column is cut
        console.print(summary_table(outcomes, skipped, levels, width=console.width))
    if interrupted:
        sys.stdout.flush()
        click.echo(resume, err=True)
        sys.exit(EXIT_INTERRUPTED)
    sys.exit(EXIT_OK if all_done(outcomes) and not skipped else EXIT_FAILED)


class _Finished:
    """What ``xrun experiment-start`` does with each result as it arrives:
    count it, say what went wrong or was skipped, and put the lay-down
    diagram ``laydown.svg`` into the run's results folder (drawn here, not
    by the executor: with the ``analysis`` extra, once per run structure,
    :func:`xdoe.analysis.plots.write_laydown`).

    The diagrams are drawn by a thread of their own, one at a time, so that
    the loop handing out runs never waits for matplotlib (importing it and
    drawing takes ~0.5 s of CPU: with ``--jobs 2`` another worker that
    finished meanwhile sat idle that long). :meth:`close` waits for them."""

    def __init__(self, display: "_Display", options: "CampaignOptions") -> None:
        import threading

        from xdoe._extras import installed

        self.display = display
        self.results = options.results
        self.laydown = options.laydown and options.results is not None and installed("matplotlib")
        self._drawing = threading.Lock()  # one drawing at a time: a structure drawn once (its cache)
        self._threads: list[threading.Thread] = []

    def _draw(self, document: Any, folder: str) -> None:
        from xdoe.analysis import write_laydown  # not .plots: a drawing made before is linked without numpy

        with self._drawing:
            write_laydown(document, folder, self.results)

    def close(self) -> None:
        """Wait for the diagrams still being drawn."""
        for thread in self._threads:
            thread.join()
        self._threads.clear()

    def __call__(self, plan: "RunPlan", result: "RunResult") -> None:
        from xdoe.campaign import DONE_STATUSES

        self.display.run_done()
        for line in result.warnings:  # a run's warnings, one line each, whichever process ran it
            self.display.message(f"run {result.uid} warning: {line}")
        if result.status not in DONE_STATUSES:
            self.display.message(f"run {result.uid} {result.status}: {result.error}", error=True)
        elif result.status in ("skipped", "pruned") and (result.note or result.error):
            self.display.message(f"run {result.uid} {result.note if result.status == 'skipped' else result.error}")
        if self.laydown and result.results_dir is not None:
            import threading

            thread = threading.Thread(target=self._draw, args=(plan.document, result.results_dir),
                                      name=f"laydown-{result.uid}", daemon=True)
            thread.start()
            self._threads.append(thread)


main.add_command(submit_command)


@main.command("experiment-check", short_help="Check run documents: validate and construct every component.")
@click.argument("files", nargs=-1, required=True)
@handle_errors
def experiment_check(files: tuple[str, ...]) -> None:
    """Validate run documents FILES (a folder: its run-*.yaml) and import and
    construct every component (with a throwaway seed) without running. Every
    component that does not import is reported, not only the first. Exit 0
    when all are usable, else 2."""
    from xdoe._files import changed_since_written
    from xdoe.execution import check_document, import_errors, load_plan
    from xdoe.execution import located

    failed = False
    paths = list(_with_folders(files))
    edited = changed_since_written(paths)  # each folder's manifests read once
    for path in paths:
        try:
            with without_pydantic_plugins(), document_warnings():
                plan = load_plan(Path(path))
            missing = import_errors(plan)  # every component that does not import
            lines = [] if missing else check_document(plan)
            # a hand edit after xgen: said after what the document says
            missing = missing or ([located(str(path), edited[str(path)])] if str(path) in edited else [])
        except XdoeError as exc:
            missing = [str(exc)]
        if missing:
            failed = True
            for text in missing:
                click.secho(f"error: {text if text.startswith(str(path)) else located(str(path), text)}", fg="red",
                            err=True)
            continue
        click.echo(f"ok {path}: " + "; ".join(lines))
    sys.exit(EXIT_INPUT if failed else EXIT_OK)


# status, export (issue 4): src/xdoe/cli/_inspect.py; branch, grow, tree (issue 14): _tree.py
from xdoe.cli._inspect import export_command, status_command  # noqa: E402
from xdoe.cli._tree import register as register_tree  # noqa: E402

main.add_command(status_command)
main.add_command(export_command)
register_tree(main)
# results, analyze, plot, report (issue 12): src/xdoe/cli/_analysis.py
from xdoe.cli._analysis import analysis_commands  # noqa: E402

from xdoe.cli._plan import plan_command  # noqa: E402

for _command in [*analysis_commands(), plan_command]:
    main.add_command(_command)
from xdoe.cli._dashboard import dashboard_command  # noqa: E402  (issue 15)
main.add_command(dashboard_command)
from xdoe.cli._optimize import optimize_command  # noqa: E402  (issue 37: adaptive designs)
main.add_command(optimize_command(start=_experiment_start, options=[store_option, store_steps_option, scale_options]))


if __name__ == "__main__":  # pragma: no cover - python -m xdoe.cli._xrun
    main()
