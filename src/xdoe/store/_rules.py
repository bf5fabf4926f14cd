"""The one "finished" rule: a run version is finished (done) when it has an
instance with status ``finished`` or ``pruned`` (:data:`DONE_STATUSES`:
a run its ``run_config.prune`` rule ended early is done too, never run
again; :data:`FINISHED`, :func:`finished_stmt`);
every query that asks "is this run done?" (skipping, claiming,
``load:``/``replay:``, ``xrun jobs``) uses this clause. The liveness rule is
in :mod:`xdoe.store._liveness`. The statuses an instance ends with, and
which one leaving a recording block gives, are here too.
"""

from __future__ import annotations

import traceback
from types import TracebackType
from typing import Any

from sqlalchemy import Select, func, select

from xdoe.store.schema._tables import run, run_instance

__all__ = ["DONE_STATUSES", "FINISHED", "FINAL_STATUSES", "exit_status", "finished_stmt"]

#: The statuses of an instance that make its run version done.
DONE_STATUSES = ("finished", "pruned")
#: The one "finished" rule: the instance's status.
FINISHED = run_instance.c.status.in_(DONE_STATUSES)


def finished_stmt(run_uid: str | None = None, content_hash: str | None = None) -> Select[Any]:
    """``SELECT run uid, content hash, id of the newest finished instance``,
    one row per finished run version, optionally of one run uid / version."""
    r, i = run.c, run_instance.c
    stmt = select(r.uid, r.content_hash, func.max(i.id)).join(run_instance, i.run_id == r.id).where(FINISHED)
    if run_uid is not None:
        stmt = stmt.where(r.uid == run_uid)
    if content_hash is not None:
        stmt = stmt.where(r.content_hash == content_hash)
    return stmt.group_by(r.uid, r.content_hash)


#: Statuses :meth:`xdoe.store.RunRecorder.finish` accepts.
FINAL_STATUSES = ("finished", "failed", "interrupted", "pruned")


def exit_status(exc_type: type[BaseException] | None, exc: BaseException | None,
                tb: TracebackType | None) -> tuple[str, str | None, str | None]:
    """``(status, one-line error, traceback)`` for leaving a recording block:
    ``finished`` without an exception, ``interrupted`` for Ctrl-C, else ``failed``."""
    if exc is None:
        return "finished", None, None
    status = "interrupted" if isinstance(exc, KeyboardInterrupt) else "failed"
    return (status, f"{type(exc).__name__}: {exc}",
            "".join(traceback.format_exception(exc_type, exc, tb)))
