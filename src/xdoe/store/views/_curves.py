"""Learning curves, defined once: the episodes of one run at a time
(:func:`run_episodes`, behind ``xrun plot curves``, ``xrun report`` and the
campaign curves, :mod:`xdoe.analysis._curve_sets`) and the points of a run
page, read live (:func:`curve_points`, the dashboard's run, compare and tree
pages). Both read one SQL statement, :func:`episodes_sql`, and one x,
:func:`steps_x`:

* **An episode** is a ``worker``, ``episode`` of one phase. Its rows (one per
  agent) are either read for **one agent** (that agent's row: ``xrun plot
  curves --agent NAME``, a run page's line per agent) or **pooled** over the
  agents (``xrun plot curves``, a run page's "all agents" line): the mean of
  the metric over them (a missing value skipped: SQL ``AVG``), the largest
  ``steps`` and ``wall_time``, cut by a budget when any row is
  (:data:`xdoe._cuts.BUDGET_CUTS`). Episodes come in recorded order (their
  first row id; workers interleaved as they finished).
* **x** is the environment steps so far: the cumulative ``steps`` of the
  episodes in that order (rl-baselines3-zoo's ``X_TIMESTEPS``).
* **Episodes cut by a budget** count in x (their steps were spent) but give
  no y (``xrun plot curves --keep-cut`` keeps them).

A run page draws every phase of the instance one after the other: a phase's x
starts where the earlier phases' steps end, pooled (``xrun plot curves`` draws
one phase from 0). A phase of one agent has one line; a phase of several has
one per agent and the pooled one. Long runs are binned in SQL over the
episode order: a point is a bin of ``k`` episodes at its last episode's x and
the mean y of its uncut episodes (none uncut: no point).
``tests/dashboard/test_store_queries.py`` checks that a finished run's page,
unbinned, shows :func:`run_episodes`' x and y, per agent and pooled, of a
two-agent run; ``tests/analysis/test_curve_sets.py`` that these are the
episode table's (:func:`xdoe.results.load`) grouped by run, worker and episode.

Memory: drawing the curves of 200 runs x 5,000 episodes holds one run's
episodes at a time, and the rest grows with the runs, not the episodes
(issue 26); a page read holds at most ``max_points`` points per line.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import chain
from typing import TYPE_CHECKING, Any, Iterator

import numpy as np
from sqlalchemy import func, select
from sqlalchemy.exc import SQLAlchemyError

from xdoe._cuts import BUDGET_CUTS
from xdoe.store.schema._engine import store_error
from xdoe.store.views._export import (DESIGN_COLUMNS, SelectedPhase, check_experiment, export_columns, phase_factors,
                                selected_phases)
from xdoe.store.views._scores import SCORE_METRICS, _mark, _with_episodes
from xdoe.store.schema._tables import episode as episode_t, phase as phase_t, run_instance as run_instance_t

if TYPE_CHECKING:
    from xdoe.store.schema._database import Database

__all__ = ["CurvePhases", "RunEpisodes", "curve_phases", "run_episodes", "phase_means", "steps_x", "episodes_sql",
           "curve_points"]

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
    """The phases :meth:`store.views.episode_table <xdoe.store.views._views.Views.episode_table>` would read (same
    ``experiment`` and ``include_branches``) that have episodes, in its order
    (``phases``: :class:`~xdoe.store.views._export.SelectedPhase` each), the
    factors in the order runs name them and their column names in that table."""

    phases: tuple[SelectedPhase, ...]
    factors: tuple[str, ...]
    columns: tuple[str, ...]


def curve_phases(db: "Database", experiment: str | None = None, *, include_branches: bool = False) -> CurvePhases:
    """See :class:`CurvePhases` (an index probe per phase, no episode read).
    ``db``: the store's database, ``store.database``.

    Raises:
        InputError: ``experiment`` is not in the store.
        StoreError: the store cannot be read.
    """
    check_experiment(db, experiment)
    selected = selected_phases(db, experiment, include_branches=include_branches)
    factors = phase_factors(selected)
    columns = export_columns(factors)[len(DESIGN_COLUMNS):len(DESIGN_COLUMNS) + len(factors)]
    try:
        with db.engine.connect() as conn:
            present = _with_episodes(conn, [p.phase_id for p in selected])
    except SQLAlchemyError as exc:
        raise store_error(db.full_url, "read the episodes of", exc) from None
    return CurvePhases(tuple(p for p in selected if p.phase_id in present), tuple(factors), tuple(columns))


def steps_x(steps: Any, start: float = 0) -> np.ndarray:
    """The learning curve's x of episodes (or bins of them) in recorded order
    whose ``steps`` are given (cut ones included): the environment steps so
    far, ``start`` (the steps before them) plus the cumulative sum."""
    return start + np.cumsum(np.asarray(steps))


def episodes_sql(mark: str, ys: tuple[str, ...], *, pooled: bool, rows: bool = False, agent: bool = False) -> str:
    """The statement behind every learning curve: one phase's episodes (see
    the module docstring), unordered, as columns ``first``, ``top`` (first and
    last row id), ``steps``, ``wall``, ``cut`` (1: cut by a budget),
    ``cut_rows`` (its rows cut by a budget) and ``y0``, ``y1``, ... (the
    metrics ``ys`` pooled over agents). Without ``pooled`` each row is an
    episode (one agent's rows: the same columns without a ``GROUP BY``).
    Parameters: the phase id; with ``agent`` the agent's name (only its rows
    are read; give it with ``pooled=False``); with ``rows`` the row ids read,
    ``after < id <= until`` (a run's rows come an episode at a time: these
    are whole episodes when ``after`` and ``until`` are ends of episodes, as
    :func:`curve_points` chooses them)."""
    for y in ys:
        _check(y)
    where = (f"ep.phase_id = {mark}" + (f" AND ep.agent = {mark}" if agent else "")
             + (f" AND ep.id > {mark} AND ep.id <= {mark}" if rows else ""))
    if not pooled:
        metrics = "".join(f", ep.{y} AS y{i}" for i, y in enumerate(ys))
        return (f"SELECT ep.id AS first, ep.id AS top, ep.steps AS steps, ep.wall_time AS wall, {_CUT} AS cut, "
                f"{_CUT} AS cut_rows{metrics} FROM episode ep WHERE {where}")
    metrics = "".join(f", AVG(ep.{y}) AS y{i}" for i, y in enumerate(ys))
    return (f"SELECT MIN(ep.id) AS first, MAX(ep.id) AS top, MAX(ep.steps) AS steps, MAX(ep.wall_time) AS wall, "
            f"MAX({_CUT}) AS cut, SUM({_CUT}) AS cut_rows{metrics} FROM episode ep WHERE {where} "
            "GROUP BY ep.worker, ep.episode")


def _first_episode_sql(mark: str) -> str:
    return ("SELECT ep.agent FROM episode ep JOIN (SELECT one.worker, one.episode FROM episode one "
            f"WHERE one.phase_id = {mark} ORDER BY one.id LIMIT 1) f ON ep.worker = f.worker AND ep.episode = f.episode "
            f"WHERE ep.phase_id = {mark} ORDER BY ep.id")


def _agents(execute: Any, mark: str, phase_id: int) -> list[str]:
    """The agents of a phase in the order its rows name them (none without
    episodes): the recorder writes one row per agent for every episode of a
    phase, so its first episode tells (two index probes). With more than one
    the rows are pooled; a phase of one agent is read row by row, no ``GROUP
    BY`` (7x faster on SQLite: 0.4 s a million rows). ``execute(sql,
    params)`` returns the rows."""
    return [str(name) for name, in execute(_first_episode_sql(mark), (phase_id, phase_id))]


def run_episodes(db: "Database", phase_ids: list[int], metric: str, *, wall: bool = True,
                 agent: str | None = None) -> Iterator[RunEpisodes]:
    """Per phase of ``phase_ids`` with episodes (in that order), its episodes
    in recorded order (see the module docstring: :func:`episodes_sql`), one
    index scan per phase: pooled over the agents, or with ``agent`` that
    agent's rows alone (phases without them are left out); without ``wall``
    the wall times are not read (``None`` in their place).
    ``db``: the store's database, ``store.database``.

    Raises:
        ValueError: an unknown metric.
        StoreError: the store cannot be read.
    """
    _check(metric)
    width = 5 if wall else 4
    try:
        with db.engine.connect() as conn:
            mark = _mark(conn)
            cursor = conn.connection.dbapi_connection.cursor()  # plain tuples: a million rows per pass

            def execute(sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
                cursor.execute(sql, params)
                return cursor.fetchall()

            try:
                for pid in phase_ids:
                    # only the columns needed: fetching the rows into Python is the cost (~1.6 us a row)
                    pooled = agent is None and len(_agents(execute, mark, pid)) > 1
                    chosen = episodes_sql(mark, (metric,), pooled=pooled, agent=agent is not None)
                    rows = execute(f"SELECT e.y0, e.steps, e.cut, e.cut_rows{', e.wall' if wall else ''} FROM ("
                                   f"{chosen}) e ORDER BY e.first", (pid,) if agent is None else (pid, agent))
                    # to floats (NULL: NaN, as np.array does) without a list of arrays
                    data = np.fromiter(chain.from_iterable(rows), dtype=float,
                                       count=len(rows) * width).reshape(-1, width)
                    del rows
                    if len(data):
                        yield (pid, data[:, 0], data[:, 1], data[:, 4] if wall else None, data[:, 2] > 0,
                               int(data[:, 3].sum()))
            finally:
                cursor.close()
    except SQLAlchemyError as exc:
        raise store_error(db.full_url, "read the episodes of", exc) from None


def phase_means(db: "Database", phase_ids: list[int], metric: str, *, keep_cut: bool,
                agent: str | None = None) -> dict[int, float]:
    """Per phase: the mean of ``metric`` over its episode rows (every agent's,
    or ``agent``'s alone; rows cut by a budget left out unless ``keep_cut``;
    NaN when every value is missing); phases without such rows are absent.
    ``db``: the store's database, ``store.database``.

    Raises:
        ValueError: an unknown metric.
        StoreError: the store cannot be read.
    """
    _check(metric)
    out: dict[int, float] = {}
    keep = ("" if keep_cut else f" AND {_CUT} = 0") + ("" if agent is None else " AND ep.agent = {}")
    try:
        with db.engine.connect() as conn:
            mark = _mark(conn)
            for chunk in _chunks(phase_ids, 2000):
                sql = (f"SELECT ep.phase_id, avg(ep.{metric}) FROM episode ep "
                       f"WHERE ep.phase_id IN ({', '.join([mark] * len(chunk))}){keep.format(mark)} "
                       "GROUP BY ep.phase_id")
                for pid, value in conn.exec_driver_sql(sql, (*chunk, *([] if agent is None else [agent]))):
                    out[int(pid)] = float("nan") if value is None else float(value)
    except SQLAlchemyError as exc:
        raise store_error(db.full_url, "average the episodes of", exc) from None
    return out


def curve_points(db: "Database", instance_id: int, *, after: int = 0, max_points: int = 1000,
                 bin_size: int | None = None) -> dict[str, Any]:
    """The learning curves of one run instance, as its dashboard pages draw
    them: per phase (index order) and line, the points of its episodes newer
    than episode row ``after`` (see the module docstring: x the run's
    environment steps so far, earlier phases' steps first; episodes cut by a
    budget in x, without a point). A phase of one agent has one line; a phase
    of several has one line per agent (that agent's rows, as
    :func:`run_episodes` with ``agent``) and last the line pooled over them
    (as :func:`run_episodes` without). A line with more than ``max_points``
    new episodes is binned in SQL, ``k = ceil(episodes / max_points)``
    episodes a bin, counted from the phase's first episode (so a live page
    that passes the ``k`` of its first read as ``bin_size`` gets the bins a
    full read would have; the last bin of a read may be partial). The x of
    the rows up to ``after`` is summed in SQL, one aggregate per line;
    nothing is read past the phase counts when no row is new. While the
    instance runs, its newest episode waits until every agent's row of it
    is stored (a flush of a full row buffer can split them).

    Returns:
        ``{"last": id of the newest row read (pass it as ``after`` next time),
        "k": the largest bin size used,
        "series": [{"phase", "phase_index", "mode", "agent", "agents", "x",
        "reward", "objective"}]}``, one series per line with new points:
        ``agent`` the agent's name (``None``: pooled over the phase's
        ``agents``, the number of agents); ``x`` in environment steps,
        ``reward`` and ``objective`` as stored (``None``: missing).
    """
    p, ep = phase_t.c, episode_t.c
    series: list[dict[str, Any]] = []
    last, used = after, bin_size or 1
    with db.read("read episodes from") as conn:
        phases = conn.execute(select(p.id, p.index, p.name, p.mode)
                              .where(p.instance_id == instance_id).order_by(p.index)).all()
        new = {pid: (int(n), int(top)) for pid, n, top in conn.execute(
            select(ep.phase_id, func.count(), func.max(ep.id))
            .where(ep.phase_id.in_([ph.id for ph in phases]), ep.id > after).group_by(ep.phase_id))}
        if not new:
            return {"last": last, "k": used, "series": series}
        mark = _mark(conn)

        def execute(sql: str, params: tuple[Any, ...]) -> list[Any]:
            return conn.exec_driver_sql(sql, params).all()

        offset = 0  # the run's environment steps before the phase
        for ph in phases[:max(i for i, ph in enumerate(phases) if ph.id in new) + 1]:
            agents = _agents(execute, mark, ph.id)
            until = None
            if ph.id in new:
                rows, until = new[ph.id]
                if len(agents) > 1:
                    until = _whole(conn, execute, mark, instance_id, until, len(agents))
                last = max(last, until)
                k = bin_size or max(1, math.ceil(rows / max(1, len(agents)) / max_points))
                used = max(used, k)
            # (agent name or None: pooled, the agent's name filtering or None); the pooled line last: its end is
            # where the next phase starts
            lines = [(agents[0] if agents else None, None)] if len(agents) <= 1 else [
                *((name, name) for name in agents), (None, None)]
            for name, only in lines:
                pooled, keyed = len(agents) > 1 and only is None, () if only is None else (only,)
                seen, start = 0, offset
                if after:
                    before = episodes_sql(mark, (), pooled=pooled, rows=True, agent=only is not None)
                    n, steps = execute(f"SELECT COUNT(*), SUM(e.steps) FROM ({before}) e", (ph.id, *keyed, 0, after))[0]
                    seen, start = int(n), offset + int(steps or 0)
                end = start
                if until is not None:
                    bins = execute(
                        "SELECT SUM(b.steps), SUM(1 - b.cut), AVG(CASE WHEN b.cut = 0 THEN b.y0 END), "
                        "AVG(CASE WHEN b.cut = 0 THEN b.y1 END) FROM (SELECT e.steps, e.cut, e.y0, e.y1, "
                        f"(ROW_NUMBER() OVER (ORDER BY e.first) - 1 + {mark}) / {mark} AS bin FROM ("
                        f"{episodes_sql(mark, ('reward', 'objective'), pooled=pooled, rows=True, agent=only is not None)}"
                        ") e) b GROUP BY b.bin ORDER BY b.bin", (seen, k, ph.id, *keyed, after, until))
                    xs = steps_x([int(b[0]) for b in bins], start).tolist()
                    end = xs[-1] if xs else start
                    points = [(x, b[2], b[3]) for x, b in zip(xs, bins) if b[1]]  # a bin of cut episodes: no point
                    if points:
                        series.append({"phase": ph.name, "phase_index": ph.index, "mode": ph.mode, "agent": name,
                                       "agents": len(agents), "x": [x for x, _, _ in points],
                                       "reward": [None if r is None else float(r) for _, r, _ in points],
                                       "objective": [None if o is None else float(o) for _, _, o in points]})
            offset = end
    return {"last": last, "k": used, "series": series}


def _whole(conn: Any, execute: Any, mark: str, instance_id: int, top: int, agents: int) -> int:
    """The newest row id to read of a phase whose newest row is ``top``:
    ``top``, or the row before its episode's first while the instance runs
    and that episode has fewer than ``agents`` rows (the rest are coming)."""
    (rows, first), = execute("SELECT COUNT(*), MIN(o.id) FROM episode o JOIN episode t ON o.phase_id = t.phase_id "
                             f"AND o.worker = t.worker AND o.episode = t.episode WHERE t.id = {mark}", (top,))
    if int(rows) >= agents:
        return top
    status = conn.execute(select(run_instance_t.c.status).where(run_instance_t.c.id == instance_id)).scalar()
    return top if status != "running" else int(first) - 1
