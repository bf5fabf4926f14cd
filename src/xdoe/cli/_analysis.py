"""``xrun results``, ``xrun analyze``, ``xrun plot curves|effects|laydown`` and
``xrun report``: answer the design from the store.

Every command picks its runs from ``[DIR]`` (an xgen output folder: its
experiment, and its ``xrun.sqlite`` when ``--store`` is not given and the file
exists) or ``--experiment UID``, or every run in the store. pandas,
statsmodels and matplotlib are imported when a command runs.

Exit codes: 0 done; 1 nothing to analyse (no episodes) or the store cannot be
read; 2 unusable input (unknown experiment, bad ``--response``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import click

from xdoe.cli._common import EXIT_FAILED, OVERWRITE_HINT, check_output, fail, handle_errors, output_options, store_option

__all__ = ["analysis_commands"]

F = Callable[..., Any]
RESPONSE_HELP = ("Which number answers the design, PHASE:METRIC:STAT (default: last phase, objective, "
                 "mean per run); METRIC objective|reward|steps|wall_time, STAT mean|median|last|max|min|sum.")


def _select(func: F) -> F:
    func = click.argument("output_dir", required=False, metavar="[DIR]",
                          type=click.Path(exists=True, file_okay=False, path_type=Path))(func)
    func = click.option("--experiment", "-e", metavar="UID", default=None,
                        help="Only the runs of this experiment (default: DIR's, else all in the store).")(func)
    return store_option(func)


def _response(func: F) -> F:
    return click.option("--response", "-r", metavar="PHASE:METRIC:STAT", default=None, help=RESPONSE_HELP)(func)


def _experiment_of(output_dir: Path) -> str | None:
    """The experiment uid of an xgen output folder (from its first run file)."""
    from xdoe.documents._yaml import load_yaml

    for path in sorted(output_dir.glob("run-*.yaml"))[:1]:
        data = load_yaml(path).data
        if isinstance(data, dict) and data.get("experiment_uid"):
            return str(data["experiment_uid"])
    return None


def _resolve(output_dir: Path | None, experiment: str | None, store_url: str | None) -> tuple[str | None, str | None]:
    """(experiment, store URL) of the selection: DIR's experiment and its
    ``xrun.sqlite`` unless given."""
    if output_dir is not None:
        experiment = experiment or _experiment_of(output_dir)
        if store_url is None and (output_dir / "xrun.sqlite").is_file():
            store_url = f"sqlite:///{output_dir / 'xrun.sqlite'}"
    return experiment, store_url


def load_frame(output_dir: Path | None, experiment: str | None, store_url: str | None) -> Any:
    """The episode table of the selected runs (:func:`xdoe.results.load`);
    exit 1 with a message when it is empty."""
    from xdoe.cli._inspect import _open_store  # read-only: never creates a store
    from xdoe.results import load

    experiment, store_url = _resolve(output_dir, experiment, store_url)
    with _open_store(store_url) as store:
        frame = load(store, experiment)
    if frame.empty:
        fail("no episodes recorded for these runs: run the campaign first (xrun experiment-start)", EXIT_FAILED)
    return frame


@click.command("results", short_help="Show one row per design point: levels, runs, mean and 95 % CI.")
@_select
@_response
@handle_errors
def results_command(output_dir: Path | None, experiment: str | None, store_url: str | None,
                    response: str | None) -> None:
    """The campaign's table: one row per design point with its factor levels,
    the repetitions done and the response's mean with a 95 % t interval,
    sorted by the response (best first, marked *). Finished runs count too."""
    from rich.console import Console
    from rich.table import Table

    from xdoe.analysis._effects import design_points
    from xdoe.analysis._format import fmt_levels, fmt_num
    from xdoe.analysis._response import parse_response, run_table

    frame = load_frame(output_dir, experiment, store_url)
    table, phase = run_table(frame, parse_response(response))
    points = design_points(table)
    out = Table(title=f"results · response {parse_response(response).label(phase)} · {len(table)} runs")
    for name in ("", "point", "factor levels", "runs", "mean", "95 % CI"):
        out.add_column(name, justify="right" if name in ("point", "runs", "mean") else "left")
    for i, p in enumerate(points):
        ci = "-" if p.ci_low != p.ci_low else f"[{fmt_num(p.ci_low)}, {fmt_num(p.ci_high)}]"
        out.add_row("*" if i == 0 else "", str(p.index), fmt_levels(p.levels), str(p.n), fmt_num(p.mean), ci)
    Console().print(out)
    click.echo(f"best: design point {points[0].index} ({fmt_levels(points[0].levels)}), "
               f"mean {fmt_num(points[0].mean)}")


@click.command("analyze", short_help="Rank the factors: effects, ANOVA, IQM, probability of improvement.")
@_select
@_response
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "markdown", "json"]), default="table",
              show_default=True, help="Output format.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="Seed of the bootstrap resampling.")
@handle_errors
def analyze_command(output_dir: Path | None, experiment: str | None, store_url: str | None,
                    response: str | None, fmt: str, seed: int) -> None:
    """Which factors matter, how much, and which setting is best: per factor
    the level means with 95 % t intervals, the main effect and a type II
    ANOVA (F, p, partial eta²; two-way interactions where the design has the
    replicates), ranked by effect size; continuous factors get a standardised
    regression coefficient, conditional factors are nested within their
    condition. Per design point: the interquartile mean with a stratified
    bootstrap 95 % interval and the probability that the best point beats it
    (Agarwal et al. 2021). Warns below 5 repetitions."""
    from xdoe.analysis import analyze, parse_response, render

    frame = load_frame(output_dir, experiment, store_url)
    result = analyze(frame, parse_response(response), seed=seed)
    click.echo(render(result, fmt), nl=fmt not in ("table",))
    if fmt != "table":
        for warning in result.warnings:
            click.secho(f"warning: {warning}", fg="yellow", err=True)


@click.group("plot", short_help="Draw learning curves, main effects or a run's lay-down.")
def plot_group() -> None:
    """Pictures of a campaign (PNG or SVG, by the suffix of -o)."""


def _output(default: str) -> Callable[[F], F]:
    return output_options("The picture to write: .png or .svg.", default=default, metavar="FILE.png|FILE.svg")


@plot_group.command("curves", short_help="Learning curves on environment steps, with a bootstrap band over runs.")
@_select
@click.option("--by", metavar="FACTOR|point", default=None,
              help="One line per level of this factor, or per design point ('point'). Default: per design "
                   "point when there are at most 8, else per level of the strongest factor (analyze's ranking).")
@click.option("--phase", metavar="PHASE", default=None, help="Phase to draw (default: the first).")
@click.option("--metric", type=click.Choice(["objective", "reward", "steps"]), default="objective",
              show_default=True)
@click.option("--x", "x_axis", type=click.Choice(["steps", "episodes", "wall"]), default="steps", show_default=True,
              help="x axis: cumulative environment steps, episodes, or wall time of the episodes.")
@click.option("--stat", type=click.Choice(["mean", "iqm", "median"]), default="mean", show_default=True,
              help="Aggregate over runs at each point of the curve.")
@click.option("--window", type=click.IntRange(min=1), default=None,
              help="Moving-average window in episodes, per run (default: about 5 % of the shortest run's episodes).")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="Seed of the bootstrap resampling of the bands.")
@click.option("--keep-cut", is_flag=True, default=False,
              help="Keep the episodes cut short by a step budget or a stop (left out by default).")
@_output("curves.png")
@handle_errors
def curves_command(output_dir: Path | None, experiment: str | None, store_url: str | None, by: str | None,
                   phase: str | None, metric: str, x_axis: str, stat: str, window: int | None, seed: int,
                   keep_cut: bool, output: Path, overwrite: bool) -> None:
    """Learning curves of a phase against environment steps (default): each
    run smoothed and interpolated onto a grid all runs cover, the aggregate
    over runs (n in the legend) with a 95 % percentile bootstrap band over
    runs; the last test phase beside them as points per run. Episodes cut
    by a step budget or a stop are left out (--keep-cut keeps them)."""
    from xdoe.analysis.plots import plot_curves

    check_output(output, overwrite)
    frame = load_frame(output_dir, experiment, store_url)
    path = plot_curves(frame, output, by=by, phase=phase, metric=metric, x=x_axis, stat=stat, window=window,
                       seed=seed, keep_cut=keep_cut)
    click.echo(f"wrote {path}")


@plot_group.command("effects", short_help="Main effects and the interaction of the two strongest factors.")
@_select
@_response
@_output("effects.png")
@handle_errors
def effects_command(output_dir: Path | None, experiment: str | None, store_url: str | None,
                    response: str | None, output: Path, overwrite: bool) -> None:
    """Main-effects plot (level means with 95 % intervals, one panel per
    factor, strongest first) and the interaction plot of the two strongest factors."""
    from xdoe.analysis import analyze, parse_response
    from xdoe.analysis.plots import plot_effects

    check_output(output, overwrite)
    frame = load_frame(output_dir, experiment, store_url)
    resp = parse_response(response)
    path = plot_effects(analyze(frame, resp), frame, output, response=resp)
    click.echo(f"wrote {path}")


@plot_group.command("laydown", short_help="Environments, agents, sensors and actuators of a run, per phase.")
@click.argument("run_file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@_output("laydown.svg")
@handle_errors
def laydown_command(run_file: Path, output: Path, overwrite: bool) -> None:
    """Lay-down diagram of a run document: per phase, its environments and
    agents, and which sensors and actuators connect them."""
    from xdoe.analysis.plots import plot_laydown
    from xdoe.documents._yaml import load_yaml

    check_output(output, overwrite)
    path = plot_laydown(load_yaml(run_file).data, output)
    click.echo(f"wrote {path}")


@click.command("report", short_help="Write one self-contained HTML report of the campaign.")
@_select
@_response
@output_options("The HTML file to write.", default="report.html", metavar="FILE.html")
@click.option("--document", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="The experiment document (default: the YAML file in . or experiments/ whose sha256 "
                   "DIR/manifest.json names).")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="Seed of the bootstrap resampling.")
@handle_errors
def report_command(output_dir: Path | None, experiment: str | None, store_url: str | None,
                   response: str | None, output: Path, overwrite: bool, document: Path | None,
                   seed: int) -> None:
    """One self-contained HTML report (images embedded, no network needed):
    experiment document, design table, campaign status, results, effects,
    aggregates and every plot."""
    from xdoe.analysis import parse_response, write_report

    check_output(output, overwrite)
    frame = load_frame(output_dir, experiment, store_url)
    experiment, store_url = _resolve(output_dir, experiment, store_url)
    path = write_report(frame, output, response=parse_response(response), output_dir=output_dir,
                        store_url=store_url, experiment=experiment, document=document, seed=seed,
                        overwrite=overwrite, hint=OVERWRITE_HINT)
    click.echo(f"wrote {path} ({path.stat().st_size / 1024:.0f} KiB)")


def analysis_commands() -> list[click.Command]:
    """The commands to add to the ``xrun`` group."""
    return [results_command, analyze_command, plot_group, report_command]
