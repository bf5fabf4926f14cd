"""Branches beside the design: the sessions of a session tree that
``xdoe.results.load(..., include_branches=True)`` adds to a frame (a last
column ``branch`` labels them) are compared with the design explicitly, each
as its own row, never pooled into a design point or into the factor
analysis (a branch starts from a trained brain with other settings: it is
not a repetition of any design point).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from xdoe.analysis._response import SCORES_ATTR, Response, run_table
from xdoe.errors import InputError
from xdoe.store import BRANCH_COLUMN

if TYPE_CHECKING:
    import pandas as pd

    from xdoe.analysis._goal import Goal
    from xdoe.analysis._result import PointAggregate

__all__ = ["BRANCH_COLUMN", "split_branches", "branch_points", "branch_label"]

def split_branches(frame: "pd.DataFrame") -> tuple["pd.DataFrame", "pd.DataFrame | None"]:
    """``(design rows, branch rows)`` of a :func:`xdoe.results.load` frame,
    both without the ``branch`` column's effect on the design (the design
    part has no ``branch`` column); branch rows are ``None`` when the frame
    was loaded without ``include_branches``. ``attrs`` are kept on both."""
    if BRANCH_COLUMN not in frame.columns:
        return frame, None
    mask = frame[BRANCH_COLUMN].notna()
    design = frame.loc[~mask].drop(columns=[BRANCH_COLUMN])
    branches = frame.loc[mask]
    design.attrs = dict(frame.attrs)
    branches.attrs = dict(frame.attrs)
    return design, branches


def branch_label(run: str, label: Any) -> str:
    """``taxi-study-0000_b01 (taxi-study-0000 + brain.params.alpha=0.25)``: the
    run and its parent with what it set (shown as ``branch=...``)."""
    return f"{run} ({label})"


def branch_points(branches: "pd.DataFrame | None", response: Response, phase: str,
                  best: "PointAggregate | None", *, statistic: str = "iqm", agent: str | None = None,
                  seed: int = 0, goal: "Goal | str | None" = None) -> tuple[list["PointAggregate"], list[str]]:
    """One row per branch run: its score (the response; one run, so no
    interval) and P(best design point better than the branch) over runs
    (Agarwal et al. 2021, as for the design points: by ``goal``,
    :func:`~xdoe.analysis.resolve_goal`, ``None`` maximize); ``index`` -1,
    -2, ... and ``levels`` ``{"branch": branch_label(...)}``. Returns the
    rows (best first by ``goal``) and notes (a branch without the
    response's phase is left out, said why).
    """
    from xdoe.analysis._aggregates import probability_of_improvement
    from xdoe.analysis._goal import resolve_goal
    from xdoe.analysis._result import PointAggregate

    sign = resolve_goal(goal).sign
    if branches is None or (branches.empty and not branches.attrs.get(SCORES_ATTR, {}).get("branch_runs")):
        return [], []
    nan = float("nan")
    out: list[PointAggregate] = []
    notes = []
    present = branches[branches["phase"] == phase]
    every = set(branches["run"]) | set(branches.attrs.get(SCORES_ATTR, {}).get("branch_runs", ()))
    missing = sorted(every - set(present["run"]))
    if missing:
        notes.append(f"branches without phase {phase!r} left out: {', '.join(missing)}")
    if present.empty:
        return out, notes
    resp = Response(phase, response.metric, response.stat, response.keep_cut)
    try:
        table, _ = run_table(present, resp, agent)
    except InputError as exc:
        return out, notes + [str(exc)]
    labels = present.groupby("run", sort=True)[BRANCH_COLUMN].first()
    for row in table.itertuples(index=False):
        point = int(row.design_point)
        y = float(row.y)
        agg = PointAggregate(point, {"branch": branch_label(row.run, labels[row.run])}, 1, statistic, y, nan, nan,
                             np.array([y]))
        if best is not None:
            agg.improvement = probability_of_improvement(sign * best.values, sign * agg.values, seed=seed,
                                                         key=(3, -point))
        out.append(agg)
    out.sort(key=lambda p: -sign * p.estimate)
    return out, notes
