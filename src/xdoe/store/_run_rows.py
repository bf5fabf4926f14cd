"""The run queries of :class:`xdoe.store.Store`: experiments, run versions,
run instances, the one "finished" rule, episode rows, and marking an
instance interrupted."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from sqlalchemy import Select, func, select, update
from sqlalchemy.exc import SQLAlchemyError

from xdoe.store import _tables as t
from xdoe.store._base import StoreBase
from xdoe.store._engine import store_error
from xdoe.store._instance_rows import InstanceInfo, RunInfo, RunState
from xdoe.store._rules import DONE_STATUSES, FINISHED, finished_stmt
from xdoe.store._tables import utcnow

__all__ = ["IN_CHUNK", "RunRows"]

#: Values per ``IN (...)`` list in one query (below SQLite's and PostgreSQL's parameter limits).
IN_CHUNK = 500


class RunRows(StoreBase):
    """The run and instance queries of :class:`xdoe.store.Store`."""

    def experiments(self) -> list[str]:
        """The uids of the experiments the store holds runs of, sorted.

        Raises:
            StoreError: the store cannot be read.
        """
        e = t.experiment.c
        stmt = select(e.uid).where(e.id.in_(select(t.run.c.experiment_id))).order_by(e.uid)
        with self._core_read("read experiments from") as conn:
            return [str(uid) for uid in conn.execute(stmt).scalars()]

    def runs(self, experiment: str | None = None) -> list[RunInfo]:
        """Every run version, optionally of one experiment uid, in insertion order."""
        r, e = t.run.c, t.experiment.c
        stmt = (select(r.id, r.uid, e.uid, r.content_hash, r.design_point, r.repetition, r.seed, r.levels,
                       r.created, r.document)
                .select_from(t.run).outerjoin(t.experiment, r.experiment_id == e.id))
        if experiment is not None:
            stmt = stmt.where(e.uid == experiment)
        with self._core_read("read runs from") as conn:
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
        with self._core_read("read run instances from") as conn:
            return [self._instance(r) for r in conn.execute(stmt.order_by(t.run_instance.c.id))]

    def instance(self, instance_id: int) -> InstanceInfo | None:
        """The run instance with this id, or ``None``."""
        stmt = self._instances_stmt().where(t.run_instance.c.id == instance_id)
        with self._core_read("read a run instance from") as conn:
            row = conn.execute(stmt).first()
            return None if row is None else self._instance(row)

    def latest_instance(self, run_uid: str, content_hash: str | None = None) -> InstanceInfo | None:
        """The most recently started instance of a run (of one version when
        ``content_hash`` is given), or ``None``."""
        stmt = self._instances_stmt().where(t.run.c.uid == run_uid)
        if content_hash is not None:
            stmt = stmt.where(t.run.c.content_hash == content_hash)
        stmt = stmt.order_by(t.run_instance.c.start.desc(), t.run_instance.c.id.desc()).limit(1)
        with self._core_read("read run instances from") as conn:
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
        wanted = list(dict.fromkeys(versions))
        rows: dict[tuple[str, str], list[InstanceInfo]] = {v: [] for v in wanted}
        r, i = t.run.c, t.run_instance.c
        with self._core_read("read run instances from") as conn:
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
        with self._core_read("read runs from") as conn:
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
        with self._core_read("read runs from") as conn:
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
            with self.engine.connect() as conn:
                result = conn.execution_options(yield_per=batch_size).execute(stmt)
                for row in result:
                    yield dict(row._mapping)
        except SQLAlchemyError as exc:
            raise store_error(self._url, "read episodes from", exc) from None

    def mark_interrupted(self, instance_id: int, error: str | None = None) -> bool:
        """Mark a *running* instance (and its running phases) as interrupted,
        e.g. one whose heartbeat went stale. Returns ``True`` if it was running."""
        now = utcnow()
        i, p = t.run_instance.c, t.phase.c
        with self._core_write("update") as conn:
            changed = conn.execute(
                update(t.run_instance).where(i.id == instance_id, i.status == "running")
                .values(status="interrupted", end=now, error=error)
            ).rowcount
            if changed:
                conn.execute(update(t.phase).where(p.instance_id == instance_id, p.status == "running")
                             .values(status="interrupted", end=now))
        return bool(changed)
