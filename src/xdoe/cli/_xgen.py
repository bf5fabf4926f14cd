"""``xgen``: expand an experiment document into reproducible run documents.

Imports only :mod:`xdoe.design` and :mod:`xdoe.documents` (never the
executor, the store, gymnasium or user modules): xgen runs on a login node
with nothing but the document.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import click

from xdoe.cli._common import (EXIT_INPUT, EXIT_OK, Program, check_output, console, handle_errors, output_options,
                              resume_gc, without_pydantic_plugins)
from xdoe.cli._xgen_doe import _diagnostic_lines, _doe_lines, _figure, augment_command

__all__ = ["main"]

PROGRESS_THRESHOLD = 200  # runs; smaller outputs are written without a progress bar


def _prepare(file: Path, *, strict: bool, max_total_runs: int | None = None, overrides: Any = ()) -> Any:
    """:func:`xdoe.design.runfiles.prepare`, without pydantic plugins
    (:func:`~xdoe.cli._common.without_pydantic_plugins`). The garbage collector
    stays off (see :class:`~xdoe.cli._common.Program`) until work that grows
    with the runs, or user code, starts: the caller calls :func:`resume_gc` first."""
    with without_pydantic_plugins():
        from xdoe.design.runfiles import prepare

        return prepare(file, strict=strict, max_total_runs=max_total_runs, overrides=overrides)


#: the help text's paragraph on KEY=VALUE overrides (xgen generate, xgen check)
_OVERRIDES_HELP = """KEY=VALUE arguments after FILE override keys of the document before it
is read: KEY is a dotted path (repetitions, factors.alpha.levels,
definitions.agents.learner.brain.params.gamma; a path that does not start at
the top matches every place it ends at; +KEY adds a key), VALUE is YAML
(5, [0.1,0.5], {a: 1}; x0.5 multiplies the current number): the grammar of
xrun branch --set. An unknown key is refused with close matches. The
manifest records them, in the order given, as "overrides"; its input_sha256
stays the hash of FILE as written, and errors name FILE's lines."""


def overrides_argument(func: Any) -> Any:
    """``[KEY=VALUE]...`` after FILE: overrides of the experiment document."""
    return click.argument("overrides", nargs=-1, metavar="[KEY=VALUE]...")(func)


def max_total_runs_option(func: Any) -> Any:
    """``--max-total-runs N``: the largest design (points x repetitions) to build."""
    return click.option(
        "--max-total-runs", type=click.IntRange(min=1), default=None, metavar="N",
        help="Refuse a design of more than N runs (design points x repetitions) "
        "[default: the document's max_total_runs, else 1000000].",
    )(func)


def _warn(warnings: list[str], quiet: bool) -> None:
    if quiet:
        return
    for text in warnings:
        click.secho(f"warning: {text}", fg="yellow", err=True)


def _console() -> Any:
    """Standard output: a terminal's width, or (piped) wide enough that no column is cut."""
    return console(file=sys.stdout, soft_wrap=True, highlight=False, emoji=False)


def _factor_table(design: Any) -> Any:
    """The design's factors (:func:`xdoe._html.factor_rows`, as a notebook shows them)."""
    from rich.table import Table
    from rich.text import Text

    from xdoe._html import FACTOR_HEADERS, factor_rows

    table = Table(title="factors", title_justify="left")
    for k, header in enumerate(FACTOR_HEADERS):
        table.add_column(header, no_wrap=k == 0)
    for row in factor_rows(design.factors):
        table.add_row(*map(Text, row))
    return table


def _plan_lines(plan: Any, target: Path, *, dry: bool) -> list[str]:
    """What extending ``target`` does (``dry``: would do), with the retired names."""
    if plan is None:
        return [f"would write a new output folder {target}"] if dry else []
    if plan.up_to_date:
        return [f"{target} is up to date: nothing would change"] if dry else []
    lines = [f"{'would extend' if dry else 'extended'} {target}: {plan.summary()}"]
    if plan.retired or plan.changed:
        where = plan.retired_dir if plan.retired_dir is not None else target / "retired" / "<timestamp>"
        moved = sorted(plan.retired + plan.changed)
        lines.append(f"{'would move' if dry else 'moved'} to {where}: " + ", ".join(moved[:20])
                     + (f" and {len(moved) - 20} more" if len(moved) > 20 else ""))
    if dry and plan.changed:
        lines.append(f"{len(plan.changed)} run documents changed: needs --force (old versions are retired)")
    if dry and plan.foreign:
        lines.append("refused: files exist that xgen did not write: " + ", ".join(plan.foreign[:20]))
    return lines


def _check_imports(experiment: Any, runs: Any, quiet: bool) -> None:
    """Import every component (``--import``): errors against the experiment document, exit 2."""
    from xdoe.cli._imports import check_imports

    checked, errors = check_imports(experiment, runs)
    if errors:
        for line in errors:
            click.secho(f"error: {line}", fg="red", err=True)
        sys.exit(EXIT_INPUT)
    if not quiet:
        click.echo(f"imports ok: every component imported and constructed "
                   f"({checked} distinct run documents of {runs.n_points} design points)")


