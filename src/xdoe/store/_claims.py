"""Work claiming: at most one process executes a run version at a time, across
processes and machines sharing a store.

A claim is a row of the ``claim`` table, unique on ``(run uid, content hash)``.
Claiming is an ``INSERT`` that succeeds for exactly one process; a claim whose
``heartbeat`` is older than ``stale_after`` seconds (its owner died or lost the
store) is taken over with one conditional ``UPDATE ... WHERE heartbeat <
cutoff``, which at most one process wins (the row count tells). The owner
refreshes the heartbeat while the run executes (:class:`ClaimHeartbeat`) and
deletes the claim when the run ends; a *finished* run then stays done because
its finished instance is in the store (:meth:`ClaimRows.run_finished`), not because of
the claim.

Works identically on SQLite (write transactions take the write lock up front)
and PostgreSQL (the unique constraint and row locks under READ COMMITTED).

Example::

    owner = new_owner()
    if store.claim_run("study-0003", content_hash, owner=owner, stale_after=120):
        with ClaimHeartbeat(store, "study-0003", content_hash, owner=owner, interval=30):
            ...  # execute the run
        store.release_claim("study-0003", content_hash, owner=owner)
"""

from __future__ import annotations

import datetime as _dt
import os
import socket
import threading
import uuid
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Callable

from sqlalchemy import delete, insert, select, update
from sqlalchemy.exc import IntegrityError

from xdoe._process import process_alive
from xdoe.store._base import StoreBase
from xdoe.store._tables import claim, phase, run, run_instance, utcnow

if TYPE_CHECKING:
    from xdoe.store._run_rows import RunRows

__all__ = ["ClaimInfo", "ClaimRows", "new_owner", "ClaimHeartbeat"]


@dataclass(frozen=True)
class ClaimInfo:
    """A claim as stored (times aware UTC)."""

    run_uid: str
    content_hash: str
    owner: str
    host: str
    pid: int
    heartbeat: _dt.datetime
    claimed_at: _dt.datetime


def new_owner() -> str:
    """A fresh, globally unique owner id (32 hex characters)."""
    return uuid.uuid4().hex


