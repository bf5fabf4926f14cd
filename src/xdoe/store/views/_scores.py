"""One score per run, aggregated in the database (issue 26): the per-run
response of :func:`xdoe.analysis.run_table` without reading the episodes
into Python.

The analysis's unit is the run: a response ``PHASE:METRIC:STAT`` turns the
episodes of one run, phase and agent into one number. :func:`run_scores`
asks the database for exactly that: a ``GROUP BY`` (``mean``, ``sum``,
``max``, ``min``) or window functions (``median``, ``iqm``, ``last``) over
the episode rows of the selected phases, so the memory and the rows sent to
Python grow with the runs, not with the episodes.

It selects the same episodes as :meth:`store.views.episode_table <xdoe.store.views._views.Views.episode_table>` (latest
finished instance per run, sessions of a tree only with
``include_branches``) and follows the pandas computation of
:func:`xdoe.analysis.run_table` exactly: a missing value (``NULL``, a NaN
recorded as missing) is skipped by ``mean``, ``median``, ``max``, ``min``,
``sum`` (0 when every value is missing) and ``last`` (the last recorded
value); ``iqm`` (``scipy.stats.trim_mean(values, 0.25)``) is NaN when a
value is missing (scipy propagates NaN); a comparison
(``objective>0``) is 1.0 where it holds and 0.0 elsewhere (a missing value
compares unequal to everything, as NaN does). The sums are the database's
(a last-bit difference from numpy's summation is possible; every printed
figure is the same). ``tests/store/test_scores.py`` checks every statistic
against the pandas computation on SQLite and PostgreSQL.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlalchemy.exc import SQLAlchemyError

from xdoe._cuts import BUDGET_CUTS
from xdoe.errors import InputError
from xdoe.store.schema._engine import store_error
from xdoe.store.views._export import (BRANCH_COLUMN, DESIGN_COLUMNS, check_experiment, export_columns, phase_factors,
                                selected_phases, left_out_runs)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from xdoe.store.views._export import SelectedPhase
    from xdoe.store.schema._database import Database

__all__ = ["ScoreTable", "run_scores", "SCORE_COLUMNS", "SCORE_METRICS", "SCORE_STATS", "COMPARISONS"]

#: what follows the design and factor columns in every row of :attr:`ScoreTable.rows`
SCORE_COLUMNS = ("phase", "agent", "score:episodes", "score:kept", "score:y")
SCORE_METRICS = ("objective", "reward", "steps", "wall_time")
SCORE_STATS = ("mean", "iqm", "median", "last", "max", "min", "sum")
COMPARISONS = (">", ">=", "<", "<=", "==", "!=")
#: phases per query (bounds the statement's parameters: SQLite allows 32,766)
_CHUNK = 2000


@dataclass(frozen=True)
class ScoreTable:
    """Per run and agent, the score of one phase.

    ``columns``: ``experiment, run, design_point, repetition, seed``, the
    factor columns (named as :meth:`store.views.episode_table <xdoe.store.views._views.Views.episode_table>` names them),
    ``phase, agent, score:episodes`` (episode rows of the run, phase and
    agent), ``score:kept`` (those not cut by a budget, or all with
    ``keep_cut``), ``score:y``
    (the statistic over the kept rows; ``None`` when nothing is kept or
    every value is missing), and with branches a last column ``branch``.
    ``rows``: tuples in that order, in the episode table's run order;
    ``factors``: the factor column names; ``phase``: the phase scored
    (``None`` when no episode is recorded); ``phases``: the design's phase
    names with episodes, in the episode table's order; ``branch_runs``:
    the branch sessions with episodes in any phase; ``left_out``: the
    design's runs whose chosen instance did not finish (pruned, or no instance
    done), run uid -> status (:func:`~xdoe.store.views._export.left_out_runs`;
    scored here)."""

    columns: tuple[str, ...]
    rows: list[tuple[Any, ...]]
    factors: tuple[str, ...]
    phase: str | None
    phases: tuple[str, ...]
    branch_runs: tuple[str, ...] = field(default=())
    left_out: dict[str, str] = field(default_factory=dict)


def _value_sql(metric: str, op: str | None, mark: str) -> str:
    column = f"ep.{metric}"
    if op is None:
        return f"CAST({column} AS DOUBLE PRECISION)" if metric == "steps" else column
    sql_op = {"==": "="}.get(op, op)
    # NaN (NULL) compares false, except "!=", which numpy answers true (the threshold is the last parameter)
    test = f"{column} IS NULL OR {column} <> {mark}" if op == "!=" else f"{column} {sql_op} {mark}"
    return f"CAST(CASE WHEN {test} THEN 1 ELSE 0 END AS DOUBLE PRECISION)"


def _stat_sql(stat: str) -> str:
    """``SELECT grp, agent, y`` over the CTE ``e`` (columns grp, agent, id,
    ord, v, k): the statistic of the kept rows per group."""
    if stat in ("mean", "max", "min", "sum"):
        agg = {"mean": "avg(v)", "max": "max(v)", "min": "min(v)", "sum": "coalesce(sum(v), 0.0)"}[stat]
        return f"SELECT grp, agent, {agg} FROM e WHERE k = 1 GROUP BY grp, agent"
    if stat == "last":
        return ("SELECT grp, agent, v FROM (SELECT grp, agent, v, row_number() OVER "
                "(PARTITION BY grp, agent ORDER BY ord DESC, id DESC) AS rn FROM e "
                "WHERE k = 1 AND v IS NOT NULL) w WHERE rn = 1")
    if stat == "median":
        return ("SELECT grp, agent, avg(v) FROM (SELECT grp, agent, v, row_number() OVER "
                "(PARTITION BY grp, agent ORDER BY v) AS rn, count(*) OVER (PARTITION BY grp, agent) AS n "
                "FROM e WHERE k = 1 AND v IS NOT NULL) w "
                "WHERE rn = (n + 1) / 2 OR rn = (n + 2) / 2 GROUP BY grp, agent")
    if stat == "iqm":  # scipy.stats.trim_mean(values, 0.25): cut int(n / 4) from each end; NaN if one is missing
        return ("SELECT grp, agent, CASE WHEN min(nv) < min(n) THEN NULL ELSE avg(v) END FROM "
                "(SELECT grp, agent, v, row_number() OVER (PARTITION BY grp, agent ORDER BY v) AS rn, "
                "count(*) OVER (PARTITION BY grp, agent) AS n, count(v) OVER (PARTITION BY grp, agent) AS nv "
                "FROM e WHERE k = 1) w WHERE rn > n / 4 AND rn <= n - n / 4 GROUP BY grp, agent")
    raise ValueError(f"unknown statistic {stat!r}; expected one of {', '.join(SCORE_STATS)}")


def _mark(conn: Any) -> str:
    """The driver's parameter marker (statements go to the driver as they are:
    compiling thousands of bound parameters would cost more than the query)."""
    return "?" if conn.dialect.paramstyle == "qmark" else "%s"


def _with_episodes(conn: Any, phase_ids: list[int]) -> set[int]:
    """The phases among ``phase_ids`` with at least one episode row (an index probe each)."""
    out: set[int] = set()
    mark = _mark(conn)
    for start in range(0, len(phase_ids), _CHUNK):
        chunk = phase_ids[start:start + _CHUNK]
        rows = conn.exec_driver_sql(f"SELECT p.id FROM phase p WHERE p.id IN ({', '.join([mark] * len(chunk))}) "
                                    "AND EXISTS (SELECT 1 FROM episode ep WHERE ep.phase_id = p.id)", tuple(chunk))
        out.update(int(r[0]) for r in rows)
    return out


def _aggregate(conn: Any, groups: list[list[tuple[int, int]]], metric: str, op: str | None,
               threshold: float | None, stat: str,
               keep_cut: bool) -> tuple[dict[tuple[int, str], tuple[int, int]], dict[tuple[int, str], Any]]:
    """Per (group, agent): (episode rows, kept rows) and the statistic.
    ``groups[g]`` lists the (phase id, order) pairs pooled into group ``g``."""
    mark = _mark(conn)
    value = _value_sql(metric, op, mark)
    cuts = ", ".join(f"'{c}'" for c in BUDGET_CUTS)
    keep = "1" if keep_cut else f"CASE WHEN ep.cut_by IN ({cuts}) THEN 0 ELSE 1 END"
    counts: dict[tuple[int, str], tuple[int, int]] = {}
    scores: dict[tuple[int, str], Any] = {}
    flat = [(pid, g, order) for g, members in enumerate(groups) for pid, order in members]
    for start in range(0, len(flat), _CHUNK):
        chunk = flat[start:start + _CHUNK]
        values = ", ".join([f"({mark}, {mark}, {mark})"] * len(chunk))
        params = tuple(x for row in chunk for x in row) + ((threshold,) if op is not None else ())
        cte = (f"WITH m(phase_id, grp, ord) AS (VALUES {values}), "
               f"e AS (SELECT m.grp AS grp, ep.agent AS agent, ep.id AS id, m.ord AS ord, {value} AS v, "
               f"{keep} AS k FROM episode ep JOIN m ON ep.phase_id = m.phase_id) ")
        for g, agent, n, kept in conn.exec_driver_sql(
                cte + "SELECT grp, agent, count(*), sum(k) FROM e GROUP BY grp, agent", params):
            counts[(int(g), agent)] = (int(n), int(kept))
        for g, agent, y in conn.exec_driver_sql(cte + _stat_sql(stat), params):
            scores[(int(g), agent)] = None if y is None else float(y)
    return counts, scores


def _resolve_phase(phases: list[str], phase: str | None) -> str:
    from xdoe._phases import phase_named

    if phase is None:
        return phases[-1]
    found = phase_named(phase, phases)
    if found is None:
        raise InputError(f"--response: no phase {phase!r} in the results (phases: {', '.join(map(str, phases))})")
    return found


def run_scores(db: "Database", experiment: str | None = None, *, phase: str | None = None,
               metric: str = "objective", stat: str = "mean", op: str | None = None,
               threshold: float | None = None, keep_cut: bool = False,
               include_branches: bool = False, runs: Sequence[str] | None = None) -> ScoreTable:
    """Per run and agent, ``stat`` of ``metric`` over the run's episodes of
    ``phase`` (its name, its index among the phases as text, or ``None``:
    the last phase with episodes), computed by the database (see the module
    docstring). ``op`` and ``threshold`` make the metric a comparison
    (``objective > 0``: 1.0 or 0.0 per episode). Episodes cut by a budget
    (:data:`xdoe._cuts.BUDGET_CUTS`) are counted in ``episodes`` but not in
    ``kept`` nor in ``y`` unless ``keep_cut``. The rows, the phases and the
    runs are those of :meth:`store.views.episode_table <xdoe.store.views._views.Views.episode_table>` with the same
    ``experiment`` and ``include_branches``; ``runs``: only the runs of these
    uids (their rows are those of the whole table, when the phase is named
    or theirs is the last phase with episodes).

    Raises:
        InputError: ``experiment`` is not in the store, or no phase ``phase``
            among the design's phases with episodes.
        ValueError: an unknown metric, statistic or comparison.
        StoreError: the store cannot be read.
    """
    if metric not in SCORE_METRICS:
        raise ValueError(f"unknown metric {metric!r}; expected one of {', '.join(SCORE_METRICS)}")
    if op is not None and op not in COMPARISONS:
        raise ValueError(f"unknown comparison {op!r}; expected one of {', '.join(COMPARISONS)}")
    _stat_sql(stat)  # checks the name
    check_experiment(db, experiment)
    selected = selected_phases(db, experiment, include_branches=include_branches, runs=runs)
    factors = phase_factors(selected)
    columns = export_columns(factors)
    names = tuple(columns[len(DESIGN_COLUMNS): len(DESIGN_COLUMNS) + len(factors)])
    columns = [*DESIGN_COLUMNS, *names, *SCORE_COLUMNS] + ([BRANCH_COLUMN] if include_branches else [])
    try:
        with db.engine.connect() as conn:
            present = _with_episodes(conn, [p.phase_id for p in selected])
            used = [p for p in selected if p.phase_id in present]
            phases = list(dict.fromkeys(p.name for p in used if p.branch is None))
            branch_runs = tuple(dict.fromkeys(p.run for p in used if p.branch is not None))
            if not phases and not branch_runs:
                return ScoreTable(tuple(columns), [], names, None, (), (), left_out_runs(selected))
            chosen = _resolve_phase(phases, phase) if phases else (phase or "")
            # one group per run (and phase name): its phases in episode-table order
            group_of: dict[str, int] = {}
            groups: list[list[tuple[int, int]]] = []
            heads: list["SelectedPhase"] = []
            for order, p in enumerate(used):
                if p.name != chosen:
                    continue
                g = group_of.get(p.run)
                if g is None:
                    g = group_of[p.run] = len(groups)
                    groups.append([])
                    heads.append(p)
                groups[g].append((p.phase_id, order))
            counts, scores = _aggregate(conn, groups, metric, op, threshold, stat, keep_cut)
    except SQLAlchemyError as exc:
        raise store_error(db.full_url, "aggregate episodes of", exc) from None
    rows = []
    for (g, agent), (n, kept) in sorted(counts.items(), key=lambda item: (item[0][0], str(item[0][1]))):
        p = heads[g]
        row = (p.experiment, p.run, p.design_point, p.repetition, p.seed,
               *(p.levels.get(f) for f in factors), chosen, agent, n, kept, scores.get((g, agent)))
        rows.append(row + ((p.branch,) if include_branches else ()))
    return ScoreTable(tuple(columns), rows, names, chosen if phases else None, tuple(phases), branch_runs,
                      left_out_runs(selected))
