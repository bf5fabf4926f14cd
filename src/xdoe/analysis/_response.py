"""The response of a campaign: one number per run, read from the episode table.

A response is ``PHASE:METRIC:STAT``: the phase (its name, or its index in the
schedule; default the last phase), the episode column (``objective`` by
default, or ``reward``, ``steps``, ``wall_time``), and how a run's episodes
are summarised into the run's one score (``mean`` by default, ``iqm``,
``median``, ``last``, ``max``, ``min``, ``sum``). A metric may be a
comparison, ``objective>0``: 1 for an episode where it holds, else 0, so
``testing:objective>0:mean`` is a run's win (success) rate.

The unit of replication is the run: a run's score is one number per agent.
In a run with several agents (a two-player game) the agents are never
pooled: :func:`run_table` takes one ``agent`` (:func:`response_agents` lists
the choices).

One rule decides which runs a response leaves out: those whose chosen
instance did not finish, listed with their status in the frame's
``attrs["xdoe_left_out"]`` (:data:`xdoe.results.LEFT_OUT_ATTR`, from the
instance statuses the results table chose): ``pruned`` (their
``run_config.prune`` rule ended them at a rung, so a score of them would
measure the rung, not the setting), or ``failed``, ``interrupted``,
``running``, ... when no instance of the run is done (their episodes stop
where the run stopped). :func:`left_out_notes` names them by status in one
note and says that a fixed design's balance is broken.

Episodes cut short by a budget (``cut_by`` ``step_budget`` or ``stop``, see
:mod:`xdoe._cuts`: the phase's step budget ran out, or a condition stopped
the phase, mid-episode) are left out unless ``Response.keep_cut``: their
return measures the budget, not the agent.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from xdoe._cuts import BUDGET_CUTS
from xdoe.errors import InputError

if TYPE_CHECKING:
    from collections.abc import Sequence

    import pandas as pd

__all__ = ["Response", "parse_response", "run_table", "phase_rows", "response_agents", "factor_columns",
           "display_name", "load_scores", "SCORES_ATTR", "left_out_notes", "resolve_phase"]

#: ``df.attrs`` key of a :func:`load_scores` frame: what it scored
SCORES_ATTR = "xdoe_scores"

METRICS = ("objective", "reward", "steps", "wall_time")
STATS = ("mean", "iqm", "median", "last", "max", "min", "sum")
_COMPARISON = re.compile(r"^(?P<metric>[a-z_]+)\s*(?P<op>>=|<=|==|!=|>|<)\s*(?P<value>[-+0-9.eE]+)$")


@dataclass(frozen=True)
class Response:
    """Which number answers the design: ``phase`` (name, index text, or
    ``None`` for the last phase), ``metric`` (episode column), ``stat``;
    ``keep_cut``: keep the episodes cut short by a budget (see the module docstring)."""

    phase: str | None = None
    metric: str = "objective"
    stat: str = "mean"
    keep_cut: bool = False

    def label(self, phase: str | None = None) -> str:
        return f"{phase or self.phase or 'last phase'}:{self.metric}:{self.stat}"


def parse_response(text: str | None) -> Response:
    """Parse ``PHASE:METRIC:STAT`` (any part may be empty for its default).

    Raises:
        InputError: an unknown metric or statistic, or more than three parts.
    """
    if not text:
        return Response()
    parts = text.split(":")
    if len(parts) > 3:
        raise InputError(f"--response {text!r}: expected PHASE:METRIC:STAT, e.g. testing:objective:mean")
    parts += [""] * (3 - len(parts))
    phase, metric, stat = (p.strip() for p in parts)
    metric = metric or "objective"
    stat = stat or "mean"
    match = _COMPARISON.match(metric)
    if match:
        try:
            float(match["value"])
        except ValueError:
            raise InputError(f"--response {text!r}: {match['value']!r} is not a number") from None
    if (match["metric"] if match else metric) not in METRICS:
        raise InputError(f"--response {text!r}: unknown metric {metric!r}; expected one of {', '.join(METRICS)}")
    if stat not in STATS:
        raise InputError(f"--response {text!r}: unknown statistic {stat!r}; expected one of {', '.join(STATS)}")
    return Response(phase or None, metric, stat)


def _metric_values(rows: "pd.DataFrame", metric: str) -> "pd.Series":
    """The episode values of ``metric``; a comparison (``objective>0``) is 1.0 where it holds, else 0.0."""
    import operator

    match = _COMPARISON.match(metric)
    if not match:
        return rows[metric].astype(float)
    ops = {">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le, "==": operator.eq,
           "!=": operator.ne}
    return ops[match["op"]](rows[match["metric"]].astype(float), float(match["value"])).astype(float)


def display_name(column: str) -> str:
    """A factor's name from its column (``factor:agent`` -> ``agent``)."""
    return column[len("factor:"):] if column.startswith("factor:") else column


