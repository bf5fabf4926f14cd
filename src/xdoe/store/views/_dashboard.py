"""The queries behind ``xrun dashboard``'s campaign pages: every campaign's
counts per status, and a campaign's runs filtered, sorted and one page at a
time (run pages and lineage: :mod:`xdoe.store.views._runview`; curves: :mod:`xdoe.store.views._curves`).

Sized for stores of 10,000 runs and 10 million episode rows: statuses come
from one query (each run's newest and newest finished instance, grouped in
SQL) decided by :meth:`store.views.campaign_status <xdoe.store.views._views.Views.campaign_status>`'s rule, times converted
only for the rows a page shows; episode rows are read only for the runs on
the page (a grouped average of their last phase, through the
``(phase_id, id)`` index), or for all when sorting by response, with the
finished instances' values cached by the caller.

A campaign's runs are its runs in the store plus, when the caller passes
the design (``design``: experiment uid -> the runs xgen wrote, e.g. read
from ``design.csv``), the design's runs never started: ``missing``.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import socket
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from sqlalchemy import func, select

from xdoe.store._liveness import HEARTBEAT_TIMEOUT
from xdoe.store.views._status import STATUSES, DesignRun, RunStatus, aware, decide, version_rows
from xdoe.store.schema._tables import (episode as episode_t, experiment as experiment_t, phase as phase_t, run as run_t,
                                run_instance as instance_t, utcnow)

if TYPE_CHECKING:
    from xdoe.store.schema._database import Database

__all__ = ["experiment_uids", "experiment_run_count", "data_marker", "CampaignSummary", "RunRow", "RunsPage", "campaign_summaries",
           "campaign_runs", "SORT_KEYS", "Design"]

#: Sort keys of :func:`campaign_runs` (besides ``level:<factor>``).
SORT_KEYS = ("design_point", "run", "status", "start", "elapsed", "response")
_CHUNK = 500


@dataclass(frozen=True)
class CampaignSummary:
    """One experiment: runs per status (:data:`xdoe.store.views._status.STATUSES`),
    ``progress`` = done (finished or pruned) / runs, first start and ``elapsed`` seconds until
    the last end (until now while a run is running)."""

    experiment: str
    runs: int
    counts: dict[str, int]
    progress: float
    start: _dt.datetime | None
    elapsed: float | None


@dataclass(frozen=True)
class RunRow:
    """A run of a campaign page: its status, its factor levels, and its
    ``response``: the mean objective per episode (over workers and agents)
    of the last phase of the instance its status comes from."""

    status: RunStatus
    levels: dict[str, Any]
    response: float | None = None

    @property
    def elapsed(self) -> float | None:
        s = self.status
        if s.start is None:
            return None
        return ((s.end or utcnow()) - s.start).total_seconds()


@dataclass
class RunsPage:
    """One page of a campaign's runs and what the page needs around them."""

    experiment: str
    rows: list[RunRow]
    total: int
    filtered: int
    page: int
    pages: int
    counts: dict[str, int]
    factors: list[str]


def _full(status: RunStatus) -> RunStatus:
    """A status from :func:`_statuses` with its times converted (done only
    for the runs a page shows)."""
    return replace(status, start=aware(status.start), end=aware(status.end))


def _as_read(value: Any) -> Any:
    return value


def _statuses(db: "Database", experiment: str | None, timeout: float,
              now: _dt.datetime | None) -> tuple[list[RunStatus], dict[str, Any]]:
    """The status of the latest version of every run (of one experiment), by
    the rule of :meth:`store.views.campaign_status <xdoe.store.views._views.Views.campaign_status>`
    (:func:`~xdoe.store.views._status.decide` of one
    :func:`~xdoe.store.views._status.version_rows` query). Returns the statuses,
    their times as read (text on SQLite: cheap for 10,000 runs; :func:`_full`
    converts them), and ``uid -> (experiment uid, levels as JSON text)``.

    Unlike ``campaign_status``, a run whose latest version never ran is
    ``missing`` without saying whether an older version ran. Sessions of a
    session tree are not runs of a campaign (:mod:`xdoe.store.views._membership`;
    the tree page shows them) and are left out.
    """
    from xdoe.store.views._membership import session_child_uids

    rows = version_rows(db, experiment, latest_only=True)
    children = session_child_uids(db)
    if children:
        rows = [r for r in rows if r.uid not in children]
    moment, here = now or utcnow(), socket.gethostname()
    out: list[RunStatus] = []
    extra: dict[str, Any] = {}
    for row in rows:
        extra[row.uid] = (row.experiment, row.levels)
        run = DesignRun(row.uid, row.content_hash, row.design_point, row.repetition, row.seed)
        out.append(decide(run, row, now=moment, timeout=timeout, hostname=here, times=_as_read))
    return out, extra


