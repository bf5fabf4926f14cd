"""Campaign status: for every run of a design, whether it is finished,
running, failed, interrupted or missing.

The runs come from an xgen output folder (``design.csv`` and the run files,
:mod:`xdoe.store.views._design_runs`; a run version is its uid and the content
hash of its loaded document, computed exactly as the executor records it)
and/or from the store (every run of an experiment, its latest version). The
status of a run version is decided (:func:`decide`, also the dashboard's
rule) from its instances, counted and picked in one grouped query
(:func:`version_rows`: SQLAlchemy Core on :mod:`xdoe.store.schema._tables`):

* ``running``: its newest instance is running and alive;
* ``interrupted``: its newest instance is marked interrupted, or is still
  marked running but is stale: its process is gone (same host) or its
  heartbeat is older than ``heartbeat_timeout`` seconds (the executor beats
  every 30 s) — and no instance finished;
* ``finished``: some instance finished (and the newest is not running);
* ``pruned``: its ``run_config.prune`` rule ended it early (done: never run
  again; the reason says at which rung);
* ``failed``: the newest instance failed (its one-line error is the reason);
* ``missing``: no instance of this version (the reason says when an older
  version of the document ran);
* ``invalid``: the run file cannot be read (only from an output folder).

Only the design's runs count: sessions of a session tree (``xrun branch``,
``xrun grow``; :mod:`xdoe.store.views._membership`) are left out, also a child
written with ``--no-run`` into the output folder before children had their
own ``branches/`` folder (it would be ``missing`` forever), and any run file
whose document has a ``session`` record. A folder holding only sessions (a
tree's ``branches/`` folder) shows those.
"""

from __future__ import annotations

import datetime as _dt
import json
import socket
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from xdoe.store.views._design_runs import DesignRun, design_runs
from xdoe.store.schema._tables import utcnow
from xdoe.store._liveness import HEARTBEAT_TIMEOUT, dead_reason
from xdoe.store.views._membership import session_child_uids
from xdoe.store.views._versions import VersionRow, version_rows

if TYPE_CHECKING:
    from xdoe.store.schema._database import Database

__all__ = ["STATUSES", "RunStatus", "CampaignStatus", "campaign_status", "design_runs",
           "DesignRun", "summarize", "VersionRow", "version_rows", "decide", "aware"]

#: Status of a run in a campaign, in display order.
STATUSES = ("finished", "pruned", "running", "failed", "interrupted", "missing", "invalid")


@dataclass(frozen=True)
class RunStatus:
    """The status of one run (see the module docstring); ``instance_id`` and
    the times are those of the instance the status comes from."""

    run: str
    status: str
    reason: str | None
    design_point: int | None
    repetition: int | None
    seed: int | None
    content_hash: str | None
    instance_id: int | None = None
    instances: int = 0
    host: str | None = None
    start: _dt.datetime | None = None
    end: _dt.datetime | None = None
    file: str | None = None
    #: what that instance warned and went on with, one line each (``RunResult.warnings``)
    warnings: tuple[str, ...] = ()


@dataclass
class CampaignStatus:
    """Every run's :class:`RunStatus`, in design order, and the counts per status."""

    runs: list[RunStatus]
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def all_finished(self) -> bool:
        """True when there is at least one run and every run is done (finished or pruned)."""
        return bool(self.runs) and all(r.status in ("finished", "pruned") for r in self.runs)

    @property
    def summary(self) -> str:
        """``"3 runs: 1 finished, 1 failed, 1 missing"`` (:func:`summarize` of the counts)."""
        return summarize(self.counts)


_UTC = _dt.timezone.utc
_from_text = _dt.datetime.fromisoformat


def aware(value: Any) -> _dt.datetime | None:
    """A stored timestamp read without type processing (ISO text on SQLite,
    a naive datetime on PostgreSQL: :func:`version_rows`) as an aware UTC
    datetime; ``None`` stays ``None``."""
    if value is None:
        return None
    if value.__class__ is str:  # 10,000 runs: two per run
        return _from_text(value).replace(tzinfo=_UTC)
    if isinstance(value, str):
        value = _from_text(value)
    return value.replace(tzinfo=_UTC)


def decide(run: DesignRun, row: VersionRow | None, *, now: _dt.datetime, timeout: float, hostname: str,
           times: Any = aware) -> RunStatus:
    """The status of ``run`` (see the module docstring) from its version's
    :func:`version_rows` row (``None``: no such version in the store). The
    times of the answer are ``times(value as read)``: :func:`aware` by
    default (the dashboard converts only the rows of a page).

    A run without a content hash is ``missing`` (no run file) or
    ``invalid``; a version without instances is ``missing`` with no reason
    (the caller says when another version ran)."""
    if run.content_hash is None:
        return RunStatus(run.uid, "missing" if run.error == "no run file" else "invalid", run.error,
                         run.design_point, run.repetition, run.seed, None, file=run.file)
    if row is None or not row.n:
        return RunStatus(run.uid, "missing", None, run.design_point, run.repetition, run.seed,
                         run.content_hash, file=run.file)
    newest, reason = True, None
    status = row.new_status
    if status == "running":
        stale = dead_reason(row.new_host, row.new_pid, aware(row.new_heartbeat), aware(row.new_start),  # type: ignore[arg-type]
                            now=now, timeout=timeout, hostname=hostname)
        if stale is not None:
            if row.fin_id is not None:
                status, newest = _done(row), False
            else:
                status, reason = "interrupted", f"marked running but {stale}"
    elif row.fin_id is not None:
        status, newest = _done(row), False
        if status == "pruned":
            reason = row.fin_error
    elif status == "failed":
        reason = row.new_error or "failed (no error recorded)"
    else:
        status, reason = "interrupted", row.new_error or status
    if newest:
        chosen, host, start, end, warned = row.new_id, row.new_host, row.new_start, row.new_end, row.new_warnings
    else:
        chosen, host, start, end, warned = row.fin_id, row.fin_host, row.fin_start, row.fin_end, row.fin_warnings
    return RunStatus(run.uid, status, reason, run.design_point, run.repetition, run.seed, run.content_hash,
                     int(chosen), int(row.n), host, times(start), times(end), run.file,  # type: ignore[arg-type]
                     tuple(json.loads(warned)) if warned is not None else ())