def _dry_run(experiment: Any, design: Any, runs: Any, target: Path, force_folder: bool = False) -> None:
    from xdoe.design.runfiles import MAX_FIGURE_POINTS, plan_runs

    plan = plan_runs(runs, target, force_folder=force_folder)  # a refused folder: the one error line only
    console = _console()
    if experiment.factors:
        console.print(_factor_table(design))
    else:
        console.print("factors: none (every schedule entry has one level)")
    console.print(f"method: {design.method} ({design.reason})")
    console.print(
        f"design points x repetitions = runs: {runs.n_points} x {runs.repetitions} = {len(runs)}"
    )
    if len(design) > MAX_FIGURE_POINTS:
        discrepancy = f"not computed (more than {MAX_FIGURE_POINTS} points)"
    else:
        discrepancy = str(_figure(design.discrepancy))
    console.print(f"min distance: {_figure(design.min_distance)}, centred L2 discrepancy: {discrepancy}")
    if getattr(design, "info", None) is not None:
        _doe_lines(console, design)
    elif not design.is_grid and len(design) <= MAX_FIGURE_POINTS:  # a grid's are known; they would load scipy
        _diagnostic_lines(console, design.diagnostics)
    for line in _plan_lines(plan, target, dry=True):
        console.print(line, markup=False)
    console.print("dry run: nothing written")


@click.group(cls=Program, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="xdoe", prog_name="xgen")
def main() -> None:
    """Expand an experiment document (arsenAI format plus xdoe's factors and
    designs) into reproducible run documents for xrun.

    \b
    xgen check experiments/dummy.yaml            validate only
    xgen generate experiments/dummy.yaml --dry-run   show factors and design
    xgen generate experiments/dummy.yaml         write run-*.yaml, design.csv, manifest.json
    xgen schema > xdoe-experiment.schema.json    JSON Schema for editors

    Exit codes: 0 ok, 2 bad input (the message names file:line and key).
    """
    if "numpy" not in sys.modules:  # a fresh xgen process (not a caller that loaded numpy already)
        # xgen's arrays are small: OpenBLAS's thread pool, started when numpy
        # is imported, would cost more CPU than all of xgen's linear algebra
        # (~60 ms of a 0.4 s `xgen check` on 2 cores); a value the user set is kept
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


@main.command()
@click.argument("file", type=click.Path(path_type=Path))
@overrides_argument
@click.option(
    "--output",
    "-o",
    type=click.Path(path_type=Path),
    default=None,
    help="Directory for the outputs [default: the document's 'output' key, or _outputs; "
    "relative to the working directory].",
)
@click.option("--dry-run", is_flag=True,
              help="Print the factors, the design method and size, and what would be added, kept and "
                   "retired in an existing output; write nothing.")
@click.option("--force", is_flag=True,
              help="Replace run documents whose content changed (old versions go to retired/); "
                   "never touches the store, results or other files.")
@click.option("--force-folder", is_flag=True,
              help="Write into an existing non-empty folder that xgen did not create (one without an xgen "
                   "manifest.json); refused otherwise, so that a typo such as -o /etc writes nothing.")
@click.option("--quiet", "-q", is_flag=True, help="No summary, progress bar or warnings.")
@click.option("--strict", is_flag=True, help="Refuse keys xdoe does not know (default: warn and ignore them).")
@click.option("--import", "import_", is_flag=True,
              help="First import and construct every component (as xrun experiment-check does; "
                   "as xgen check --import); write nothing when one fails.")
@click.option("--check-imports", "check_imports", is_flag=True, hidden=True,
              help="Deprecated name of --import.")