#: The design passed to :func:`campaign_summaries` and :func:`campaign_runs`:
#: experiment uid -> its designed runs, each with ``uid``, ``design_point``,
#: ``repetition``, ``seed`` and ``levels`` attributes (a dict).
Design = Mapping[str, Sequence[Any]]


def _never_started(design: Design | None, experiment: str, known: Mapping[str, Any]) -> list[Any]:
    """The designed runs of ``experiment`` that the store does not hold."""
    return [d for d in (design or {}).get(experiment, ()) if d.uid not in known]


def _missing(entry: Any) -> RunStatus:
    return RunStatus(entry.uid, "missing", "never started", entry.design_point, entry.repetition,
                     entry.seed, None)


def _count(statuses: list[RunStatus]) -> dict[str, int]:
    counts = {s: 0 for s in STATUSES if s != "invalid"}
    for s in statuses:
        counts[s.status] = counts.get(s.status, 0) + 1
    return counts


def campaign_summaries(db: "Database", *, heartbeat_timeout: float = HEARTBEAT_TIMEOUT,
                       now: _dt.datetime | None = None, design: Design | None = None) -> list[CampaignSummary]:
    """Every experiment in the store (and in ``design``), newest first, with
    its counts per status; a designed run the store does not hold counts as
    ``missing`` (an experiment of ``design`` never started: all missing).

    One query whatever the number of experiments.
    """
    statuses, extra = _statuses(db, None, heartbeat_timeout, now)
    moment = now or utcnow()
    groups: dict[str, list[RunStatus]] = {}
    for st in statuses:
        groups.setdefault(extra[st.run][0] or "(no experiment)", []).append(st)
    for exp in (design or {}):
        groups.setdefault(exp, []).extend(_missing(d) for d in _never_started(design, exp, extra))
    groups = {exp: runs for exp, runs in groups.items() if runs}
    out = []
    for exp, runs in groups.items():
        counts = _count(runs)
        starts = [r.start for r in runs if r.start is not None]
        start = aware(min(starts)) if starts else None
        elapsed = None
        if start is not None:
            ends = [r.end for r in runs if r.end is not None]
            last = moment if counts["running"] or not ends else aware(max(ends))
            elapsed = (last - start).total_seconds()  # type: ignore[operator]
        out.append(CampaignSummary(exp, len(runs), counts, (counts["finished"] + counts["pruned"]) / len(runs),
                                   start, elapsed))
    out.sort(key=lambda c: c.start or moment, reverse=True)
    return out


def experiment_uids(db: "Database") -> list[str]:
    """Every experiment uid in the store, newest first (one small query)."""
    e = experiment_t.c
    with db.read("read experiments from") as conn:
        return list(conn.execute(select(e.uid).order_by(e.id.desc())).scalars())


def experiment_run_count(db: "Database", experiment: str) -> int:
    """How many runs (versions included) an experiment has (one count query)."""
    r, e = run_t.c, experiment_t.c
    with db.read("read runs from") as conn:
        return int(conn.execute(
            select(func.count()).select_from(run_t).join(experiment_t, r.experiment_id == e.id)
            .where(e.uid == experiment)).scalar_one())


def data_marker(db: "Database") -> tuple[Any, ...]:
    """A fingerprint of what a campaign's results are made of, in a few
    small queries that read no episode (indexes, the phase table): the
    runs (count and last id), per status the instances and the phases
    (count and sum of ids: a status change moves one id between sums), the
    last episode row id (rows are only appended, and leave only with their
    phase) and the sessions of session trees. Equal markers: the same runs,
    instances, phases and episode rows, so the same scores (:meth:`store.views.run_scores <xdoe.store.views._views.Views.run_scores>`);
    the dashboard keeps its analyses by it (issue 26: a reload without new
    rows costs these queries only).

    Raises:
        StoreError: the store cannot be read.
    """
    from xdoe.store.views._membership import session_child_uids

    r, i, p, ep = run_t.c, instance_t.c, phase_t.c, episode_t.c
    with db.read("read the state of") as conn:
        runs = tuple(conn.execute(select(func.count(), func.max(r.id))).one())
        instances = tuple(tuple(row) for row in conn.execute(
            select(i.status, func.count(), func.sum(i.id)).group_by(i.status).order_by(i.status)))
        phases = tuple(tuple(row) for row in conn.execute(
            select(p.status, func.count(), func.sum(p.id)).group_by(p.status).order_by(p.status)))
        last_episode = conn.execute(select(func.max(ep.id))).scalar()
    return runs, instances, phases, last_episode, tuple(sorted(session_child_uids(db)))


