"""The run versions of the store with what their status is decided from, in
one grouped query (:func:`version_rows`; the rule is
:func:`xdoe.store.views._status.decide`), for ``xrun status``, the dashboard's
campaign and run pages, and the run files whose bytes the store recorded
(:mod:`xdoe.store.views._design_runs`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from sqlalchemy import String, case, func, null, select, type_coerce

from xdoe.store._rules import DONE_STATUSES
from xdoe.store.schema._tables import experiment as experiment_t, run as run_t, run_instance as instance_t

if TYPE_CHECKING:
    from xdoe.store.schema._database import Database

__all__ = ["VersionRow", "version_rows"]


class VersionRow(NamedTuple):
    """A run version and what its status is decided from (:func:`version_rows`):
    its number of instances ``n``, its newest instance (``new_*``) and its
    newest finished (or pruned: done) one (``fin_*``); times and warnings (a JSON list of
    lines, ``None`` for none) as read (:func:`xdoe.store.views._status.aware` converts the times);
    ``file_sha256``: the sha256 of the run file's bytes, when recorded."""

    id: int
    uid: str
    experiment: str | None
    design_point: int | None
    repetition: int | None
    seed: int | None
    content_hash: str
    levels: str | None
    file_sha256: str | None
    n: int | None
    new_id: int | None
    new_status: str | None
    new_error: str | None
    new_host: str | None
    new_pid: int | None
    new_heartbeat: Any
    new_start: Any
    new_end: Any
    fin_id: int | None
    fin_host: str | None
    fin_start: Any
    fin_end: Any
    new_warnings: str | None
    fin_warnings: str | None
    #: ``finished`` or ``pruned`` (:data:`xdoe.store._rules.DONE_STATUSES`), and its error (why it was pruned)
    fin_status: str | None = None
    fin_error: str | None = None


def version_rows(db: "Database", experiment: str | None = None, *, run: str | None = None,
                 latest_only: bool = False) -> list[VersionRow]:
    """Every run version (of one experiment, of one run uid; ``latest_only``:
    the latest version of each uid) with what its status is decided from, in
    one query: its number of instances, its newest instance and its newest
    finished one (grouped in SQL), as :class:`VersionRow` tuples (a
    SQLAlchemy row's attribute access costs ten times more), ordered by run
    id. ``levels`` and the warnings are the JSON text as stored (no
    warnings in a store older than schema 3, read as it is); the times are
    read without type processing (cheap for 10,000 runs; :func:`~xdoe.store.views._status.aware`
    converts them).

    Raises:
        StoreError: the store cannot be read.
    """
    r, e, i = run_t.c, experiment_t.c, instance_t.c
    chosen = select(r.id)
    if experiment is not None:
        chosen = chosen.join(experiment_t, r.experiment_id == e.id).where(e.uid == experiment)
    if run is not None:
        chosen = chosen.where(r.uid == run)
    if latest_only:
        chosen = chosen.with_only_columns(func.max(r.id)).group_by(r.uid)
    agg = (select(i.run_id, func.max(i.id).label("newest"),
                  func.max(case((i.status.in_(DONE_STATUSES), i.id))).label("fin"), func.count().label("n"))
           .where(i.run_id.in_(chosen)).group_by(i.run_id).subquery())
    new, fin = instance_t.alias("newest"), instance_t.alias("fin")

    def raw(column: Any) -> Any:
        return type_coerce(column, String)

    warned = db.schema_version >= 3  # run_instance.warnings: schema 3
    columns = (r.id, r.uid, e.uid, r.design_point, r.repetition, r.seed, r.content_hash, raw(r.levels),
               r.file_sha256, agg.c.n, new.c.id, new.c.status, new.c.error, new.c.host, new.c.pid,
               raw(new.c.heartbeat), raw(new.c.start), raw(new.c.end), fin.c.id, fin.c.host, raw(fin.c.start),
               raw(fin.c.end), raw(new.c.warnings) if warned else null(), raw(fin.c.warnings) if warned else null(), fin.c.status, fin.c.error)
    stmt = (select(*columns)
            .select_from(run_t).outerjoin(experiment_t, r.experiment_id == e.id)
            .outerjoin(agg, agg.c.run_id == r.id)
            .outerjoin(new, new.c.id == agg.c.newest)
            .outerjoin(fin, fin.c.id == agg.c.fin)
            .where(r.id.in_(chosen)).order_by(r.id))
    with db.read("read run instances from") as conn:
        return [VersionRow._make(row) for row in conn.execute(stmt).all()]
