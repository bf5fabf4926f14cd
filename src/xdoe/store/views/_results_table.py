"""The episode table in memory, for analysis (:func:`xdoe.results.load`).

The same rows and columns as ``xrun export`` (:mod:`xdoe.store.views._export`),
read into Python lists instead of a file, with factor levels kept as plain
values (lists stay lists) so the analysis can show them readably.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from xdoe.store.views._export import (
    BRANCH_COLUMN,
    DESIGN_COLUMNS,
    check_experiment,
    export_columns,
    iter_export_rows,
    phase_factors,
    selected_phases,
    left_out_runs,
)

if TYPE_CHECKING:
    from xdoe.store.schema._database import Database

__all__ = ["EpisodeTable", "episode_table", "BRANCH_COLUMN"]


@dataclass(frozen=True)
class EpisodeTable:
    """Rows of the export table: ``columns`` (names, as ``xrun export``),
    ``rows`` (tuples in that order), ``factors`` (the factor column names, in
    the order runs name them; levels are the runs' values, ``None`` where a
    conditional factor is inactive), ``left_out`` (the design's runs whose
    chosen instance did not finish, pruned or not done, run uid -> status:
    :func:`~xdoe.store.views._export.left_out_runs`; their rows are here)."""

    columns: tuple[str, ...]
    rows: list[tuple[Any, ...]]
    factors: tuple[str, ...]
    left_out: dict[str, str] = field(default_factory=dict)


def episode_table(db: "Database", experiment: str | None = None, *,
                  include_branches: bool = False) -> EpisodeTable:
    """Every recorded episode of the design's runs (latest finished instance
    per run), one row per episode, worker and agent; sessions of a session
    tree (branches, grown sessions) are not the design and are left out.

    With ``include_branches`` the sessions of the trees rooted in these runs
    come after the design's rows (no design point, no factor levels) and a
    last column ``branch`` labels them (``parent + key=value``; ``None`` for
    the design's runs).

    Raises:
        InputError: ``experiment`` is not in the store.
        StoreError: the store cannot be read.
    """
    check_experiment(db, experiment)
    phases = selected_phases(db, experiment, include_branches=include_branches)
    factors = phase_factors(phases)
    kinds = {f: "raw" for f in factors}  # _factor_cell passes values of an unknown kind unchanged
    columns = export_columns(factors)
    names = tuple(columns[len(DESIGN_COLUMNS): len(DESIGN_COLUMNS) + len(factors)])
    if include_branches:
        columns.append(BRANCH_COLUMN)
    rows = list(iter_export_rows(db, phases, factors, kinds, branches=include_branches))
    return EpisodeTable(tuple(columns), rows, names, left_out_runs(phases))
