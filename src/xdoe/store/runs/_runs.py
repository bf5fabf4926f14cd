"""The runs part of a store (``store.runs``): experiments, run versions,
run instances and their phases, the one "finished" rule, episode and step
rows, work claims, stop requests.

**Claims.** At most one process executes a run version at a time, across
processes and machines sharing a store. A claim is a row of the ``claim``
table, unique on ``(run uid, content hash)``. Claiming is an ``INSERT`` that
succeeds for exactly one process; a claim whose ``heartbeat`` is older than
``stale_after`` seconds (its owner died or lost the store) is taken over with
one conditional ``UPDATE ... WHERE heartbeat < cutoff``, which at most one
process wins (the row count tells). The owner refreshes the heartbeat while
the run executes (:class:`ClaimHeartbeat`) and deletes the claim when the run
ends; a *finished* run then stays done because its finished instance is in
the store (:meth:`Runs.run_finished`), not because of the claim. Works
identically on SQLite (write transactions take the write lock up front) and
PostgreSQL (the unique constraint and row locks under READ COMMITTED)::

    owner = new_owner()
    if store.runs.claim_run("study-0003", content_hash, owner=owner, stale_after=120):
        with ClaimHeartbeat(store.runs, "study-0003", content_hash, owner=owner, interval=30):
            ...  # execute the run
        store.runs.release_claim("study-0003", content_hash, owner=owner)

**Stop requests.** The dashboard (or any client) calls
:meth:`Runs.request_stop`; the executor polls :meth:`Runs.stop_requested` at
episode ends (one primary-key read), records the instance ``interrupted`` —
resumable like a Ctrl-C — and calls :meth:`Runs.clear_stop_request`. Going
through the store works for every backend (process pool, Dask, SLURM nodes),
where a signal would reach only processes on this host.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import socket
import threading
import uuid
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Callable

from sqlalchemy import Connection, Select, and_, delete, func, insert, or_, select, update
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from xdoe._process import process_alive
from xdoe.store._rules import DONE_STATUSES, FINISHED, finished_stmt
from xdoe.store.runs._records import InstanceInfo, PhaseRow, PhaseSums, RunInfo, RunState
from xdoe.store.schema import _tables as t
from xdoe.store.schema._database import Database
from xdoe.store.schema._engine import store_error
from xdoe.store.schema._tables import claim, phase, run, run_instance, stop_request, utcnow

__all__ = ["ClaimHeartbeat", "ClaimInfo", "IN_CHUNK", "Runs", "new_owner"]

#: Values per ``IN (...)`` list in one query (below SQLite's and PostgreSQL's parameter limits).
IN_CHUNK = 500


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


class Runs:
    """The run queries of a store, ``store.runs`` (what the campaign and the
    executor need). Every method runs in one transaction of the store's
    :class:`~xdoe.store.schema._database.Database`; errors become
    :class:`~xdoe.errors.StoreError` naming the store's URL.

    Args:
        db: the store's database (shared with the other parts).
    """

    def __init__(self, db: Database) -> None:
        self._db = db


    def experiments(self) -> list[str]:
        """The uids of the experiments the store holds runs of, sorted.

        Raises:
            StoreError: the store cannot be read.
        """
        e = t.experiment.c
        stmt = select(e.uid).where(e.id.in_(select(t.run.c.experiment_id))).order_by(e.uid)
        with self._db.read("read experiments from") as conn:
            return [str(uid) for uid in conn.execute(stmt).scalars()]

    def versions(self, experiment: str | None = None) -> list[RunInfo]:
        """Every run version, optionally of one experiment uid, in insertion order."""
        r, e = t.run.c, t.experiment.c
        stmt = (select(r.id, r.uid, e.uid, r.content_hash, r.design_point, r.repetition, r.seed, r.levels,
                       r.created, r.document)
                .select_from(t.run).outerjoin(t.experiment, r.experiment_id == e.id))
        if experiment is not None:
            stmt = stmt.where(e.uid == experiment)
        with self._db.read("read runs from") as conn:
            return [RunInfo(*row[:-1], json.loads(row[-1])) for row in conn.execute(stmt.order_by(r.id))]

    def _instances_stmt(self) -> Select[Any]:
        i = t.run_instance.c
        return (select(i.id, i.uuid, t.run.c.uid, t.run.c.content_hash, i.host, i.pid, i.start, i.end, i.status,
                       i.error, i.traceback, i.heartbeat, i.results_dir)
                .join(t.run, i.run_id == t.run.c.id))

    @staticmethod
    def _instance(row: Any) -> InstanceInfo:
        return InstanceInfo(*row)

    def instances(
        self, status: str | Iterable[str] | None = None, *, run_uid: str | None = None
    ) -> list[InstanceInfo]:
        """Run instances, oldest first, filtered by status (one or several) and run uid."""
        stmt = self._instances_stmt()
        if status is not None:
            statuses = [status] if isinstance(status, str) else list(status)
            stmt = stmt.where(t.run_instance.c.status.in_(statuses))
        if run_uid is not None:
            stmt = stmt.where(t.run.c.uid == run_uid)
        with self._db.read("read run instances from") as conn:
            return [self._instance(r) for r in conn.execute(stmt.order_by(t.run_instance.c.id))]

    def instance(self, instance_id: int) -> InstanceInfo | None:
        """The run instance with this id, or ``None``."""
        stmt = self._instances_stmt().where(t.run_instance.c.id == instance_id)
        with self._db.read("read a run instance from") as conn:
            row = conn.execute(stmt).first()
            return None if row is None else self._instance(row)

    def latest_instance(self, run_uid: str, content_hash: str | None = None) -> InstanceInfo | None:
        """The most recently started instance of a run (of one version when
        ``content_hash`` is given), or ``None``."""
        stmt = self._instances_stmt().where(t.run.c.uid == run_uid)
        if content_hash is not None:
            stmt = stmt.where(t.run.c.content_hash == content_hash)
        stmt = stmt.order_by(t.run_instance.c.start.desc(), t.run_instance.c.id.desc()).limit(1)
        with self._db.read("read run instances from") as conn:
            row = conn.execute(stmt).first()
            return None if row is None else self._instance(row)

    def run_states(self, versions: Iterable[tuple[str, str]]) -> dict[tuple[str, str], RunState]:
        """The :class:`~xdoe.store.RunState` of each run version ``(run uid,
        content hash)`` (a version the store has no instance of:
        ``RunState()``), read in one transaction with one query per
        :data:`IN_CHUNK` versions: what deciding run, skip or resume needs for
        a whole campaign.

        Raises:
            StoreError: the store cannot be read.
        """
        with self._db.read("read run instances from") as conn:
            return self._states(conn, versions)

    def _states(self, conn: Connection, versions: Iterable[tuple[str, str]]) -> dict[tuple[str, str], RunState]:
        """:meth:`run_states` read through ``conn`` (in its transaction)."""
        wanted = list(dict.fromkeys(versions))
        rows: dict[tuple[str, str], list[InstanceInfo]] = {v: [] for v in wanted}
        r, i = t.run.c, t.run_instance.c
        for start in range(0, len(wanted), IN_CHUNK):
            hashes = sorted({h for _, h in wanted[start:start + IN_CHUNK]})
            stmt = self._instances_stmt().where(r.content_hash.in_(hashes)).order_by(i.start, i.id)
            for row in conn.execute(stmt):
                found = rows.get((row.uid, row.content_hash))
                if found is not None:
                    found.append(InstanceInfo(*row))
        states = {}
        for version, instances in rows.items():
            done = [x.id for x in instances if x.status in DONE_STATUSES]
            states[version] = RunState(max(done) if done else None, instances[-1] if instances else None,
                                       tuple(x for x in instances if x.status == "running"))
        return states

    def run_state(self, run_uid: str, content_hash: str) -> RunState:
        """:meth:`run_states` of one run version (one query)."""
        return self.run_states([(run_uid, content_hash)])[(run_uid, content_hash)]

    def finished_instances(self, run_uid: str | None = None,
                           content_hash: str | None = None) -> dict[tuple[str, str], int]:
        """``(run uid, content hash) -> id of its newest finished instance``
        for every finished run version (optionally of one run uid / version),
        in one query; the one "finished" rule (:mod:`xdoe.store._rules`)."""
        with self._db.read("read runs from") as conn:
            return {(uid, h): int(i) for uid, h, i in conn.execute(finished_stmt(run_uid, content_hash))}

    def finished_instance(self, run_uid: str, content_hash: str | None = None) -> int | None:
        """Id of the newest finished instance of a run (of one version when
        ``content_hash`` is given), or ``None``."""
        found = self.finished_instances(run_uid, content_hash).values()
        return max(found) if found else None

    def finished_run_hashes(self) -> set[tuple[str, str]]:
        """``(run uid, content hash)`` of every run version with a finished instance."""
        return set(self.finished_instances())

    def finished_file_hashes(self, hashes: Iterable[str]) -> dict[str, tuple[str, int]]:
        """Which of these file hashes belong to a run version with a finished instance.

        Args:
            hashes: sha256 (hex) of run-document files' bytes, as given to
                :meth:`recorder` (``file_sha256``).

        Returns:
            ``file hash -> (run uid, id of its newest finished instance)``
            for the hashes found; one query per :data:`IN_CHUNK` hashes.
        """
        wanted = list(dict.fromkeys(hashes))
        found: dict[str, tuple[str, int]] = {}
        r, i = t.run.c, t.run_instance.c
        with self._db.read("read runs from") as conn:
            for start in range(0, len(wanted), IN_CHUNK):
                stmt = (
                    select(r.file_sha256, r.uid, func.max(i.id))
                    .join(t.run_instance, i.run_id == r.id)
                    .where(r.file_sha256.in_(wanted[start:start + IN_CHUNK]), FINISHED)
                    .group_by(r.file_sha256, r.uid)
                )
                for file_hash, uid, instance in conn.execute(stmt):
                    if file_hash not in found or int(instance) > found[file_hash][1]:
                        found[file_hash] = (uid, int(instance))
        return found

    def episodes(
        self,
        run_uid: str | None = None,
        *,
        experiment: str | None = None,
        instance_id: int | None = None,
        phase: str | None = None,
        batch_size: int = 1000,
    ) -> Iterator[dict[str, Any]]:
        """Stream episode rows as plain dicts, ``batch_size`` rows fetched at a time.

        Keys: ``experiment``, ``run``, ``content_hash``, ``instance``,
        ``phase_index``, ``phase``, ``mode``, ``worker``, ``episode``,
        ``agent``, ``steps``, ``reward``, ``objective``, ``wall_time``,
        ``extras`` (dict or ``None``). Ordered by instance, phase, insertion.
        The connection stays open until the iterator is exhausted or closed.
        """
        x, r, i, p, e = t.experiment.c, t.run.c, t.run_instance.c, t.phase.c, t.episode.c
        stmt = (
            select(
                x.uid.label("experiment"), r.uid.label("run"), r.content_hash,
                i.id.label("instance"), p.index.label("phase_index"),
                p.name.label("phase"), p.mode, e.worker, e.episode,
                e.agent, e.steps, e.reward, e.objective,
                e.wall_time, e.extras,
            )
            .select_from(t.episode)
            .join(t.phase, e.phase_id == p.id)
            .join(t.run_instance, p.instance_id == i.id)
            .join(t.run, i.run_id == r.id)
            .outerjoin(t.experiment, r.experiment_id == x.id)
        )
        if run_uid is not None:
            stmt = stmt.where(r.uid == run_uid)
        if experiment is not None:
            stmt = stmt.where(x.uid == experiment)
        if instance_id is not None:
            stmt = stmt.where(i.id == instance_id)
        if phase is not None:
            stmt = stmt.where(p.name == phase)
        stmt = stmt.order_by(i.id, p.index, e.id)
        try:
            with self._db.engine.connect() as conn:
                result = conn.execution_options(yield_per=batch_size).execute(stmt)
                for row in result:
                    yield dict(row._mapping)
        except SQLAlchemyError as exc:
            raise store_error(self._db.full_url, "read episodes from", exc) from None

    def mark_interrupted(self, instance_id: int, error: str | None = None) -> bool:
        """Mark a *running* instance (and its running phases) as interrupted,
        e.g. one whose heartbeat went stale. Returns ``True`` if it was running."""
        now = utcnow()
        i, p = t.run_instance.c, t.phase.c
        with self._db.write("update") as conn:
            changed = conn.execute(
                update(t.run_instance).where(i.id == instance_id, i.status == "running")
                .values(status="interrupted", end=now, error=error)
            ).rowcount
            if changed:
                conn.execute(update(t.phase).where(p.instance_id == instance_id, p.status == "running")
                             .values(status="interrupted", end=now))
        return bool(changed)

    # -- the phases and rows of an instance (resume, lineage, replay) ----------

    def phases(self, instance_id: int) -> list[PhaseRow]:
        """The phase rows of an instance, by schedule index."""
        p = t.phase.c
        with self._db.read("read phases from") as conn:
            return [PhaseRow(int(r.id), int(r.index), r.name, r.status) for r in conn.execute(
                select(p.id, p.index, p.name, p.status).where(p.instance_id == instance_id).order_by(p.index))]

    def drop_redone(self, phase_ids: Sequence[int], continued: int | None = None,
                    next_episodes: Sequence[int] = ()) -> None:
        """Delete what a resumed instance runs again, in one transaction: the
        phases ``phase_ids`` (with their episodes, steps, checkpoints and brain
        sources) and, of phase row ``continued``, the episode and step rows of
        worker ``w`` from episode ``next_episodes[w]`` on (and of any worker
        beyond them)."""
        def drop(conn: Connection) -> None:
            if phase_ids:
                conn.execute(delete(t.phase).where(t.phase.c.id.in_(list(phase_ids))))
            if continued is not None:
                for table in (t.episode, t.step):
                    c = table.c
                    conn.execute(delete(table).where(
                        c.phase_id == continued,
                        or_(*[and_(c.worker == w, c.episode >= nxt) for w, nxt in enumerate(next_episodes)],
                            c.worker >= len(next_episodes))))

        self._db.write_again("drop what a resumed run redoes in", drop)  # deletes: safe to run again

    def phase_sums(self, instance_id: int) -> PhaseSums:
        """Per phase index: the episodes and steps recorded (the most of any
        agent) and each agent's summed reward and objective."""
        sums: PhaseSums = {}
        p, e = t.phase.c, t.episode.c
        with self._db.read("read episodes from") as conn:
            for index, agent, n, steps, reward, objective in conn.execute(
                select(p.index, e.agent, func.count(), func.sum(e.steps), func.sum(e.reward), func.sum(e.objective))
                .join(t.phase, e.phase_id == p.id)
                .where(p.instance_id == instance_id).group_by(p.index, e.agent)
            ):
                n_old, s_old, rs, os_ = sums.get(int(index), (0, 0, {}, {}))
                rs[agent] = float(reward or 0.0)
                os_[agent] = float(objective or 0.0)
                sums[int(index)] = (max(n_old, int(n)), max(s_old, int(steps or 0)), rs, os_)
        return sums

    # -- lineage -------------------------------------------------------------------
    def run_overview(self, run_uid: str) -> tuple[list[str], list[str]]:
        """The statuses of a run's instances and every run uid in the store
        (for "no such run" messages)."""
        i, r = t.run_instance.c, t.run.c
        with self._db.read("read runs from") as conn:
            statuses = conn.execute(
                select(i.status).join(t.run, i.run_id == r.id).where(r.uid == run_uid)
            ).scalars().all()
            uids = conn.execute(select(r.uid).distinct()).scalars().all()
        return list(statuses), list(uids)

    def step_agents(self, phase_ids: Sequence[int]) -> dict[str, int]:
        """Agent -> number of stored steps in these phases."""
        s = t.step.c
        with self._db.read("read steps from") as conn:
            return {a: int(n) for a, n in conn.execute(
                select(s.agent, func.count()).where(s.phase_id.in_(list(phase_ids))).group_by(s.agent))}

    def steps(self, phase_ids: Sequence[int], agent: str, batch_size: int = 2000) -> Iterator[Any]:
        """Stream the stored steps of ``agent`` in these phases, in (phase,
        worker, episode, step) order; rows with ``phase_id``, ``worker``,
        ``episode``, ``step``, ``sensors``, ``actions``, ``rewards``,
        ``objective``, ``done`` (JSON columns as stored)."""
        s = t.step.c
        stmt = (select(s.phase_id, s.worker, s.episode, s.step, s.sensors, s.actions, s.rewards, s.objective, s.done)
                .where(s.phase_id.in_(list(phase_ids)), s.agent == agent)
                .order_by(s.phase_id, s.worker, s.episode, s.step))
        with self._db.engine.connect() as conn:
            yield from conn.execution_options(yield_per=batch_size).execute(stmt)

    def phase_id(self, instance_id: int, phase_index: int) -> int | None:
        """The row id of phase ``phase_index`` of an instance, ``None`` when not recorded."""
        p = t.phase.c
        with self._db.read("read phases from") as conn:
            found = conn.execute(
                select(p.id).where(p.instance_id == instance_id, p.index == int(phase_index))
            ).scalar_one_or_none()
        return None if found is None else int(found)

    def experiment_design(self, experiment: str) -> dict[str, Any] | None:
        """The design ``experiment``'s runs come from, as the manifest of its
        latest recorded run recorded it (method, every factor's coding,
        blocks...; :func:`xdoe._files.manifest_design`); ``None`` when no run
        was started with a manifest, or the store predates schema version 4."""
        from sqlalchemy import inspect as sa_inspect

        with self._db.read("read the design of an experiment from") as conn:
            if "design" not in {c["name"] for c in sa_inspect(conn).get_columns("experiment")}:
                return None
            value = conn.execute(select(t.experiment.c.design).where(t.experiment.c.uid == experiment)
                                 ).scalar_one_or_none()
        return value if isinstance(value, dict) else None

    # -- claims -----------------------------------------------------------------

    def claim_run(self, run_uid: str, content_hash: str, *, owner: str,
                  stale_after: float) -> bool:
        """Claim a run version for ``owner``.

        Args:
            run_uid: the run version's uid.
            content_hash: its content hash (as :func:`xdoe.store.document_hash` computes it).
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
        with self._db.write("claim a run in") as conn:
            return self._claim(conn, run_uid, content_hash, owner, stale_after)

    def claim_run_state(self, run_uid: str, content_hash: str, *, owner: str,
                        stale_after: float) -> RunState | None:
        """:meth:`claim_run` and, when ``owner`` now holds the claim, the
        run version's :meth:`run_state`, read in the same transaction (one
        transaction where a run's start took two: the state is read under
        the claim, as deciding run, skip or resume needs; the claim is
        committed, visible to every other process, when this returns).

        Returns:
            the :class:`~xdoe.store.RunState`, or ``None`` when another owner
            holds a live claim.

        Raises:
            StoreError: the store cannot be written.
        """
        with self._db.write("claim a run in") as conn:
            if not self._claim(conn, run_uid, content_hash, owner, stale_after):
                return None
            return self._states(conn, [(run_uid, content_hash)])[(run_uid, content_hash)]

    def _claim(self, conn: Connection, run_uid: str, content_hash: str, owner: str, stale_after: float) -> bool:
        """:meth:`claim_run` in the write transaction of ``conn``."""
        now = utcnow()
        values = {"run_uid": run_uid, "content_hash": content_hash, "owner": owner,
                  "host": socket.gethostname(), "pid": os.getpid(), "heartbeat": now, "claimed_at": now}
        c = claim.c
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
        with self._db.write("refresh a claim in") as conn:
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
        with self._db.write("release a claim in") as conn:
            return conn.execute(stmt).rowcount == 1

    def claim_of(self, run_uid: str, content_hash: str) -> ClaimInfo | None:
        """The current claim of a run version, or ``None``."""
        c = claim.c
        with self._db.read("read claims from") as conn:
            row = conn.execute(
                select(c.run_uid, c.content_hash, c.owner, c.host, c.pid, c.heartbeat, c.claimed_at)
                .where(c.run_uid == run_uid, c.content_hash == content_hash)
            ).one_or_none()
            return None if row is None else ClaimInfo(*row)

    def run_finished(self, run_uid: str, content_hash: str) -> bool:
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
        with self._db.write("mark a dead run in") as conn:
            ids = list(conn.execute(query).scalars())
            if not ids:
                return 0
            conn.execute(update(run_instance).where(i.id.in_(ids)).values(status=status, end=now, error=error))
            conn.execute(update(phase).where(p.instance_id.in_(ids), p.status == "running")
                         .values(status=status, end=now))
            return len(ids)

    # -- stop requests ----------------------------------------------------------

    def request_stop(self, instance_id: int, reason: str | None = None) -> bool:
        """Ask the running instance ``instance_id`` to stop at its next episode end.

        Returns:
            ``True`` when the instance is running (the request is recorded, or
            was already); ``False`` when it is not running (nothing recorded).

        Raises:
            StoreError: the store cannot be written.
        """
        with self._db.write("record a stop request in") as conn:
            status = conn.execute(
                select(run_instance.c.status).where(run_instance.c.id == instance_id)
            ).scalar_one_or_none()
            if status != "running":
                return False
            pending = select(stop_request.c.instance_id).where(stop_request.c.instance_id == instance_id)
            if conn.execute(pending).first() is None:
                conn.execute(insert(stop_request).values(instance_id=instance_id, requested=utcnow(), reason=reason))
            return True

    def stop_requested(self, instance_id: int) -> str | None:
        """The reason of the pending stop request of ``instance_id`` (``"stop
        requested"`` when none was given), or ``None`` when there is none."""
        with self._db.read("read stop requests from") as conn:
            row = conn.execute(
                select(stop_request.c.instance_id, stop_request.c.reason)
                .where(stop_request.c.instance_id == instance_id)
            ).first()
        if row is None:
            return None
        return row.reason or "stop requested"

    def clear_stop_request(self, instance_id: int) -> None:
        """Remove the stop request of ``instance_id`` (done when it was honoured,
        and when the instance resumes)."""
        with self._db.write("clear a stop request in") as conn:
            conn.execute(delete(stop_request).where(stop_request.c.instance_id == instance_id))


class ClaimHeartbeat:
    """A daemon thread that refreshes a claim's heartbeat every ``interval``
    seconds while the block runs (``runs``: the store's :class:`Runs` part).

    ``lost`` becomes ``True`` if the claim was taken over meanwhile (the
    heartbeat was late by more than the others' ``stale_after``); store errors
    while refreshing are kept in ``error`` and retried at the next beat.
    ``alive``: asked before every beat; no beat while it answers ``False``
    (a run that passed its time limit and could not be stopped: the claim
    goes stale and another process takes the run over).
    """

    def __init__(self, runs: Runs, run_uid: str, content_hash: str, *, owner: str,
                 interval: float, alive: "Callable[[], bool] | None" = None) -> None:
        self.runs, self.run_uid, self.content_hash, self.owner = runs, run_uid, content_hash, owner
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
                if not self.runs.heartbeat_claim(self.run_uid, self.content_hash, owner=self.owner):
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