@max_total_runs_option
@handle_errors
def generate(file: Path, overrides: tuple[str, ...], output: Path | None, dry_run: bool, force: bool,
             force_folder: bool, quiet: bool, strict: bool, import_: bool, check_imports: bool,
             max_total_runs: int | None) -> None:
    """Write one run document per design point and repetition.

    Writes OUTPUT/run-<uid>-<NNNN>.yaml (NNNN = repetition x design points +
    design point), OUTPUT/design.csv and OUTPUT/manifest.json.

    An existing output is extended: unchanged run files are left as they are,
    new ones added, those of vanished design points moved to
    OUTPUT/retired/<timestamp>/ (never deleted). Changed run documents are
    refused unless --force. The store, results/, checkpoints and files xgen
    did not write are never touched. A second experiment (another uid) in the
    same folder gets manifest-<uid>.json and design-<uid>.csv. An existing
    non-empty folder that xgen did not create (no xgen manifest in it) is
    refused unless --force-folder.

    \b
    xgen generate exp.yaml repetitions=5 factors.alpha.levels=[0.1,0.5]

    {overrides}
    """
    # before any import of xdoe.design, which builds the document models (see _prepare)
    experiment, design, runs = _prepare(file, strict=strict, max_total_runs=max_total_runs, overrides=overrides)
    from xdoe.design.runfiles import write_runs

    _warn(experiment.warnings, quiet)
    if check_imports:
        click.secho("warning: --check-imports is deprecated; use --import (the name xgen check uses)",
                    fg="yellow", err=True)
    if import_ or check_imports:
        resume_gc()
        _check_imports(experiment, runs, quiet)
    target = output if output is not None else Path(experiment.model.output)
    if dry_run:
        _dry_run(experiment, design, runs, target, force_folder)
        return
    resume_gc()
    show_progress = not quiet and sys.stderr.isatty() and len(runs) >= PROGRESS_THRESHOLD
    if show_progress:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        with Progress(
            TextColumn("writing runs"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=Console(file=sys.stderr, emoji=False),
            transient=True,
        ) as bar:
            task = bar.add_task("runs", total=len(runs))
            result = write_runs(runs, target, force=force, force_folder=force_folder,
                                progress=lambda k: bar.update(task, completed=k))
    else:
        result = write_runs(runs, target, force=force, force_folder=force_folder)
    if quiet:
        return
    for folder in result.cleaned:
        click.echo(f"removed {folder}: staging folder of an interrupted xgen", err=True)
    if result.status == "up to date":
        click.echo(f"up to date: {result.path} ({result.runs} runs)")
    elif result.status == "extended":
        for line in _plan_lines(result.plan, result.path, dry=False):
            click.echo(line)
        click.echo(f"{result.runs} runs ({design.method}: {runs.n_points} design points x "
                   f"{runs.repetitions} repetitions); the store and results are untouched")
    else:
        click.echo(
            f"wrote {result.runs} runs to {result.path} "
            f"({design.method}: {runs.n_points} design points x {runs.repetitions} repetitions)"
        )


@main.command()
@click.argument("file", type=click.Path(path_type=Path))
@overrides_argument
@click.option("--strict", is_flag=True, help="Refuse keys xdoe does not know (default: warn).")
@click.option("--quiet", "-q", is_flag=True, help="No warnings; only the result line.")
@click.option("--import", "import_", is_flag=True,
              help="Also import and construct every component module:Class with its params, as "
                   "xrun experiment-check does (imports your code and the environments).")
@max_total_runs_option
@handle_errors
def check(file: Path, overrides: tuple[str, ...], strict: bool, quiet: bool, import_: bool,
          max_total_runs: int | None) -> None:
    """Validate an experiment document and its design; write nothing.

    Builds every design point's run document once, so that errors that depend
    on the chosen levels (a $req index out of range...) are found too. With
    --import, also imports every component and checks its params; errors
    name the experiment document's file:line.

    {overrides}
    """
    # before any import of xdoe.design, which builds the document models (see _prepare)
    experiment, design, runs = _prepare(file, strict=strict, max_total_runs=max_total_runs, overrides=overrides)
    from xdoe.design.runfiles import check_runs

    _warn(experiment.warnings, quiet)
    resume_gc()
    check_runs(runs)
    if import_:
        _check_imports(experiment, runs, quiet=True)
    click.echo(f"ok: {runs.n_points} design points x {runs.repetitions} repetitions"
               + (", every component imported and constructed" if import_ else ""))


@main.group("plot", short_help="Draw the design: pairwise projections of its points.")
def plot() -> None:
    """Pictures of a design (PNG or SVG, by the suffix of -o)."""


@plot.command("design", short_help="Pairwise projections of the design points.")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@output_options("The picture to write: .png or .svg.", default="design.png", metavar="FILE.png|FILE.svg")
@click.option("--strict", is_flag=True, help="Refuse keys xdoe does not know (default: warn).")
@handle_errors
def plot_design(file: Path, output: Path, overwrite: bool, strict: bool) -> None:
    """Pairwise projections of the design points of experiment document FILE
    (each pair of factors as a scatter, level counts on the diagonal)."""
    from xdoe.analysis.plots import plot_design as draw

    check_output(output, overwrite)
    experiment, design, _runs = _prepare(file, strict=strict)
    path = draw(design, output, title=f"Design of {experiment.uid}: {design.method}, {len(design)} points")
    click.echo(f"wrote {path}")


@main.command()
@click.option("--indent", type=int, default=2, show_default=True, help="JSON indentation.")
def schema(indent: int) -> None:
    """Print the JSON Schema of the experiment document.

    \b
    For editors with yaml-language-server (VS Code YAML, neovim, ...):
      xgen schema > xdoe-experiment.schema.json
    and put on the document's first line:
      # yaml-language-server: $schema=./xdoe-experiment.schema.json
    """
    from xdoe.documents import experiment_schema

    click.echo(json.dumps(experiment_schema(), indent=indent, sort_keys=True))
    sys.exit(EXIT_OK)


for _command in (generate, check):  # the overrides paragraph, written once
    _command.help = (_command.help or "").replace("{overrides}", _OVERRIDES_HELP.replace("\n", "\n    "))

main.add_command(augment_command(prepare=_prepare, resume_gc=resume_gc, warn=_warn, plan_lines=_plan_lines))


if __name__ == "__main__":  # pragma: no cover - python -m xdoe.cli._xgen
    main()
