"""The episode table in memory, for analysis (:func:`xdoe.results.load`).

The same rows and columns as ``xrun export`` (:mod:`xdoe.store._export`),
read into Python lists instead of a file, with factor levels kept as plain
values (lists stay lists) so the analysis can show them readably.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from xdoe.store._export import DESIGN_COLUMNS, check_experiment, export_columns, iter_export_rows, selected_phases

if TYPE_CHECKING:
    from xdoe.store._store import Store

__all__ = ["EpisodeTable", "episode_table"]


@dataclass(frozen=True)
class EpisodeTable:
    """Rows of the export table: ``columns`` (names, as ``xrun export``),
    ``rows`` (tuples in that order), ``factors`` (the factor column names, in
    the order runs name them; levels are the runs' values, ``None`` where a
    conditional factor is inactive)."""

    columns: tuple[str, ...]
    rows: list[tuple[Any, ...]]
    factors: tuple[str, ...]


def episode_table(store: "Store", experiment: str | None = None) -> EpisodeTable:
    """Every recorded episode (latest finished instance per run), one row per
    episode, worker and agent.

    Raises:
        InputError: ``experiment`` is not in the store.
        StoreError: the store cannot be read.
    """
    check_experiment(store, experiment)
    phases = selected_phases(store, experiment)
    factors: list[str] = []
    for p in phases:
        factors.extend(f for f in p.levels if f not in factors)
    kinds = {f: "raw" for f in factors}  # _factor_cell passes values of an unknown kind unchanged
    columns = export_columns(factors)
    rows = list(iter_export_rows(store, phases, factors, kinds))
    names = tuple(columns[len(DESIGN_COLUMNS): len(DESIGN_COLUMNS) + len(factors)])
    return EpisodeTable(tuple(columns), rows, names)