def factor_columns(frame: "pd.DataFrame") -> list[str]:
    """The factor columns of a :func:`xdoe.results.load` frame."""
    from xdoe.results import FACTORS_ATTR

    return list(frame.attrs.get(FACTORS_ATTR, []))


def resolve_phase(phase: str | None, phases: "Sequence[str]") -> str | None:
    """The phase a response names among ``phases`` (the results' phases in
    schedule order): ``None`` is the last one, an index text (``"0"``) that
    is no phase's name the phase at that index, a name itself (whether or
    not it is in ``phases``); ``None`` when ``phase`` is ``None`` and there are no phases."""
    from xdoe._phases import phase_named

    if phase is None:
        return phases[-1] if phases else None
    return phase_named(phase, phases) or phase


def phase_rows(frame: "pd.DataFrame", response: Response) -> tuple["pd.DataFrame", str]:
    """The episode rows of the response's phase and its name, without the
    episodes cut short by a budget unless ``response.keep_cut`` (see the
    module docstring); runs without a design point get their own (-1, -2, ...)
    and repetition 0.

    Raises:
        InputError: no episodes, no such phase, or every episode of a run in
            the phase was cut by a budget (the run would vanish silently).
    """
    if frame.empty:
        raise InputError("no episodes recorded: nothing to analyse (run the campaign first)")
    left_out = _left_out(frame)
    if left_out:
        frame = frame[~frame["run"].isin(list(left_out))]
        if frame.empty:
            raise InputError(f"no run has finished ({_statuses(left_out)}): nothing to analyse"
                             + _resume_hint(left_out))
    if SCORES_ATTR in frame.attrs:
        return _score_rows(frame, response)
    phases = list(dict.fromkeys(frame["phase"]))
    phase = resolve_phase(response.phase, phases)
    if phase not in phases:
        raise InputError(f"--response: no phase {phase!r} in the results (phases: {', '.join(map(str, phases))})")
    rows = frame[frame["phase"] == phase]
    if not response.keep_cut and "cut_by" in rows.columns:
        cut = rows["cut_by"].isin(BUDGET_CUTS)
        if cut.any():
            kept = set(rows.loc[~cut, "run"])
            lost = sorted(set(rows["run"]) - kept)
            if lost:
                raise InputError(f"phase {phase!r}: every episode of run(s) {', '.join(map(str, lost[:5]))} was cut "
                                 "short by a step budget or a stop; nothing is left to measure (choose another "
                                 "phase with --response, or keep cut episodes: Response(keep_cut=True))")
            rows = rows[~cut]
    return _own_points(rows), phase


def _left_out(frame: "pd.DataFrame") -> dict[str, str]:
    """The frame's runs a response leaves out, run uid -> status (:data:`xdoe.results.LEFT_OUT_ATTR`)."""
    from xdoe.results import LEFT_OUT_ATTR

    return dict(frame.attrs.get(LEFT_OUT_ATTR) or {})


def _resume_hint(left_out: dict[str, str]) -> str:
    """What to do of runs not done (a pruned run is done: it stays as it is)."""
    if all(status == "pruned" for status in left_out.values()):
        return ""
    return " (`xrun status` lists the runs; `xrun experiment-start` resumes those not done)"


def _statuses(left_out: dict[str, str]) -> str:
    """``2 failed: a, b; 1 running: c`` (at most five uids per status)."""
    by: dict[str, list[str]] = {}
    for run, status in sorted(left_out.items()):
        by.setdefault(status, []).append(run)
    return "; ".join(f"{len(runs)} {status}: {', '.join(runs[:5])}{', ...' if len(runs) > 5 else ''}"
                     for status, runs in sorted(by.items()))


