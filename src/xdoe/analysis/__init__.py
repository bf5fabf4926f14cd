"""Answering the design: factor effects, RL-grade aggregates, pictures, one report.

- :func:`analyze` (episode table -> :class:`Analysis`): level means with t
  intervals, ANOVA (statsmodels OLS + ``anova_lm``) with partial eta²,
  standardised coefficients for continuous factors, nested conditional
  factors, IQM with stratified-bootstrap intervals and the probability of
  improvement (Agarwal et al. 2021).
- :func:`parse_response`, :class:`Response`: which number answers the design.
- :mod:`xdoe.analysis.plots` (matplotlib, imported on use) and
  :func:`write_report` (one self-contained HTML file).

pandas, statsmodels and matplotlib are imported when a function runs, never
at import time of :mod:`xdoe` or the command-line applications.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xdoe._lazy import lazy_exports

if TYPE_CHECKING:
    from xdoe.analysis._aggregates import iqm, iqm_ci, probability_of_improvement
    from xdoe.analysis._effects import analyze, t_interval
    from xdoe.analysis._format import render
    from xdoe.analysis._report import write_report
    from xdoe.analysis._response import Response, parse_response, run_table
    from xdoe.analysis._result import Analysis, BestPoint, FactorEffect, Interaction, LevelStat, PointAggregate

__all__ = [
    "analyze", "Analysis", "FactorEffect", "LevelStat", "Interaction", "BestPoint", "PointAggregate",
    "Response", "parse_response", "run_table", "iqm", "iqm_ci", "probability_of_improvement",
    "t_interval", "render", "write_report",
]

__getattr__, __dir__ = lazy_exports(__name__, globals(), {
    "xdoe.analysis._aggregates": ["iqm", "iqm_ci", "probability_of_improvement"],
    "xdoe.analysis._effects": ["analyze", "t_interval"],
    "xdoe.analysis._format": ["render"],
    "xdoe.analysis._report": ["write_report"],
    "xdoe.analysis._response": ["Response", "parse_response", "run_table"],
    "xdoe.analysis._result": ["Analysis", "BestPoint", "FactorEffect", "Interaction", "LevelStat",
                              "PointAggregate"],
})
