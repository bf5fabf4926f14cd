"""The one "finished" rule: a run version is finished when it has an
instance with status ``finished`` (:data:`FINISHED`, :func:`finished_stmt`);
every query that asks "is this run done?" (skipping, claiming,
``load:``/``replay:``, ``xrun jobs``) uses this clause. The liveness rule is
in :mod:`xdoe.store._liveness`.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Select, func, select

from xdoe.store._models import Run, RunInstance

__all__ = ["FINISHED", "finished_stmt"]

#: The one "finished" rule: the instance's status.
FINISHED = RunInstance.status == "finished"


def finished_stmt(run_uid: str | None = None, content_hash: str | None = None) -> Select[Any]:
    """``SELECT run uid, content hash, id of the newest finished instance``,
    one row per finished run version, optionally of one run uid / version."""
    stmt = (select(Run.uid, Run.content_hash, func.max(RunInstance.id))
            .join(RunInstance, RunInstance.run_id == Run.id).where(FINISHED))
    if run_uid is not None:
        stmt = stmt.where(Run.uid == run_uid)
    if content_hash is not None:
        stmt = stmt.where(Run.content_hash == content_hash)
    return stmt.group_by(Run.uid, Run.content_hash)