def _done(row: VersionRow) -> str:
    """``finished`` or ``pruned``: what the done instance of ``row`` is."""
    return "pruned" if row.fin_status == "pruned" else "finished"


def _other_versions(rows: list[Any]) -> str | None:
    """Why a run is missing when other versions of its document ran."""
    ran = [r for r in rows if r.n]
    if not ran:
        return None
    latest = max(ran, key=lambda r: r.new_id)
    return (f"the document changed: {sum(int(r.n) for r in ran)} instance(s) of another version, "
            f"latest {latest.new_status}")


def campaign_status(
    db: "Database",
    output_dir: str | Path | None = None,
    experiment: str | None = None,
    *,
    heartbeat_timeout: float = HEARTBEAT_TIMEOUT,
    now: _dt.datetime | None = None,
    hostname: str | None = None,
    include_branches: bool = False,
    run: str | None = None,
) -> CampaignStatus:
    """The status of every run of a campaign.

    Args:
        output_dir: an xgen output folder: its runs are the campaign
            (:func:`design_runs`); ``None``: the runs in the store.
        experiment: only this experiment's design (of ``output_dir``) or
            runs (in the store), and its instances.
        heartbeat_timeout: seconds after which a running instance without a
            heartbeat counts as interrupted.
        now, hostname: for tests (default: the current time and host).
        include_branches: keep the sessions of session trees (``xrun status
            --run CHILD``); by default only the design's runs count.
        run: only the run of this uid (``xrun status RUN``: one indexed
            query, whatever the size of the store; none when it has no such
            run, of ``experiment`` when given, unchecked).

    Returns:
        a :class:`CampaignStatus`, runs ordered by design point, repetition, uid.

    Raises:
        InputError: ``output_dir`` is unusable, or ``experiment`` is not in the
            store (when no ``output_dir`` is given).
        StoreError: the store cannot be read.
    """

    tree_sessions = session_child_uids(db) if output_dir is not None or not include_branches else set()
    children: set[str] = set() if include_branches else tree_sessions
    if output_dir is not None:
        # every version of the experiment's runs: the statuses, and the files whose bytes they recorded
        rows = version_rows(db, experiment)
        runs = design_runs(output_dir, experiment, db=db, tree_sessions=tree_sessions, versions=rows)
        if any(r.uid not in children for r in runs):  # else a folder of sessions (branches/): those
            runs = [r for r in runs if r.uid not in children]
        if run is not None:
            runs = [r for r in runs if r.uid == run]
    else:
        if run is None:
            from xdoe.store.views._export import check_experiment  # (a module the status does not need otherwise)

            check_experiment(db, experiment)
        rows = version_rows(db, experiment, run=run)
    versions: dict[str, dict[str | None, Any]] = {}
    for row in rows:  # by uid, then content hash (ordered by run id: the latest version last)
        versions.setdefault(row.uid, {})[row.content_hash] = row
    if output_dir is None:
        runs = [DesignRun(uid=r.uid, content_hash=r.content_hash, design_point=r.design_point,
                          repetition=r.repetition, seed=r.seed)
                for uid, mine in versions.items() if uid not in children
                for r in [next(reversed(mine.values()))]]
    moment = now or utcnow()
    host = hostname if hostname is not None else socket.gethostname()
    statuses = []
    for r in runs:
        mine = versions.get(r.uid, {})
        st = decide(r, mine.get(r.content_hash), now=moment, timeout=heartbeat_timeout, hostname=host)
        if st.status in ("missing", "invalid") and st.instance_id is None and mine:
            if r.content_hash is None:  # no (readable) file: every instance of the uid
                st = replace(st, instances=sum(int(v.n or 0) for v in mine.values()))
            else:
                st = replace(st, reason=_other_versions([v for h, v in mine.items() if h != r.content_hash]))
        statuses.append(st)
    statuses.sort(key=lambda s: (s.design_point is None, s.design_point or 0, s.repetition is None,
                                 s.repetition or 0, s.run))
    counts = {s: 0 for s in STATUSES}
    for s in statuses:
        counts[s.status] += 1
    for rare in ("invalid", "pruned"):  # shown when there are any (a campaign without a prune rule: as before)
        if not counts[rare]:
            del counts[rare]
    return CampaignStatus(statuses, counts)


def summarize(counts: dict[str, int]) -> str:
    """``"3 runs: 1 finished, 1 failed, 1 missing"`` (zero counts left out)."""
    total = sum(counts.values())
    parts = [f"{n} {name}" for name, n in counts.items() if n]
    return f"{total} run{'s' if total != 1 else ''}" + (": " + ", ".join(parts) if parts else "")
