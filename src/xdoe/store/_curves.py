"""Learning-curve data without the episode table (issue 26): the episodes of
one run at a time, pooled over agents, so that drawing the curves of 200
runs x 5,000 episodes holds one run's rows in memory and the rest grows with
the runs, not the episodes.

Per episode (``worker``, ``episode`` of one phase), in recorded order (the
episode's first row id), :func:`run_episodes` gives what the episode table
(:func:`xdoe.results.load`) grouped by run, worker and episode gives: the
mean of the metric over the episode's agent rows (a missing value skipped;
numpy's sum in row order, pandas sums with compensation: more than two
agents can differ in the last bit), the largest ``steps`` and
``wall_time``, and whether any row was cut by a budget
(:data:`xdoe._cuts.BUDGET_CUTS`; ``tests/analysis/test_curve_sets.py``
compares them). The database selects and orders the rows (an index scan per
phase); they are pooled here, one phase at a time.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain
from typing import TYPE_CHECKING, Any, Iterator

import numpy as np
from sqlalchemy.exc import SQLAlchemyError

from xdoe._cuts import BUDGET_CUTS
from xdoe.store._engine import store_error
from xdoe.store._export import (DESIGN_COLUMNS, SelectedPhase, check_experiment, export_columns, phase_factors,
                                selected_phases)
from xdoe.store._scores import SCORE_METRICS, _mark, _with_episodes

if TYPE_CHECKING:
    from xdoe.store._rows import StoreRows as Store

__all__ = ["CurvePhases", "RunEpisodes", "curve_phases", "run_episodes", "phase_means"]

_CUT = "CASE WHEN ep.cut_by IN ({}) THEN 1 ELSE 0 END".format(", ".join(f"'{c}'" for c in BUDGET_CUTS))

#: one phase's episodes: phase id, then per episode (recorded order) the metric
#: pooled over agents, steps, wall time (NaN: not recorded; ``None``: not read),
#: cut by a budget; last the number of its rows cut by a budget
RunEpisodes = tuple[int, np.ndarray, np.ndarray, "np.ndarray | None", np.ndarray, int]


def _chunks(phase_ids: list[int], size: int) -> Iterator[list[int]]:
    for start in range(0, len(phase_ids), size):
        yield phase_ids[start:start + size]


def _check(metric: str) -> None:
    if metric not in SCORE_METRICS:
        raise ValueError(f"unknown metric {metric!r}; expected one of {', '.join(SCORE_METRICS)}")


@dataclass(frozen=True)
class CurvePhases:
    """The phases :meth:`xdoe.store.Store.episode_table` would read (same
    ``experiment`` and ``include_branches``) that have episodes, in its order
    (``phases``: :class:`~xdoe.store._export.SelectedPhase` each), the
    factors in the order runs name them and their column names in that table."""

    phases: tuple[SelectedPhase, ...]
    factors: tuple[str, ...]
    columns: tuple[str, ...]


def curve_phases(store: "Store", experiment: str | None = None, *, include_branches: bool = False) -> CurvePhases:
    """See :class:`CurvePhases` (an index probe per phase, no episode read).

    Raises:
        InputError: ``experiment`` is not in the store.
        StoreError: the store cannot be read.
    """
    check_experiment(store, experiment)
    selected = selected_phases(store, experiment, include_branches=include_branches)
    factors = phase_factors(selected)
    columns = export_columns(factors)[len(DESIGN_COLUMNS):len(DESIGN_COLUMNS) + len(factors)]
    try:
        with store.engine.connect() as conn:
            present = _with_episodes(conn, [p.phase_id for p in selected])
    except SQLAlchemyError as exc:
        raise store_error(store._url, "read the episodes of", exc) from None
    return CurvePhases(tuple(p for p in selected if p.phase_id in present), tuple(factors), tuple(columns))


def run_episodes(store: "Store", phase_ids: list[int], metric: str, *, wall: bool = True) -> Iterator[RunEpisodes]:
    """Per phase of ``phase_ids`` with episodes (in that order), its episodes
    pooled over agents (see the module docstring), one index scan per phase;
    without ``wall`` the wall times are not read (``None`` in their place).

    Raises:
        ValueError: an unknown metric.
        StoreError: the store cannot be read.
    """
    _check(metric)
    # only the columns needed, no phase id: fetching the rows into Python is the cost (~1.6 us a row)
    sql = (f"SELECT ep.worker, ep.episode, ep.{metric}, ep.steps, {_CUT}{', ep.wall_time' if wall else ''} "
           "FROM episode ep WHERE ep.phase_id = {} ORDER BY ep.id")
    try:
        with store.engine.connect() as conn:
            query, width = sql.format(_mark(conn)), 6 if wall else 5
            cursor = conn.connection.dbapi_connection.cursor()  # plain tuples: a million rows per pass
            try:
                for pid in phase_ids:
                    cursor.execute(query, (pid,))
                    rows = cursor.fetchall()  # to floats (NULL: NaN, as np.array does) without a list of arrays
                    data = np.fromiter(chain.from_iterable(rows), dtype=float,
                                       count=len(rows) * width).reshape(-1, width)
                    del rows
                    if len(data):
                        y, steps, walls, cut = _pool(data)
                        yield pid, y, steps, walls if wall else None, cut, int(np.count_nonzero(data[:, 4]))
            finally:
                cursor.close()
    except SQLAlchemyError as exc:
        raise store_error(store._url, "read the episodes of", exc) from None


def _pool(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One phase's rows (``worker, episode, metric, steps, cut[, wall]``, in
    recorded order) to its episodes in order of their first row: the mean
    metric over agents (NaN skipped; NaN when all are), the largest steps
    and wall time (NaN skipped; NaN without the wall column), whether any row was cut."""
    worker, episode = rows[:, 0].astype(np.int64), rows[:, 1].astype(np.int64)
    walls = rows[:, 5] if rows.shape[1] > 5 else np.full(len(rows), np.nan)
    key = worker * (int(episode.max()) + 1) + episode
    unique, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    if len(unique) == len(key):  # one row per episode (one agent): already pooled, in recorded order
        return rows[:, 2], rows[:, 3], walls, rows[:, 4] > 0
    rank = np.empty(len(unique), dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(unique))
    group = rank[inverse.ravel()]
    y, present = rows[:, 2], ~np.isnan(rows[:, 2])
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = (np.bincount(group, weights=np.where(present, y, 0.0), minlength=len(unique))
                / np.bincount(group, weights=present, minlength=len(unique)))
    steps = np.full(len(unique), np.nan)
    wall = np.full(len(unique), np.nan)
    np.fmax.at(steps, group, rows[:, 3])
    np.fmax.at(wall, group, walls)
    cut = np.bincount(group, weights=rows[:, 4], minlength=len(unique)) > 0
    return mean, steps, wall, cut


def phase_means(store: "Store", phase_ids: list[int], metric: str, *, keep_cut: bool) -> dict[int, float]:
    """Per phase: the mean of ``metric`` over its episode rows (every agent;
    rows cut by a budget left out unless ``keep_cut``; NaN when every value
    is missing); phases without such rows are absent.

    Raises:
        ValueError: an unknown metric.
        StoreError: the store cannot be read.
    """
    _check(metric)
    out: dict[int, float] = {}
    keep = "" if keep_cut else f" AND {_CUT} = 0"
    try:
        with store.engine.connect() as conn:
            mark = _mark(conn)
            for chunk in _chunks(phase_ids, 2000):
                sql = (f"SELECT ep.phase_id, avg(ep.{metric}) FROM episode ep "
                       f"WHERE ep.phase_id IN ({', '.join([mark] * len(chunk))}){keep} GROUP BY ep.phase_id")
                for pid, value in conn.exec_driver_sql(sql, tuple(chunk)):
                    out[int(pid)] = float("nan") if value is None else float(value)
    except SQLAlchemyError as exc:
        raise store_error(store._url, "average the episodes of", exc) from None
    return out