class ClaimRows(StoreBase):
    """Work claiming, a mixin of :class:`xdoe.store.Store` (see the module's description)."""

    def claim_run(self, run_uid: str, content_hash: str, *, owner: str,
                  stale_after: float) -> bool:
        """Claim a run version for ``owner``.

        Args:
            run_uid, content_hash: the run version (``content_hash`` as
                :func:`xdoe.store.document_hash` computes it).
            owner: the claimant's id (:func:`new_owner`); claiming again with the
                owner that holds the claim succeeds (and refreshes it).
            stale_after: seconds; an existing claim whose heartbeat is older is
                taken over.

        Returns:
            ``True`` when ``owner`` now holds the claim, ``False`` when another
            owner holds a live one. A claim whose holder ran on this host and whose
            process is gone is taken over at once, without waiting for
            ``stale_after``.

        Raises:
            StoreError: the store cannot be written.
        """
        now = utcnow()
        values = {"run_uid": run_uid, "content_hash": content_hash, "owner": owner,
                  "host": socket.gethostname(), "pid": os.getpid(), "heartbeat": now, "claimed_at": now}
        c = claim.c
        with self._core_write("claim a run in") as conn:
            try:
                with conn.begin_nested():
                    conn.execute(insert(claim).values(**values))
                return True
            except IntegrityError:
                pass  # somebody holds it: take over only a stale claim (or our own)
            cutoff = now - _dt.timedelta(seconds=float(stale_after))
            takeover = (c.heartbeat < cutoff) | (c.owner == owner)
            holder = conn.execute(
                select(c.owner, c.host, c.pid, c.claimed_at)
                .where(c.run_uid == run_uid, c.content_hash == content_hash)
            ).first()
            if holder is not None and process_alive(holder.host, holder.pid, holder.claimed_at) is False:
                # its process is gone from this host: no need to wait for the heartbeat to age
                takeover = takeover | (c.owner == holder.owner)
            taken = conn.execute(
                update(claim)
                .where(c.run_uid == run_uid, c.content_hash == content_hash)
                .where(takeover)
                .values(owner=owner, host=values["host"], pid=values["pid"], heartbeat=now, claimed_at=now)
            ).rowcount
            return taken == 1

    def heartbeat_claim(self, run_uid: str, content_hash: str, *, owner: str) -> bool:
        """Refresh the heartbeat of ``owner``'s claim; ``False`` when ``owner`` no
        longer holds it (it was released or taken over as stale)."""
        c = claim.c
        with self._core_write("refresh a claim in") as conn:
            return conn.execute(
                update(claim)
                .where(c.run_uid == run_uid, c.content_hash == content_hash, c.owner == owner)
                .values(heartbeat=utcnow())
            ).rowcount == 1

    def release_claim(self, run_uid: str, content_hash: str, *, owner: str | None) -> bool:
        """Delete the claim if ``owner`` holds it (``owner=None``: whoever holds
        it); ``True`` when a claim was deleted."""
        c = claim.c
        stmt = delete(claim).where(c.run_uid == run_uid, c.content_hash == content_hash)
        if owner is not None:
            stmt = stmt.where(c.owner == owner)
        with self._core_write("release a claim in") as conn:
            return conn.execute(stmt).rowcount == 1

    def claim_of(self, run_uid: str, content_hash: str) -> ClaimInfo | None:
        """The current claim of a run version, or ``None``."""
        c = claim.c
        with self._core_read("read claims from") as conn:
            row = conn.execute(
                select(c.run_uid, c.content_hash, c.owner, c.host, c.pid, c.heartbeat, c.claimed_at)
                .where(c.run_uid == run_uid, c.content_hash == content_hash)
            ).one_or_none()
            return None if row is None else ClaimInfo(*row)

    def run_finished(self: "RunRows", run_uid: str, content_hash: str) -> bool:
        """Whether the run version has a finished instance."""
        return self.finished_instance(run_uid, content_hash) is not None

    def fail_running_instances(self, run_uid: str, content_hash: str, *, host: str,
                               pids: set[int] | None, error: str, status: str = "failed") -> int:
        """Mark the ``running`` instances of a run version that were started on
        ``host`` by one of ``pids`` (``None``: any pid) as ``status`` (``failed``
        or ``interrupted``) with ``error``; for runs whose process died without
        recording its end.
        Returns the number of instances marked."""
        now = utcnow()
        i, p = run_instance.c, phase.c
        run_ids = select(run.c.id).where(run.c.uid == run_uid, run.c.content_hash == content_hash)
        query = select(i.id).where(i.run_id.in_(run_ids), i.status == "running", i.host == host)
        if pids is not None:
            query = query.where(i.pid.in_(sorted(pids)))
        with self._core_write("mark a dead run in") as conn:
            ids = list(conn.execute(query).scalars())
            if not ids:
                return 0
            conn.execute(update(run_instance).where(i.id.in_(ids)).values(status=status, end=now, error=error))
            conn.execute(update(phase).where(p.instance_id.in_(ids), p.status == "running")
                         .values(status=status, end=now))
            return len(ids)


class ClaimHeartbeat:
    """A daemon thread that refreshes a claim's heartbeat every ``interval``
    seconds while the block runs.

    ``lost`` becomes ``True`` if the claim was taken over meanwhile (the
    heartbeat was late by more than the others' ``stale_after``); store errors
    while refreshing are kept in ``error`` and retried at the next beat.
    ``alive``: asked before every beat; no beat while it answers ``False``
    (a run that passed its time limit and could not be stopped: the claim
    goes stale and another process takes the run over).
    """

    def __init__(self, store: ClaimRows, run_uid: str, content_hash: str, *, owner: str,
                 interval: float, alive: "Callable[[], bool] | None" = None) -> None:
        self.store, self.run_uid, self.content_hash, self.owner = store, run_uid, content_hash, owner
        self.alive = alive
        self.interval = max(float(interval), 0.01)
        self.lost = False
        self.beats = 0
        self.error: BaseException | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"claim-heartbeat-{run_uid}", daemon=True)

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            if self.alive is not None and not self.alive():
                continue
            try:
                if not self.store.heartbeat_claim(self.run_uid, self.content_hash, owner=self.owner):
                    self.lost = True
                    return
                self.beats += 1
            except Exception as exc:  # noqa: BLE001 - keep beating; the run reports store errors itself
                self.error = exc

    def __enter__(self) -> "ClaimHeartbeat":
        self._thread.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stop.set()
        self._thread.join()