def left_out_notes(frame: "pd.DataFrame") -> list[str]:
    """What the analysis says of the runs it left out of the responses, in one
    note naming them by status (``pruned``: ended early by ``run_config.prune``;
    ``failed``, ``interrupted``, ``running``, ...: not done); none: ``[]``."""
    left_out = _left_out(frame)
    if not left_out:
        return []
    pruned, rest = "pruned" in left_out.values(), any(s != "pruned" for s in left_out.values())
    why = "; ".join([w for w, on in (("pruned early by run_config.prune", pruned),
                                     ("the others have not finished" if pruned else "they have not finished", rest))
                     if on])
    return [f"{len(left_out)} run(s) are left out of the responses ({_statuses(left_out)}; {why}): their "
            "episodes stop where the run stopped; the design's balance is broken: its points no longer have the "
            "same runs (a point may have none), so effects and their tests compare the settings that ran to "
            "their end, not the design" + _resume_hint(left_out)]


def _own_points(rows: "pd.DataFrame") -> "pd.DataFrame":
    """Runs without a design point (hand-written documents) each their own: -1, -2, ..."""
    if rows["design_point"].isna().any():
        loose = sorted(rows.loc[rows["design_point"].isna(), "run"].unique())
        own = {run: -1 - i for i, run in enumerate(loose)}
        rows = rows.assign(design_point=rows["design_point"].fillna(rows["run"].map(own)).astype(int),
                           repetition=rows["repetition"].fillna(0).astype(int))
    return rows


def _score_rows(frame: "pd.DataFrame", response: Response) -> tuple["pd.DataFrame", str]:
    """:func:`phase_rows` of a :func:`load_scores` frame: one row per run and
    agent, the budget-cut check on the rows the database counted."""
    scored = frame.attrs[SCORES_ATTR]
    phases = list(scored["phases"])
    phase = resolve_phase(response.phase, phases) or scored["phase"]
    if phase != scored["phase"] and phase not in phases:
        raise InputError(f"--response: no phase {phase!r} in the results (phases: {', '.join(map(str, phases))})")
    asked = (phase, response.metric, response.stat, response.keep_cut)
    had = scored["response"]
    if asked != (scored["phase"], had.metric, had.stat, had.keep_cut):
        raise ValueError(f"these scores answer {had.label(scored['phase'])} (keep_cut={had.keep_cut}), not "
                         f"{response.label(phase)} (keep_cut={response.keep_cut}): load_scores with that response")
    rows = frame[frame["phase"] == phase]
    if not response.keep_cut:
        kept = rows["score:kept"] > 0
        lost = sorted(set(rows["run"]) - set(rows.loc[kept, "run"]))
        if lost:
            raise InputError(f"phase {phase!r}: every episode of run(s) {', '.join(map(str, lost[:5]))} was cut "
                             "short by a step budget or a stop; nothing is left to measure (choose another "
                             "phase with --response, or keep cut episodes: Response(keep_cut=True))")
        rows = rows[kept]
    return _own_points(rows), phase


def response_agents(frame: "pd.DataFrame", response: Response, agent: str | None = None) -> list[str | None]:
    """The agents to answer separately: ``[agent]`` when one is chosen;
    ``[None]`` when every run of the response's phase has one agent (they
    may differ between runs: the agent is then a factor), else the sorted
    names of the agents (a game of several players: one response per agent,
    never their average).

    Raises:
        AmbiguousExperimentError: the frame holds several experiments.
        InputError: no episodes, or no such phase.
    """
    if agent is not None:
        return [agent]
    from xdoe.results import frame_experiment

    frame_experiment(frame)  # one experiment's runs, never several pooled
    rows, _ = phase_rows(frame, response)
    if rows.groupby("run")["agent"].nunique().max() <= 1:
        return [None]
    return sorted(rows["agent"].dropna().unique(), key=str)


