"""``xrun plan``: how many repetitions a comparison needs, from a pilot
campaign (:mod:`xdoe.analysis._plan`; Colas, Sigaud & Oudeyer 2018).

The per-run scores are those of ``xrun results`` and ``xrun analyze`` (the
same selection of experiment, response and agent). Exit codes as
:mod:`xdoe.cli._analysis`.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import click

from xdoe.cli._analysis import _goal, _response, _rich_table, _select, load_frame
from xdoe.cli._common import Number, console, handle_errors

__all__ = ["plan_command"]

HEADERS = ["points", "pilot n", "observed delta", "delta", "SD a", "SD b", "n (Welch)", "n (bootstrap)", "missing"]


def _f(x: Any, digits: int = 4) -> str:
    from xdoe.analysis import fmt_num

    return "-" if x is None else fmt_num(x, digits)


def _rows(plan: Any) -> list[list[str]]:
    rows = []
    for c in plan.comparisons:
        boot = f">{plan.cap}" if c.bootstrap_capped else ("-" if c.bootstrap is None else str(c.bootstrap))
        rows.append([f"{c.a} vs {c.b}", f"{c.n_a} / {c.n_b}", _f(c.observed), _f(c.delta), _f(c.sd_a), _f(c.sd_b),
                     "-" if c.welch is None else str(c.welch), boot, "-" if c.missing is None else str(c.missing)])
    return rows


def _header_lines(plan: Any) -> list[str]:
    delta = "observed difference of means" if plan.delta is None else f"{plan.delta:g}"
    pilot = sorted({n for c in plan.comparisons for n in (c.n_a, c.n_b)})
    return [f"{plan.experiment or '(no experiment)'} · response {plan.response}"
            + (f" · agent {plan.agent}" if plan.agent is not None else ""),
            f"repetitions per point to detect delta = {delta} at power {plan.power:g}, alpha {plan.alpha:g} "
            f"(two-sided); pilot n {', '.join(map(str, pilot)) or '-'} run(s) per point",
            f"n (Welch): {plan.methods['welch']}",
            f"n (bootstrap): {plan.methods['bootstrap']}",
            "missing: the larger of the two answers minus the smaller pilot; a is the better point by its mean"
            + (f"; {plan.goal.note()}" if plan.goal.minimize else "")]


def render_plan(plan: Any, fmt: str) -> str:
    """``plan`` as ``table`` (rich), ``markdown``, ``csv`` or ``json`` text;
    a list of plans (one per agent of a game) as one document: ``json`` an
    object ``{"experiment", "response", "agents": {name: plan}}`` (as ``xrun
    analyze`` gives a game), ``csv`` one header and every agent's rows, the
    other formats one block per agent."""
    plans = plan if isinstance(plan, list) else [plan]
    if fmt == "json":
        if not isinstance(plan, list):
            return json.dumps(plan.to_dict(), indent=2, default=str)
        return json.dumps({"experiment": plans[0].experiment, "response": plans[0].response,
                           "agents": {p.agent: p.to_dict() for p in plans}}, indent=2, default=str)
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["experiment", "response", "agent", "goal", "alpha", "power", "delta", "point_a", "point_b",
                    "pilot_n_a", "pilot_n_b", "mean_a", "mean_b", "sd_a", "sd_b", "observed_delta", "n_welch_exact",
                    "n_welch", "n_bootstrap", "bootstrap_capped", "missing"])
        for plan, c in ((p, c) for p in plans for c in p.comparisons):
            w.writerow([plan.experiment, plan.response, plan.agent or "", plan.goal.direction, plan.alpha,
                        plan.power, c.delta, c.a, c.b,
                        c.n_a, c.n_b, c.mean_a, c.mean_b, c.sd_a, c.sd_b, c.observed,
                        "" if c.welch_exact is None else c.welch_exact, "" if c.welch is None else c.welch,
                        "" if c.bootstrap is None else c.bootstrap, c.bootstrap_capped,
                        "" if c.missing is None else c.missing])
        return buf.getvalue()
    lines = _header_lines(plan)
    if fmt == "markdown":
        out = [f"**{lines[0]}**", ""] + [f"{line}  " for line in lines[1:]] + [""]
        out.append("| " + " | ".join(HEADERS) + " |")
        out.append("|" + "---|" * len(HEADERS))
        out += ["| " + " | ".join(r) + " |" for r in _rows(plan)]
        return "\n".join(out) + "\n"
    buf = io.StringIO()
    from rich.console import Console

    out = Console(file=buf, width=console().width, no_color=True, highlight=False)
    out.print(lines[0], markup=False, style="bold")
    for line in lines[1:]:
        out.print(line, markup=False)
    from xdoe._tables import print_whole

    print_whole(out.print, out, _rich_table(HEADERS, _rows(plan)))
    return buf.getvalue()


@click.command("plan", short_help="How many repetitions per point a comparison needs, from a pilot campaign.")
@_select
@_response
@click.option("--agent", metavar="NAME", default=None, help="Whose objective: one agent of runs with several.")
@click.option("--stat", "statistic", type=click.Choice(["iqm", "mean", "median"]), default=None,
              help="Estimate over runs that picks the best point, as xrun analyze ranks them "
                   "[default: an optuna design's stat, the one its trials were told, else iqm].")
@click.option("--delta", type=Number(), default=None,
              help="The difference of means to detect [default: the observed one of each comparison].")
@click.option("--power", type=Number(0, 1, min_open=True, max_open=True), default=0.8, show_default=True,
              help="Power 1 - beta.")
@click.option("--alpha", type=Number(0, 1, min_open=True, max_open=True), default=0.05, show_default=True,
              help="Level of the two-sided test.")
@click.option("--compare", type=(int, int), default=None, metavar="I J",
              help="Compare design points I and J only [default: the best against each other point].")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="Seed of the bootstrap resampling (numpy SeedSequence).")
@click.option("--trials", type=click.IntRange(min=100), default=1000, show_default=True,
              help="Bootstrap resamples per candidate number of runs.")
@click.option("--cap", type=click.IntRange(min=2), default=1000, show_default=True,
              help="Largest number of runs per point the bootstrap search tries.")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "csv", "markdown"]), default="table",
              show_default=True)
@_goal
@handle_errors
def plan_command(output_dir: Path | None, experiment: str | None, include_branches: bool, store_url: str | None,
                 response: str | None, agent: str | None, statistic: str | None, delta: float | None, power: float,
                 alpha: float, compare: tuple[int, int] | None, seed: int, trials: int, cap: int, fmt: str,
                 goal: str | None) -> None:
    """How many repetitions (seeds) per design point a comparison needs
    (Colas, Sigaud & Oudeyer 2018): from the pilot's per-run scores (as
    xrun analyze computes them), per comparison -- the best point against
    each other point (best by --goal: the highest estimate, or the lowest
    for minimize or a design that declared direction: minimize), or
    --compare I J -- the runs per point needed to detect
    a difference delta (default: the observed difference of means) at power
    --power and level --alpha, by Welch's t test (statsmodels' power solver,
    effect size delta / pooled SD) and by a bootstrap of the pilot scores;
    and how many runs are missing. Add them with
    xgen augment DOC --replicate-to N. Only the design's runs count. In a
    game of several agents, one plan per agent (json: {"experiment",
    "response", "agents": {NAME: plan}}; csv: one header, the agent column);
    --agent NAME plans for that agent alone."""
    from xdoe.analysis import parse_response, pilot_plan, response_agents, split_branches

    resp = parse_response(response)
    frame = load_frame(output_dir, experiment, store_url, False, resp)
    plans = []
    for who in response_agents(split_branches(frame)[0], resp, agent):
        plan = pilot_plan(frame, resp, agent=who, statistic=statistic, goal=goal, alpha=alpha, power=power,
                          delta=delta, compare=compare, seed=seed, trials=trials, cap=cap)
        plans.append(plan)
        for c in plan.comparisons:
            for note in c.notes:
                click.secho(f"note: {c.a} vs {c.b}: {note}", fg="yellow", err=True)
        for w in plan.warnings:
            click.secho(f"warning: {w}", fg="yellow", err=True)
    if fmt in ("json", "csv"):  # one document: a game's agents in one JSON object, one CSV header
        click.echo(render_plan(plans if len(plans) > 1 else plans[0], fmt), nl=False)
        return
    texts = []
    for plan in plans:
        texts.append(render_plan(plan, fmt))
        if fmt == "table" and plan.recommended is not None:
            texts.append(f"to reach it everywhere: xgen augment DOC --replicate-to {plan.recommended}\n")
    click.echo("".join(texts), nl=False)