def _last_phase_means(db: "Database", instance_ids: list[int]) -> dict[int, float]:
    """``instance id -> mean objective per episode row of its last phase``."""
    out: dict[int, float] = {}
    if not instance_ids:
        return out
    p, ep = phase_t.c, episode_t.c
    with db.read("read episodes from") as conn:
        for start in range(0, len(instance_ids), _CHUNK):
            chunk = instance_ids[start:start + _CHUNK]
            last = (select(p.instance_id, func.max(p.index).label("ix"))
                    .where(p.instance_id.in_(chunk)).group_by(p.instance_id).subquery())
            phase_ids = {pid: iid for pid, iid in conn.execute(
                select(p.id, p.instance_id).join(
                    last, (p.instance_id == last.c.instance_id) & (p.index == last.c.ix)))}
            if not phase_ids:
                continue
            for pid, mean in conn.execute(
                select(ep.phase_id, func.avg(ep.objective))
                .where(ep.phase_id.in_(list(phase_ids))).group_by(ep.phase_id)
            ):
                if mean is not None:
                    out[phase_ids[pid]] = float(mean)
    return out


def _sort_key(sort: str) -> Any:
    def none_last(value: Any) -> tuple[bool, Any]:
        return (value is None, value if value is not None else 0)

    if sort == "run":
        return lambda r: r.status.run
    if sort == "status":
        return lambda r: (STATUSES.index(r.status.status), r.status.run)
    if sort == "start":
        return lambda r: none_last(r.status.start)  # ISO text or datetime: both sort in time order
    if sort == "elapsed":
        return lambda r: none_last(RunRow(_full(r.status), {}).elapsed)
    if sort == "response":
        return lambda r: none_last(r.response)
    if sort.startswith("level:"):
        name = sort[6:]
        return lambda r: (name not in r.levels, json.dumps(r.levels.get(name), sort_keys=True))
    return lambda r: (r.status.design_point is None, r.status.design_point or 0,
                      r.status.repetition or 0, r.status.run)


def campaign_runs(
    db: "Database",
    experiment: str,
    *,
    status: str | None = None,
    search: str | None = None,
    sort: str = "design_point",
    descending: bool = False,
    page: int = 1,
    per_page: int = 50,
    heartbeat_timeout: float = HEARTBEAT_TIMEOUT,
    cache: dict[int, float] | None = None,
    design: Design | None = None,
) -> RunsPage:
    """One page of an experiment's runs.

    Args:
        status: keep runs with this status only.
        search: keep runs whose uid or levels (as JSON text) contain this.
        sort: one of :data:`SORT_KEYS` or ``level:<factor>``; ``response``
            averages the last phase of every filtered run (the others only
            the page's runs).
        page: 1-based; clipped to the last page.
        cache: responses of finished instances kept between calls (the
            dashboard keeps one per server).
        design: the designed runs per experiment: those the store does not
            hold are listed ``missing`` (with their levels).

    Raises:
        StoreError: the store cannot be read.
    """
    statuses, extra = _statuses(db, experiment, heartbeat_timeout, None)
    for entry in _never_started(design, experiment, extra):
        statuses.append(_missing(entry))
        extra[entry.uid] = (experiment, json.dumps(entry.levels or {}))
    counts = _count(statuses)
    rows = [(st, extra[st.run][1] or "{}") for st in statuses]
    if status:
        rows = [r for r in rows if r[0].status == status]
    if search:
        needle = search.lower()
        rows = [r for r in rows if needle in r[0].run.lower() or needle in r[1].lower()]
    full = [RunRow(st, json.loads(text)) for st, text in rows] if sort.startswith("level:") else None
    if sort == "response":  # levels stay JSON text until the page is cut
        full = _with_response(db, [RunRow(st, text) for st, text in rows], cache)  # type: ignore[arg-type]
    if full is None:
        full = [RunRow(st, text) for st, text in rows]  # type: ignore[arg-type]  # decoded below
    full.sort(key=_sort_key(sort), reverse=descending)
    pages = max(1, math.ceil(len(full) / per_page))
    page = min(max(1, page), pages)
    part = full[(page - 1) * per_page: page * per_page]
    part = [RunRow(_full(r.status), json.loads(r.levels) if isinstance(r.levels, str) else r.levels,
                   r.response) for r in part]
    if sort != "response":
        part = _with_response(db, part, cache)
    factors = sorted({k for r in part for k in r.levels})
    return RunsPage(experiment, part, len(statuses), len(full), page, pages, counts, factors)


def _with_response(db: "Database", rows: list[RunRow], cache: dict[int, float] | None) -> list[RunRow]:
    """``rows`` with their responses; a finished or failed instance's value
    never changes, so it is kept in ``cache`` (instance id -> value) when given
    (an interrupted one may resume)."""
    cache = {} if cache is None else cache
    wanted = [r.status.instance_id for r in rows
              if r.status.instance_id is not None and r.status.instance_id not in cache]
    means = _last_phase_means(db, wanted)
    for r in rows:
        if r.status.status in ("finished", "pruned", "failed") and r.status.instance_id in means:
            cache[r.status.instance_id] = means[r.status.instance_id]  # type: ignore[index]
    known = {**cache, **means}
    return [RunRow(r.status, r.levels, known.get(r.status.instance_id or -1)) for r in rows]
