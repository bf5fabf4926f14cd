"""The store's checkpoint and brain-source rows: every query about them.

The part ``store.checkpoints``; the files themselves are written by
:class:`xdoe.execution.CheckpointManager`, which calls
:meth:`Checkpoints.record_checkpoint` for the row, the best flag and
retention.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from sqlalchemy import Connection, Select, delete, insert, select, update

from xdoe.store.schema import _tables as t
from xdoe.store.schema._database import Database
from xdoe.store._rules import FINISHED

__all__ = ["CheckpointInfo", "Checkpoints", "SourceRow"]


@dataclass(frozen=True)
class CheckpointInfo:
    """One checkpoint as stored.

    Attributes:
        id: row id in the store's ``checkpoint`` table.
        instance_id: the run instance that saved it; ``run_uid`` its run.
        phase_id, phase_index, phase: the phase row id, schedule index and name
            (``None`` when saved outside a recorded phase).
        agent: the agent name.
        step: environment updates of the agent in the phase so far (``None`` if unknown).
        episode: episodes finished in the phase so far (``None`` if unknown).
        path: the brain file; sha256: its hash.
        metric: what "best" compares (higher is better), ``None`` when unknown.
        best: the best checkpoint of its (instance, phase, agent).
        created: when it was saved (aware UTC).
    """

    id: int
    instance_id: int
    run_uid: str
    phase_id: int | None
    phase_index: int | None
    phase: str | None
    agent: str
    step: int | None
    episode: int | None
    path: Path
    sha256: str | None
    metric: float | None
    best: bool
    created: _dt.datetime


@dataclass(frozen=True)
class SourceRow:
    """One ``brain_source`` row to record: where an agent's brain came from
    (``kind``: ``fresh``, ``previous_phase``, ``checkpoint``, ``path`` or ``replay``)."""

    agent: str
    kind: str
    run_uid: str | None = None
    phase: str | None = None
    checkpoint_id: int | None = None
    path: str | None = None
    sha256: str | None = None


#: The checkpoint table's columns and the ``checkpoint`` table itself.
_ck, _checkpoint = t.checkpoint.c, t.checkpoint


def _select_infos() -> Select[Any]:
    p = t.phase.c
    return (
        select(_ck.id, _ck.instance_id, t.run.c.uid, _ck.phase_id, p.index, p.name, _ck.agent, _ck.step,
               _ck.episode, _ck.path, _ck.sha256, _ck.metric, _ck.best, _ck.created)
        .join(t.run_instance, _ck.instance_id == t.run_instance.c.id)
        .join(t.run, t.run_instance.c.run_id == t.run.c.id)
        .outerjoin(t.phase, _ck.phase_id == p.id)
    )


def _info(row: Any) -> CheckpointInfo:
    (id_, instance_id, run_uid, phase_id, phase_index, phase_name, agent, step, episode, path, sha256,
     metric, best, created) = row
    return CheckpointInfo(
        id=int(id_), instance_id=int(instance_id), run_uid=run_uid,
        phase_id=phase_id, phase_index=phase_index, phase=phase_name, agent=agent,
        step=step, episode=episode, path=Path(path), sha256=sha256,
        metric=metric, best=bool(best), created=created,
    )


#: the id of a checkpoint row about to be inserted (real ids are positive)
_NEW = -1


class _NewRow(NamedTuple):
    """A checkpoint row as :func:`_best` reads it."""

    id: int
    metric: float | None
    best: bool
    path: str


def _best(rows: Sequence[Any]) -> int | None:
    """Id of the row with the highest metric; ties keep the older (rows are newest first)."""
    best_id, best_metric = None, None
    for r in reversed(rows):
        if r.metric is None or r.metric != r.metric:  # None or NaN
            continue
        if best_metric is None or r.metric > best_metric:
            best_id, best_metric = r.id, r.metric
    return best_id


class Checkpoints:
    """The checkpoint and brain-source rows of a store, ``store.checkpoints``.

    Args:
        db: the store's database (shared with the other parts).
    """

    def __init__(self, db: Database) -> None:
        self._db = db

    def of_instance(self, instance_id: int, agent: str | None = None) -> list[CheckpointInfo]:
        """The checkpoints of a run instance (optionally of one agent), oldest first.

        Raises:
            StoreError: the store cannot be read.
        """
        stmt = _select_infos().where(_ck.instance_id == instance_id)
        if agent is not None:
            stmt = stmt.where(_ck.agent == agent)
        with self._db.read("read checkpoints from") as conn:
            return [_info(r) for r in conn.execute(stmt.order_by(_ck.id))]

    def latest_checkpoint(self, run_uid: str, agent: str, phase: str | int | None = None, *,
                          finished_only: bool = True, instance_id: int | None = None,
                          best: bool = False) -> CheckpointInfo | None:
        """The newest checkpoint of ``agent`` in run ``run_uid`` (see
        :func:`xdoe.execution.latest_checkpoint`), or ``None``.

        Raises:
            TypeError: ``phase`` is a bool.
            StoreError: the store cannot be read.
        """
        stmt = _select_infos().where(t.run.c.uid == run_uid, _ck.agent == agent)
        if isinstance(phase, bool):
            raise TypeError("phase must be a name, an index or None")
        if isinstance(phase, int):
            stmt = stmt.where(t.phase.c.index == phase)
        elif phase is not None:
            stmt = stmt.where(t.phase.c.name == str(phase))
        if instance_id is not None:
            stmt = stmt.where(_ck.instance_id == instance_id)
        if finished_only:
            stmt = stmt.where(FINISHED)
        order = [t.run_instance.c.id.desc()]
        if best:
            order.append(_ck.best.desc())
        stmt = stmt.order_by(*order, _ck.id.desc()).limit(1)
        with self._db.read("read checkpoints from") as conn:
            row = conn.execute(stmt).first()
            return None if row is None else _info(row)

    def checkpointed_agents(self, instance_id: int) -> dict[str, list[str]]:
        """Agent -> the names of the phases of an instance it has checkpoints in."""
        agents: dict[str, list[str]] = {}
        ck, p = t.checkpoint.c, t.phase.c
        with self._db.read("read checkpoints from") as conn:
            for agent, name in conn.execute(
                select(ck.agent, p.name).join(t.phase, ck.phase_id == p.id)
                .where(ck.instance_id == instance_id).distinct()
            ):
                agents.setdefault(agent, []).append(name)
        return agents

    def record_checkpoint(self, instance_id: int, *, agent: str, phase_id: int | None,
                          step: int | None, episode: int | None, path: Path, sha256: str,
                          metric: float | None, keep: int) -> tuple[CheckpointInfo, list[str]]:
        """Record a checkpoint file (replacing the row of the same path), set
        the best flag of its (instance, phase, agent) and drop all but the
        newest ``keep`` and the best.

        Returns:
            the new :class:`CheckpointInfo` and the paths of the dropped
            checkpoints' files (for the caller to delete).
        """
        values = {"instance_id": instance_id, "phase_id": phase_id, "agent": str(agent),
                  "step": None if step is None else int(step),
                  "episode": None if episode is None else int(episode),
                  "path": str(path), "sha256": sha256,
                  "metric": None if metric is None else float(metric)}

        def write(conn: Connection) -> tuple[CheckpointInfo, list[str]]:
            # one read: the rows of the same path (replaced, whatever their group) and the group
            group = (_ck.agent == str(agent)) & (_ck.phase_id.is_(None) if phase_id is None
                                                 else _ck.phase_id == phase_id)
            found = conn.execute(
                select(_ck.id, _ck.metric, _ck.best, _ck.path)
                .where(_ck.instance_id == instance_id, (_ck.path == str(path)) | group)
                .order_by(_ck.id.desc())
            ).all()
            same = [r.id for r in found if r.path == str(path)]
            if same:
                conn.execute(delete(_checkpoint).where(_ck.id.in_(same)))
            # the group read before the insert, the new row first (newest): it is inserted with
            # its best flag already decided, so no flag of it is updated after
            rows = [_NewRow(_NEW, values["metric"], False, str(path)), *(r for r in found if r.path != str(path))]
            best_id = _best(rows)
            key = conn.execute(insert(_checkpoint).values(**values, best=best_id == _NEW)).inserted_primary_key
            assert key is not None
            new_id = int(key[0])
            rows[0] = _NewRow(new_id, values["metric"], best_id == _NEW, str(path))
            best_id = new_id if best_id == _NEW else best_id
            # only the flags that change
            cleared = [r.id for r in rows if r.best and r.id != best_id]
            if cleared:
                conn.execute(update(_checkpoint).where(_ck.id.in_(cleared)).values(best=False))
            if best_id is not None and not next(r.best for r in rows if r.id == best_id):
                conn.execute(update(_checkpoint).where(_ck.id == best_id).values(best=True))
            keep_ids = {r.id for r in rows[:keep]} | ({best_id} if best_id is not None else set())
            drop = [r for r in rows if r.id not in keep_ids]
            doomed: list[str] = []
            if drop:
                conn.execute(delete(_checkpoint).where(_ck.id.in_([r.id for r in drop])))
                doomed = [r.path for r in drop if r.path != str(path)]
            # read back in the same transaction (it holds the write lock: nothing changed it meanwhile)
            return _info(conn.execute(_select_infos().where(_ck.id == new_id)).one()), doomed

        # a store lost meanwhile is waited for (Store.wait); the rows of the same path are replaced
        return self._db.write_again("record a checkpoint in", write)

    def record_brain_sources(self, instance_id: int, phase_id: int | None,
                             rows: Sequence[SourceRow]) -> None:
        """Insert the ``brain_source`` rows of one phase start (one transaction)."""
        if not rows:
            return
        values = [{"instance_id": instance_id, "phase_id": phase_id, "agent": r.agent,
                   "source_kind": r.kind, "source_run_uid": r.run_uid, "source_phase": r.phase,
                   "source_checkpoint_id": r.checkpoint_id, "source_path": r.path,
                   "source_sha256": r.sha256} for r in rows]
        self._db.write_again("record brain sources in", lambda conn: conn.execute(insert(t.brain_source), values))
