"""Where ``xgen augment --steepest-ascent N`` and ``--confirm N`` put their
block (issue 37, item 3): the finished campaign's scores, the design's one
model (:func:`xdoe.analysis._doe.doe_analysis`, fitted on the design's own
blocks) and the rules of :mod:`xdoe.analysis._sequential` (Montgomery,
*Design and Analysis of Experiments*, 8th ed., 2012, 11.2 and 11.3). Apart
from :mod:`xdoe.analysis._sequential`, which :mod:`xdoe.analysis._doe`
imports to answer those blocks, so that neither imports the other both ways.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from xdoe.errors import InputError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["sequential_step"]


def sequential_step(frame: "pd.DataFrame", response: Any, design: dict[str, Any] | None, kind: str, *,
                    runs: int | None = None, agent: str | None = None, **options: Any) -> dict[str, Any]:
    """Place a steepest-ascent or confirmation block from a finished
    campaign: its runs' scores for ``response`` (:func:`xdoe.analysis.load_scores`
    or :func:`xdoe.results.load`), the design (the manifest's,
    :func:`~xdoe.analysis.read_design`) and the one model of
    :func:`~xdoe.analysis._doe.doe_analysis` on the design's own blocks.

    Args:
        kind: ``steepest_ascent`` (options ``steps``, ``step``, ``goal``, which
            defaults to :func:`~xdoe.analysis.resolve_goal`'s of the design;
            :func:`~xdoe.analysis._sequential.steepest_path`) or ``confirm`` (option ``goal``; :func:`~xdoe.analysis._sequential.confirm_point`).
        runs: the design's own runs (every block but the sequential ones):
            fewer recorded is refused (the campaign is not finished).

    Returns:
        the block's record (``how``): :func:`~xdoe.analysis._sequential.steepest_path` or
        :func:`~xdoe.analysis._sequential.confirm_point`'s answer plus ``response`` (its label).

    Raises:
        InputError: an unfinished campaign, a design without the model the
            step needs (see :func:`~xdoe.analysis._sequential.steepest_path`, :func:`~xdoe.analysis._sequential.confirm_point`).
    """
    from xdoe.analysis._doe import doe_analysis
    from xdoe.analysis._goal import resolve_goal
    from xdoe.analysis._response import run_table
    from xdoe.analysis._sequential import confirm_point, split_sequential, steepest_path

    table, phase = run_table(frame, response, agent)
    factors = [c for c in table.columns if c not in ("run", "design_point", "repetition", "y")]
    own, _ = split_sequential(table, design)
    if runs is not None and len(own) < runs:
        raise InputError(f"{len(own)} of the design's {runs} runs are recorded: finish the campaign first "
                         "(xrun experiment-start), then augment")
    doe = doe_analysis(table, factors, design)
    # the goal not given: the one xrun analyze ranks the points by (the design's, else maximize)
    goal = options.get("goal") or resolve_goal(design=design, response=response, frame=frame).direction
    if kind == "steepest_ascent":
        body = steepest_path(doe, factors, int(options["steps"]), float(options.get("step", 1.0)), goal)
    else:
        body = confirm_point(doe, factors, goal)
    return {**body, "response": response.label(phase)}