def run_table(frame: "pd.DataFrame", response: Response, agent: str | None = None) -> tuple["pd.DataFrame", str]:
    """One row per run: ``run, design_point, repetition``, the factors (display
    names, readable levels) and ``y``: the run's score, the response's
    metric over the run's episodes (all workers) summarised by its
    statistic. With ``agent``, only that agent's episodes count; without it,
    every run must have one agent (see :func:`response_agents`). A run
    without a design point (a hand-written document) is its own point,
    numbered -1, -2, ... Returns the table and the phase's name.

    Raises:
        AmbiguousExperimentError: the frame holds rows of several experiments
            (:func:`xdoe.results.frame_experiment`; an ``InputError``).
        InputError: no episodes, no such phase, an unknown ``agent``, or
            runs of several agents and no ``agent``.
    """
    from xdoe.results import frame_experiment

    frame_experiment(frame)  # one experiment's runs, never several pooled
    rows, phase = phase_rows(frame, response)
    agents = sorted(rows["agent"].dropna().unique(), key=str)
    if agent is not None:
        if agent not in agents:
            raise InputError(f"--agent {agent!r}: no such agent in phase {phase!r} (agents: {', '.join(agents)})")
        rows = rows[rows["agent"] == agent]
    elif rows.groupby("run")["agent"].nunique().max() > 1:
        raise InputError(f"the runs of phase {phase!r} have several agents ({', '.join(agents)}): "
                         "choose one with --agent NAME")
    factors = factor_columns(frame)
    keys = ["run", "design_point", "repetition"]
    if SCORES_ATTR in frame.attrs:  # one row per run already: its score
        values = rows[keys].assign(_y=rows["score:y"].astype(float))
    else:
        values = rows[keys].assign(_y=_metric_values(rows, response.metric))
    grouped = values.groupby(keys, sort=True, dropna=False)["_y"]
    if SCORES_ATTR in frame.attrs:
        y = grouped.first().rename("y")
    elif response.stat == "iqm":
        from xdoe.analysis._aggregates import iqm

        y = grouped.agg(lambda v: float(iqm(v.to_numpy(float), axis=None))).rename("y")
    else:
        y = grouped.agg(response.stat).rename("y")
    # a factor named like a column of the table (``y``, ``run``...) keeps its ``factor:`` prefix
    names = {c: display_name(c) if display_name(c) not in (*keys, "y") else f"factor:{display_name(c)}"
             for c in factors}
    levels = rows.groupby(keys, sort=True, dropna=False)[factors].first().rename(columns=names) if factors else None
    out = y.to_frame() if levels is None else levels.join(y)
    return out.reset_index(), phase


def load_scores(store: Any = None, response: Response | None = None, experiment: str | None = None, *,
                include_branches: bool = False, runs: "Sequence[str] | None" = None) -> "pd.DataFrame":
    """The runs' scores for ``response``, computed by the database
    (:meth:`store.views.run_scores <xdoe.store.views._views.Views.run_scores>`): one row per run and agent of the
    response's phase, columns ``experiment, run, design_point, repetition,
    seed``, the factors (readable levels), ``phase, agent``,
    ``score:episodes``, ``score:kept``, ``score:y`` (and ``branch`` with
    ``include_branches``). :func:`run_table`, :func:`response_agents`,
    :func:`xdoe.analysis.analyze` and the plots of effects take it in place
    of the episode table (:func:`xdoe.results.load`) and answer the same
    numbers for this ``response``; memory grows with the runs, not the
    episodes. Empty when no episode is recorded.

    Args:
        store: a :class:`~xdoe.store.Store`, a store URL or ``None`` (the default store).
        experiment: only this experiment's runs (named in the ``experiment``
            column); needed when the store holds runs of several.
        runs: only the runs of these uids (``xrun optimize`` reads a
            batch's; the rows are those of the whole table).

    Raises:
        AmbiguousExperimentError: no ``experiment`` and the store holds runs
            of several (as :func:`xdoe.results.load`).
        InputError: ``experiment`` is not in the store, or no such phase.
        NoStoreError, StoreError: as :func:`xdoe.results.load`.
    """
    from xdoe.results import single_experiment, table_frame

    response = response or Response()
    match = _COMPARISON.match(response.metric)
    metric, op, threshold = ((match["metric"], match["op"], float(match["value"])) if match
                             else (response.metric, None, None))
    table: Any = None

    def read(st: Any) -> Any:  # the scores, kept for their phases and branch runs
        nonlocal table
        table = st.views.run_scores(single_experiment(st, experiment), phase=response.phase, metric=metric, stat=response.stat, op=op,
                              threshold=threshold, keep_cut=response.keep_cut, include_branches=include_branches, runs=runs)
        return table

    frame = table_frame(store, read)
    frame["score:y"] = frame["score:y"].astype(float)
    frame.attrs[SCORES_ATTR] = {"response": response, "phase": table.phase, "phases": list(table.phases),
                                "branch_runs": list(table.branch_runs)}
    return frame
