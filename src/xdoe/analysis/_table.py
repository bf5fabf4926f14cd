"""The results table of ``xrun results`` as a Python object: one row per
design point (best first) with its runs and the estimate over runs (IQM by
default) with a 95 % stratified-bootstrap interval and P(best > point)
(P(best < point) when lower is better: :func:`xdoe.analysis.resolve_goal`);
the sessions branched from the design's runs after it, one row each.

:func:`results_table` computes it (the command prints what it answers);
:class:`ResultsTable` shows it as text rows (:meth:`ResultsTable.rows`), a
DataFrame (:meth:`ResultsTable.to_frame`) and, in a notebook, HTML.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from xdoe.analysis._result import Analysis, PointAggregate

if TYPE_CHECKING:
    import pandas as pd

    from xdoe.analysis._goal import Goal
    from xdoe.analysis._response import Response

__all__ = ["ResultsTable", "results_table"]


@dataclass
class ResultsTable:
    """What :func:`results_table` answers (and ``xrun results`` prints):
    ``analysis`` holds the design points (best first), the experiment, the
    response, the statistic, the runs and the warnings (its factor tables
    are empty: ranking factors is :func:`xdoe.analysis.analyze`'s work);
    ``branches`` the sessions branched or grown from the runs, one row each,
    never pooled into the design."""

    analysis: Analysis
    branches: list[PointAggregate] = field(default_factory=list)

    @property
    def points(self) -> list[PointAggregate]:
        """The design points, best first."""
        return self.analysis.points

    @property
    def best(self) -> PointAggregate | None:
        """The design point with the best estimate: the highest, the lowest when the goal is ``minimize``."""
        return self.analysis.best

    @property
    def warnings(self) -> list[str]:
        """What a reader should know: pruned runs left out, branches without the response's phase."""
        return self.analysis.warnings

    def title(self) -> str:
        """``synthetic · response testing:objective:mean · 24 runs`` (and the branches)."""
        n = len(self.branches)
        more = f" + {n} branch{'es' * (n != 1)} (not in the design)" if n else ""
        return self.analysis.title() + more

    def section(self) -> tuple[str, list[str], list[list[str]]]:
        """``(caption, headers, rows)`` as the command's table shows them:
        the design points (:func:`xdoe.analysis.points_section`), then one
        row per branch."""
        from xdoe.analysis._format import fmt_num, points_section

        caption, headers, rows = points_section(self.analysis)
        for p in self.branches:  # not design points: the sessions of their trees, one run each
            imp = "-" if p.improvement is None else fmt_num(p.improvement[0], 3)
            rows.append(["branch", p.levels["branch"], str(p.n), fmt_num(p.estimate), "-", imp])
        return caption, headers, rows

    def drawn(self, every: str) -> tuple[str, list[str], list[list[str]], list[list[str]], str | None]:
        """``(caption, headers, design rows, branch rows, more)`` as a table
        draws them: the best :data:`~xdoe.analysis.TABLE_ROWS` design points
        (``more``: the line saying how many are left out and naming
        ``every``, the way to get them all; else ``None``), every branch."""
        from xdoe.analysis._format import shown_rows

        caption, headers, rows = self.section()
        design, more = shown_rows(rows[:len(self.points)], every)
        return caption, headers, design, rows[len(self.points):], more

    def best_line(self) -> str | None:
        """``best: design point 7 (inter=1, null=0, strong=1), IQM 16.02 over 3 run(s)``."""
        from xdoe.analysis._format import STAT_NAMES, fmt_levels, fmt_num

        best, a = self.best, self.analysis
        if best is None:
            return None
        return (f"best{'' if a.agent is None else f' for {a.agent}'}: design point {best.index} "
                f"({fmt_levels(best.levels)}), {STAT_NAMES.get(a.statistic, a.statistic)} "
                f"{fmt_num(best.estimate)} over {best.n} run(s)")

    def to_frame(self) -> "pd.DataFrame":
        """One row per design point (best first) and branch: ``design_point``
        (a branch's: -1, -2, ...), ``branch`` (its label, else ``None``), one
        column per factor, ``runs``, ``estimate``, ``ci_low``, ``ci_high``,
        ``p_improvement`` (P(best > point), or P(best < point) when
        ``attrs["goal"]`` is ``minimize``; NaN for the best) with its
        interval; every number unrounded."""
        import pandas as pd

        nan = float("nan")
        factors = list(dict.fromkeys(k for p in self.points for k in p.levels))
        records = []
        marked = [(p, None) for p in self.points] + [(p, p.levels.get("branch")) for p in self.branches]
        for p, branch in marked:
            imp = p.improvement or (nan, nan, nan)
            records.append({"design_point": p.index, "branch": branch,
                            **{f: p.levels.get(f) for f in factors}, "runs": p.n, "estimate": p.estimate,
                            "ci_low": p.ci_low, "ci_high": p.ci_high, "p_improvement": imp[0],
                            "p_improvement_low": imp[1], "p_improvement_high": imp[2]})
        frame = pd.DataFrame.from_records(records, columns=["design_point", "branch", *factors, "runs", "estimate",
                                                            "ci_low", "ci_high", "p_improvement",
                                                            "p_improvement_low", "p_improvement_high"])
        frame.attrs.update(experiment=self.analysis.experiment, response=self.analysis.response,
                           statistic=self.analysis.statistic, agent=self.analysis.agent,
                           goal=self.analysis.goal.direction)
        return frame

    def _repr_html_(self) -> str:
        """In a notebook: the command's table (its best rows, as the terminal
        draws them), captioned with the experiment, the response, the runs
        and the statistic's method, then the best point and the warnings."""
        from xdoe._html import html_block, html_table

        caption, headers, rows, branches, more = self.drawn("ResultsTable.to_frame()")
        rows = rows + branches
        best = self.best_line()
        notes = [n for n in (more, best) if n] + [f"warning: {w}" for w in self.warnings]
        return html_block(None, [html_table(f"{self.title()}: {caption}", headers, rows)], notes)


def results_table(frame: "pd.DataFrame", response: "Response | None" = None, *, statistic: str | None = None,
                  agent: str | None = None, seed: int = 0, goal: "Goal | str | None" = None) -> ResultsTable:
    """The table of ``xrun results`` for one agent (``None``: the runs' only one).

    Args:
        frame: the episode table (:func:`xdoe.results.load`, with or without
            ``include_branches``) or the runs' scores
            (:func:`xdoe.analysis.load_scores`).
        response: which number per run (default: last phase, objective, mean).
        statistic: ``iqm``, ``mean`` or ``median`` over a point's runs; ``None``:
            an optuna design's ``stat`` (the frame's design record), else ``iqm``
            (:func:`~xdoe.analysis.resolve_statistic`).
        agent: whose objective, for runs of several agents
            (:func:`~xdoe.analysis.response_agents`: one table each).
        seed: root of the bootstrap resampling.
        goal: ``maximize`` or ``minimize``; ``None``: the direction the design
            declared for the response (the frame's design record), else
            ``maximize`` (:func:`~xdoe.analysis.resolve_goal`).

    Raises:
        AmbiguousExperimentError: the frame holds rows of several experiments.
        InputError: no episodes, an unknown phase or agent, several agents and no ``agent``,
            a ``goal`` other than ``maximize`` or ``minimize``.
    """
    from xdoe.analysis._aggregates import resolve_statistic
    from xdoe.analysis._branches import branch_points, split_branches
    from xdoe.analysis._effects import design_points, points_method, points_notes
    from xdoe.analysis._goal import resolve_goal
    from xdoe.analysis._response import Response, left_out_notes, run_table
    from xdoe.results import experiment_label

    response = response or Response()
    goal = resolve_goal(goal, response=response, frame=frame)
    statistic = resolve_statistic(statistic, frame=frame)
    design, branches = split_branches(frame)
    table, phase = run_table(design, response, agent)
    points = design_points(table, statistic, seed=seed, goal=goal)
    extra, notes = branch_points(branches, response, phase, points[0] if points else None, statistic=statistic,
                                 agent=agent, seed=seed, goal=goal)
    analysis = Analysis(response=response.label(phase), factors=[], interactions=[], points=points, runs=len(table),
                        warnings=left_out_notes(design) + points_notes(points) + notes, statistic=statistic,
                        experiment=experiment_label(design), agent=agent, goal=goal,
                        methods={"points": points_method(statistic, goal)})
    return ResultsTable(analysis, extra)
