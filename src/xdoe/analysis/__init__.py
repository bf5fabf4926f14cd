"""Answering the design: factor effects, RL-grade aggregates, pictures, one report.

- :func:`analyze` (episode table -> :class:`Analysis`): ANOVA (statsmodels
  OLS + ``anova_lm``) with partial eta², level means, standardised
  coefficients for continuous factors, nested conditional factors; per
  design point one statistic over runs (IQM by default) with a
  stratified-bootstrap interval and the probability of improvement
  (Agarwal et al. 2021). The unit of replication is the run.
- :func:`results_table` (-> :class:`ResultsTable`): the table of ``xrun
  results``, one row per design point ranked by the estimate over runs.
- :func:`resolve_goal` (-> :class:`Goal`): whether a higher or a lower score
  is best (``--goal``, else the design's declared direction, else maximize),
  which every ranking, "best" and probability of improvement reads.
- :func:`parse_response`, :class:`Response`: which number answers the design.
- :mod:`xdoe.analysis.plots` (matplotlib, imported on use),
  :func:`write_laydown` (a run's ``laydown.svg``, drawn once per run
  structure) and :func:`write_report` (one self-contained HTML file).

pandas, statsmodels and matplotlib are imported when a function runs, never
at import time of :mod:`xdoe` or the command-line applications.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xdoe._lazy import lazy_exports, public_names

if TYPE_CHECKING:  # the same names for type checkers (`Name as Name`: a re-export)
    from xdoe.analysis._aggregates import (
        STATISTICS as STATISTICS,
        aggregate as aggregate,
        interval_estimate as interval_estimate,
        iqm as iqm,
        probability_of_improvement as probability_of_improvement,
        resolve_statistic as resolve_statistic,
    )
    from xdoe.analysis._branches import branch_points as branch_points, split_branches as split_branches
    from xdoe.analysis._design_info import read_design as read_design
    from xdoe.analysis._effects import analyze as analyze, design_points as design_points
    from xdoe.analysis._goal import GOALS as GOALS, Goal as Goal, resolve_goal as resolve_goal
    from xdoe.analysis._laydown import write_laydown as write_laydown
    from xdoe.analysis._format import (
        STAT_NAMES as STAT_NAMES,
        TABLE_ROWS as TABLE_ROWS,
        fmt_levels as fmt_levels,
        fmt_num as fmt_num,
        points_section as points_section,
        render as render,
        sections as sections,
        shown_rows as shown_rows,
    )
    from xdoe.analysis._optuna import (
        adaptive_answer as adaptive_answer,
        optuna_summary as optuna_summary,
        optuna_text as optuna_text,
        plot_optimization as plot_optimization,
    )
    from xdoe.analysis._plan import (
        Comparison as Comparison,
        Plan as Plan,
        bootstrap_repetitions as bootstrap_repetitions,
        pilot_plan as pilot_plan,
        plan_repetitions as plan_repetitions,
        welch_repetitions as welch_repetitions,
    )
    from xdoe.analysis._report import write_report as write_report
    from xdoe.analysis._table import ResultsTable as ResultsTable, results_table as results_table
    from xdoe.analysis._placing import sequential_step as sequential_step
    from xdoe.analysis._response import (
        Response as Response,
        load_scores as load_scores,
        parse_response as parse_response,
        left_out_notes as left_out_notes,
        response_agents as response_agents,
        run_table as run_table,
    )
    from xdoe.analysis._result import (
        Analysis as Analysis,
        FactorEffect as FactorEffect,
        Interaction as Interaction,
        LevelStat as LevelStat,
        PointAggregate as PointAggregate,
    )

_EXPORTS = {
    "xdoe.analysis._aggregates": ["STATISTICS", "aggregate", "interval_estimate", "iqm", "probability_of_improvement",
                                   "resolve_statistic"],
    # the design's runs apart from the sessions branched from them, and those as extra rows
    "xdoe.analysis._branches": ["branch_points", "split_branches"],
    "xdoe.analysis._design_info": ["read_design"],
    "xdoe.analysis._effects": ["analyze", "design_points"],
    # maximize or minimize: which estimate is best (--goal, else the design's direction, else maximize)
    "xdoe.analysis._goal": ["GOALS", "Goal", "resolve_goal"],
    # laydown.svg into a results folder (also in xdoe.analysis.plots): a structure drawn before is
    # only hard-linked, without numpy or matplotlib (xrun experiment-start's parent never loads them)
    "xdoe.analysis._laydown": ["write_laydown"],
    "xdoe.analysis._format": ["render", "sections", "STAT_NAMES", "TABLE_ROWS", "fmt_levels", "fmt_num", "points_section",
                              "shown_rows"],
    "xdoe.analysis._optuna": ["adaptive_answer", "optuna_summary", "optuna_text", "plot_optimization"],
    "xdoe.analysis._plan": ["Comparison", "Plan", "pilot_plan", "plan_repetitions", "welch_repetitions",
                            "bootstrap_repetitions"],
    "xdoe.analysis._report": ["write_report"],
    # xrun results: one row per design point, ranked (and shown in a notebook)
    "xdoe.analysis._table": ["ResultsTable", "results_table"],
    # xgen augment --steepest-ascent / --confirm: the block placed by the design's model
    "xdoe.analysis._placing": ["sequential_step"],
    "xdoe.analysis._response": ["Response", "load_scores", "parse_response", "left_out_notes", "response_agents",
                                "run_table"],
    "xdoe.analysis._result": [
        "Analysis", "FactorEffect", "Interaction", "LevelStat", "PointAggregate",
    ],
}

__all__ = public_names(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)
