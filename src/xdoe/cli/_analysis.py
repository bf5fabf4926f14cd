"""``xrun results``, ``xrun analyze``, ``xrun plot curves|effects|laydown`` and
``xrun report``: answer the design from the store.

Every command works on ONE experiment (:mod:`xdoe.cli._select`): ``[DIR]``
(an xgen output folder: its experiment, and its ``xrun.sqlite`` when
``--store`` is not given and the file exists) or the store, and ``-e UID``
where DIR or the store holds several. Every table, picture and report names
the experiment and the response. pandas, statsmodels and matplotlib are
imported when a command runs.

Exit codes: 0 done; 1 nothing to analyse (no episodes) or the store cannot be
read; 2 unusable input (several experiments and no ``-e``, unknown
experiment, bad ``--response``, a store that cannot be opened).
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any, Callable, Iterator

import click

from xdoe.cli._common import EXIT_FAILED, OVERWRITE_HINT, check_output, console, fail, handle_errors, output_options
from xdoe.cli._select import choose_experiment, open_store, select_options, store_of

__all__ = ["analysis_commands"]

F = Callable[..., Any]
RESPONSE_HELP = ("Which number answers the design, PHASE:METRIC:STAT (default: last phase, objective, "
                 "mean per run); METRIC objective|reward|steps|wall_time, STAT mean|median|last|max|min|sum.")


def _select(func: F) -> F:
    func = click.argument("output_dir", required=False, metavar="[DIR]",
                          type=click.Path(exists=True, file_okay=False, path_type=Path))(func)
    func = click.option("--include-branches", is_flag=True,
                        help="Also show the sessions branched or grown from these runs (xrun branch, "
                             "xrun grow), each as its own row labelled as a branch; never pooled "
                             "into the design.")(func)
    return select_options(func)


def _response(func: F) -> F:
    return click.option("--response", "-r", metavar="PHASE:METRIC:STAT", default=None, help=RESPONSE_HELP)(func)


def _one_agent(func: F) -> F:
    """``--agent NAME`` of a picture, which draws one analysis: whose objective in a game of several agents."""
    return click.option("--agent", metavar="NAME", default=None,
                        help="Whose objective: one agent of runs with several (a game), which a picture "
                             "needs; default: the runs' only agent.")(func)


def _goal(func: F) -> F:
    """``--goal maximize|minimize``: which estimate is best (:func:`xdoe.analysis.resolve_goal`)."""
    return click.option("--goal", type=click.Choice(["maximize", "minimize"]), default=None,
                        help="Whether a higher or a lower response is better: ranks the design points, picks "
                             "'best' and sets what the probability of improvement compares [default: the "
                             "direction the design declared for the response (design: {method: optuna, "
                             "direction: ...}), else the --goal of its last xgen augment --steepest-ascent/"
                             "--confirm block, else maximize].")(func)


def _statistic(func: F) -> F:
    """``--stat`` (the estimate over runs that ranks design points), ``--agent`` and ``--seed``."""
    func = click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
                        help="Seed of the bootstrap resampling.")(func)
    func = click.option("--agent", metavar="NAME", default=None,
                        help="Whose objective: one agent of runs with several (a game); default: "
                             "each agent in turn, never their average.")(func)
    return click.option("--stat", "statistic", type=click.Choice(["iqm", "mean", "median"]), default=None,
                        help="Point estimate over a design point's runs, used for ranking, 'best', the "
                             "bootstrap interval and the probability of improvement (IQM: Agarwal et al. 2021) "
                             "[default: an optuna design's stat, the one its trials were told, else iqm].")(func)


def _resolve(output_dir: Path | None, experiment: str | None, store_url: str | None) -> tuple[str | None, str | None]:
    """(experiment, store URL) of the selection (:mod:`xdoe.cli._select`):
    exit 2 when the store cannot be opened or no single experiment is chosen."""
    store_url = store_of(output_dir, store_url)
    with open_store(store_url) as store:
        return choose_experiment(output_dir, experiment, store), store_url


def load_frame(output_dir: Path | None, experiment: str | None, store_url: str | None,
               include_branches: bool = False, response: Any = None) -> Any:
    """The runs' scores for ``response`` (default: the test phase's mean
    objective) of the selected experiment, aggregated by the database
    (:func:`xdoe.analysis.load_scores`: one row per run and agent; with
    ``include_branches`` the sessions of their trees too); exit 2 when no
    single experiment is chosen or the store cannot be opened, 1 when the
    table is empty."""
    from xdoe.analysis import Response, load_scores

    with selected_store(output_dir, experiment, store_url) as (store, experiment):
        frame = load_scores(store, response or Response(), experiment, include_branches=include_branches)
    if frame.empty:
        fail(NO_EPISODES, EXIT_FAILED)
    return frame


NO_EPISODES = "no episodes recorded for these runs: run the campaign first (xrun experiment-start)"


@contextlib.contextmanager
def selected_store(output_dir: Path | None, experiment: str | None, store_url: str | None) -> Iterator[Any]:
    """``(store, experiment)`` of the selection, the store open read-only
    while the block runs; exit 2 when no single experiment is chosen or the
    store cannot be opened, 1 when the experiment has no run recorded."""
    store_url = store_of(output_dir, store_url)
    with open_store(store_url) as store:
        experiment = choose_experiment(output_dir, experiment, store)
        if experiment is not None and experiment not in store.runs.experiments():  # generated, never run
            fail(f"no run of experiment {experiment!r} is recorded in {store.url}: run the campaign first "
                 "(xrun experiment-start)", EXIT_FAILED)
        yield store, experiment


@click.command("results", short_help="Show one row per design point, ranked by IQM over runs with 95 % CIs.")
@_select
@_response
@_statistic
@_goal
@handle_errors
def results_command(output_dir: Path | None, experiment: str | None, include_branches: bool,
                    store_url: str | None, response: str | None, statistic: str | None, agent: str | None,
                    seed: int, goal: str | None) -> None:
    """The campaign's table: one row per design point with its factor levels,
    the runs done and the response's estimate over runs (--stat: IQM by
    default, an optuna design's stat) with a 95 % stratified-bootstrap interval and the probability
    that the best point beats it, best first (marked *); best is the highest
    estimate, or the lowest with --goal minimize or when the design declared
    direction: minimize for the response. A run's score is
    its response (one number per run: the unit of replication). In a game
    of several agents, one table per agent (or --agent NAME). Only the
    design's runs: sessions branched or grown from them are listed after it,
    one row each, with --include-branches."""
    from xdoe.analysis import parse_response, response_agents, results_table, split_branches

    resp = parse_response(response)
    frame = load_frame(output_dir, experiment, store_url, include_branches, resp)
    out = console()
    for who in response_agents(split_branches(frame)[0], resp, agent):
        result = results_table(frame, resp, statistic=statistic, agent=who, seed=seed, goal=goal)
        title, headers, rows, branches, more = result.drawn(
            "xrun analyze --format csv (markdown, json) with the same options")
        out.print(result.title(), markup=False, highlight=False, style="bold")
        out.print(title, markup=False, highlight=False)
        out.print(_rich_table(headers, rows, branches))
        if more:
            out.print(more, markup=False, highlight=False)
        best = result.best_line()
        if best is not None:
            click.echo(best)
        for note in result.warnings:
            click.secho(f"warning: {note}", fg="yellow", err=True)


def _rich_table(headers: list[str], rows: list[list[str]], extra: list[list[str]] | None = None) -> Any:
    """The rows, then ``extra`` (branches) in a section of their own."""
    from rich.table import Table
    from rich.text import Text

    out = Table()
    for h in headers:
        out.add_column(Text(h), justify="right" if h in ("runs", "point") else "left", overflow="fold")
    for r in rows:  # Text: a level such as "[red]" or ":smile:" is shown as written, not as markup or emoji
        out.add_row(*map(Text, r))
    if extra:
        out.add_section()
    for r in extra or []:
        out.add_row(*map(Text, r))
    return out


@click.command("analyze", short_help="Rank the factors: effects, ANOVA, IQM, probability of improvement.")
@_select
@_response
@_statistic
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "markdown", "json"]), default="table",
              show_default=True,
              help="Output format: csv, markdown and json hold every row; the table draws the best 500 rows of a "
                   "longer table and says how many more there are.")
@_goal
@handle_errors
def analyze_command(output_dir: Path | None, experiment: str | None, include_branches: bool,
                    store_url: str | None, response: str | None, statistic: str | None, agent: str | None, seed: int,
                    fmt: str, goal: str | None) -> None:
    """Which factors matter, how much, and which setting is best: per factor
    the level means with 95 % bootstrap intervals over runs, the main effect
    and a type II ANOVA (F, p, partial eta²; two-way interactions where the
    design has the replicates), ranked by effect size; continuous factors get
    a standardised regression coefficient, conditional factors are nested
    within their condition. Per design point: the estimate over runs (--stat,
    IQM by default, an optuna design's stat) with a stratified-bootstrap 95 % interval and the
    probability that the best point beats it (Agarwal et al. 2021); best is
    the highest estimate, or the lowest with --goal minimize or when the
    design declared direction: minimize for the response (json: "goal"). Warns
    below 5 repetitions. An optuna design adds its best trial, history,
    parameter importances and Pareto front (json: "optuna"). In a game of
    several agents, one analysis per agent (json: {"experiment", "response",
    "agents": {NAME: analysis}}); --agent NAME answers that agent alone
    (json: the one analysis, its "agent" naming it, as without a game).
    With --include-branches each branched or grown session is one more row
    of the design points table (P(best > branch)); the factors are ranked on
    the design's runs only."""
    from xdoe.analysis import analyze, parse_response, read_design, render, response_agents, split_branches

    resp = parse_response(response)
    frame = load_frame(output_dir, experiment, store_url, include_branches, resp)
    design = read_design(output_dir, _resolve(output_dir, experiment, store_url)[0])
    who = response_agents(split_branches(frame)[0], resp, agent)
    with selected_store(output_dir, experiment, store_url) as (store, _chosen):  # an optuna design's answer reads it
        results = [analyze(frame, resp, statistic=statistic, agent=a, seed=seed, design=design, goal=goal,
                           store=store) for a in who]
    # one analysis (the runs' one agent, or --agent NAME) is its own JSON object; a game's several are keyed by agent
    text = render(results if len(results) > 1 else results[0], fmt, width=console().width)
    if len(results) > 1 and results[0].adaptive is not None and fmt == "json":  # as before: the first agent's, on top
        import json

        text = json.dumps({**json.loads(text), "optuna": results[0].adaptive}, indent=2, ensure_ascii=False)
    click.echo(text, nl=fmt not in ("table",))
    if fmt != "table":
        for result in results:
            for warning in result.warnings:
                click.secho(f"warning: {warning}", fg="yellow", err=True)


def _adaptive(frame: Any, resp: Any, agent: str | None, design: dict | None, output_dir: Path | None,
              experiment: str | None, store_url: str | None) -> dict | None:
    """An optuna design's best trial, importances, history and Pareto front
    (:func:`xdoe.analysis.adaptive_answer`), else ``None``."""
    if not design or design.get("method") != "optuna":
        return None
    from xdoe.analysis import adaptive_answer

    with selected_store(output_dir, experiment, store_url) as (store, chosen):
        return adaptive_answer(frame, design, store, experiment=chosen, response=resp, agent=agent)


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
@click.option("--agent", metavar="NAME", default=None,
              help="Draw this agent's episodes (default: each episode's mean over its agents).")
@_output("curves.png")
@handle_errors
def curves_command(output_dir: Path | None, experiment: str | None, include_branches: bool,
                   store_url: str | None, by: str | None,
                   phase: str | None, metric: str, x_axis: str, stat: str, window: int | None, seed: int,
                   keep_cut: bool, agent: str | None, output: Path, overwrite: bool) -> None:
    """Learning curves of a phase against environment steps (default): each
    run smoothed and interpolated onto a grid all runs cover, the aggregate
    over runs (n in the legend) with a 95 % percentile bootstrap band over
    runs; the last test phase beside them as points per run. Episodes cut
    by a step budget or a stop are left out (--keep-cut keeps them). An
    episode of several agents is their mean, or --agent's alone (the
    dashboard's run page draws both). With --include-branches each branched
    or grown session is a curve of its own."""
    from xdoe.analysis.plots import plot_curves

    check_output(output, overwrite)
    from xdoe.errors import InputError

    with selected_store(output_dir, experiment, store_url) as (store, experiment):
        try:
            path = plot_curves(store, output, experiment=experiment, include_branches=include_branches, by=by,
                               phase=phase, metric=metric, x=x_axis, stat=stat, window=window, seed=seed,
                               keep_cut=keep_cut, agent=agent)
        except InputError as exc:
            if str(exc).startswith("no episodes recorded"):  # nothing to show, as load_frame says it
                fail(NO_EPISODES, EXIT_FAILED)
            raise
    click.echo(f"wrote {path}")


@plot_group.command("effects", short_help="Main effects and the interaction of the two strongest factors.")
@_select
@_response
@_one_agent
@_output("effects.png")
@handle_errors
def effects_command(output_dir: Path | None, experiment: str | None, include_branches: bool,
                    store_url: str | None, response: str | None, agent: str | None, output: Path,
                    overwrite: bool) -> None:
    """Main-effects plot (level means with 95 % intervals, one panel per
    factor, strongest first, each with the effect, p and model of xrun
    analyze) and the interaction plot of the two strongest factors; in a
    game of several agents, --agent's."""
    from xdoe.analysis import analyze, parse_response, read_design
    from xdoe.analysis.plots import plot_effects

    check_output(output, overwrite)
    resp = parse_response(response)
    frame = load_frame(output_dir, experiment, store_url, include_branches, resp)
    design = read_design(output_dir, _resolve(output_dir, experiment, store_url)[0])  # as xrun analyze reads it
    path = plot_effects(analyze(frame, resp, agent=agent, design=design), frame, output, response=resp)
    click.echo(f"wrote {path}")


@plot_group.command("design", short_help="The plot matched to the design: half-normal, contour or mu*-sigma.")
@_select
@_response
@_one_agent
@_output("design.png")
@handle_errors
def design_plot_command(output_dir: Path | None, experiment: str | None, include_branches: bool,
                        store_url: str | None, response: str | None, agent: str | None, output: Path,
                        overwrite: bool) -> None:
    """The picture of the analysis matched to the design: a two-level design's
    half-normal (Daniel) plot of its effects, active ones labelled; a
    response-surface design's contour plot of the fitted second-order model
    over its two strongest factors with the design points and the stationary
    point; a Morris design's mu*-sigma plot. Exit 1 for any other design.
    Branches never enter it (the design's runs only)."""
    from xdoe.analysis import analyze, parse_response, read_design
    from xdoe.analysis.plots import plot_doe

    check_output(output, overwrite)
    resp = parse_response(response)
    frame = load_frame(output_dir, experiment, store_url, response=resp)
    uid = _resolve(output_dir, experiment, store_url)[0]
    result = analyze(frame, resp, agent=agent, design=read_design(output_dir, uid))
    path = plot_doe(result, output, experiment=uid or "all experiments")
    if path is None:
        fail("no plot for this design: xrun plot design draws two-level (half-normal), response-surface "
             "(contour) and Morris (mu*-sigma) designs", EXIT_FAILED)
    click.echo(f"wrote {path}")


@plot_group.command("optimization", short_help="An adaptive (optuna) design: the best response against trials.")
@_select
@_response
@_one_agent
@_output("optimization.png")
@handle_errors
def optimization_command(output_dir: Path | None, experiment: str | None, include_branches: bool,
                         store_url: str | None, response: str | None, agent: str | None, output: Path,
                         overwrite: bool) -> None:
    """Each trial's response (its runs aggregated by the design's stat) and
    the best so far against the trial number, of a design: {method: optuna}.
    Exit 1 for any other design."""
    from xdoe.analysis import parse_response, plot_optimization, read_design, response_agents, split_branches
    from xdoe.errors import InputError

    check_output(output, overwrite)
    resp = parse_response(response)
    frame = load_frame(output_dir, experiment, store_url, response=resp)
    uid = _resolve(output_dir, experiment, store_url)[0]
    who = response_agents(split_branches(frame)[0], resp, agent)
    if len(who) > 1:  # one picture answers one agent, never the first of several silently
        raise InputError(f"the runs have several agents ({', '.join(map(str, who))}): choose one with --agent NAME")
    summary = _adaptive(frame, resp, who[0], read_design(output_dir, uid), output_dir, experiment, store_url)
    if summary is None:
        fail("no optimization plot for this design: xrun plot optimization draws designs of method optuna "
             "(xrun optimize)", EXIT_FAILED)
    cut = len(summary.get("pruned_trials") or [])
    trials = f"{summary['trials']} complete trials" + (f", {cut} pruned" if cut else "")
    path = plot_optimization(summary, output, title=f"{uid} · response {summary['response']} · {trials}")
    click.echo(f"wrote {path}")


@plot_group.command("laydown", short_help="Environments, agents, sensors and actuators of a run, per phase.")
@click.argument("run_file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@_output("laydown.svg")
@handle_errors
def laydown_command(run_file: Path, output: Path, overwrite: bool) -> None:
    """Lay-down diagram of a run document: per phase, its environments and
    agents, and which sensors and actuators connect them."""
    from xdoe.analysis.plots import plot_laydown
    from xdoe.documents import load_yaml

    check_output(output, overwrite)
    path = plot_laydown(load_yaml(run_file).data, output)
    click.echo(f"wrote {path}")


@click.command("report", short_help="Write one self-contained HTML report of the campaign.")
@_select
@_response
@output_options("The HTML file to write.", default="report.html", metavar="FILE.html")
@click.option("--document", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="The experiment document (default: the YAML file in . or experiments/ whose sha256 "
                   "the experiment's manifest in DIR names).")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="Seed of the bootstrap resampling.")
@click.option("--stat", "statistic", type=click.Choice(["iqm", "mean", "median"]), default=None,
              help="Point estimate over a design point's runs that ranks them, as xrun analyze --stat "
                   "[default: an optuna design's stat, the one its trials were told, else iqm].")
@_goal
@handle_errors
def report_command(output_dir: Path | None, experiment: str | None, include_branches: bool,
                   store_url: str | None, response: str | None, output: Path, overwrite: bool,
                   document: Path | None, seed: int, statistic: str | None, goal: str | None) -> None:
    """One self-contained HTML report (images embedded, no network needed):
    experiment document, design table, campaign status, results, effects,
    aggregates and every plot."""
    from xdoe.analysis import parse_response, write_report

    check_output(output, overwrite)
    resp = parse_response(response)
    scores = load_frame(output_dir, experiment, store_url, include_branches, resp)  # the analysis
    experiment, store_url = _resolve(output_dir, experiment, store_url)
    # the learning curves come from the store (xdoe.analysis.plots.plot_curves), not from the episodes
    path = write_report(None, output, response=resp, output_dir=output_dir,
                        store_url=store_url, experiment=experiment, document=document, seed=seed,
                        statistic=statistic, overwrite=overwrite, hint=OVERWRITE_HINT, scores=scores, include_branches=include_branches,
                        goal=goal)
    click.echo(f"wrote {path} ({path.stat().st_size / 1024:.0f} KiB)")


def analysis_commands() -> list[click.Command]:
    """The commands to add to the ``xrun`` group (``xrun plan``: :mod:`xdoe.cli._plan`)."""
    return [results_command, analyze_command, plot_group, report_command]
