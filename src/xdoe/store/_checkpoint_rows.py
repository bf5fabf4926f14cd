"""The store's checkpoint and brain-source rows: every query about them.

A mixin of :class:`xdoe.store.Store`; the files themselves are written by
:class:`xdoe.execution.CheckpointManager`, which calls
:meth:`CheckpointRows.record_checkpoint` for the row, the best flag and
retention.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import Select, delete, insert, select, update
from sqlalchemy.orm import Session

from xdoe.store._models import BrainSource, Checkpoint, Phase, Run, RunInstance
from xdoe.store._rules import FINISHED

__all__ = ["CheckpointInfo", "CheckpointRows", "SourceRow"]


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


def _select_infos() -> Select[Any]:
    return (
        select(Checkpoint, Run.uid, Phase.index, Phase.name)
        .join(RunInstance, Checkpoint.instance_id == RunInstance.id)
        .join(Run, RunInstance.run_id == Run.id)
        .outerjoin(Phase, Checkpoint.phase_id == Phase.id)
    )


def _info(row: Any) -> CheckpointInfo:
    ck, run_uid, phase_index, phase_name = row
    return CheckpointInfo(
        id=int(ck.id), instance_id=int(ck.instance_id), run_uid=run_uid,
        phase_id=ck.phase_id, phase_index=phase_index, phase=phase_name, agent=ck.agent,
        step=ck.step, episode=ck.episode, path=Path(ck.path), sha256=ck.sha256,
        metric=ck.metric, best=bool(ck.best), created=ck.created,
    )


def _best(rows: Sequence[Any]) -> int | None:
    """Id of the row with the highest metric; ties keep the older (rows are newest first)."""
    best_id, best_metric = None, None
    for r in reversed(rows):
        if r.metric is None or r.metric != r.metric:  # None or NaN
            continue
        if best_metric is None or r.metric > best_metric:
            best_id, best_metric = r.id, r.metric
    return best_id


class CheckpointRows:
    """Checkpoint and brain-source queries of :class:`xdoe.store.Store`."""

    def _read(self, action: str) -> AbstractContextManager[Session]:  # pragma: no cover - Store's
        raise NotImplementedError

    def _write(self, action: str) -> AbstractContextManager[Session]:  # pragma: no cover - Store's
        raise NotImplementedError

    def checkpoints(self, instance_id: int, agent: str | None = None) -> list[CheckpointInfo]:
        """The checkpoints of a run instance (optionally of one agent), oldest first.

        Raises:
            StoreError: the store cannot be read.
        """
        stmt = _select_infos().where(Checkpoint.instance_id == instance_id)
        if agent is not None:
            stmt = stmt.where(Checkpoint.agent == agent)
        with self._read("read checkpoints from") as session:
            return [_info(r) for r in session.execute(stmt.order_by(Checkpoint.id))]

    def latest_checkpoint(self, run_uid: str, agent: str, phase: str | int | None = None, *,
                          finished_only: bool = True, instance_id: int | None = None,
                          best: bool = False) -> CheckpointInfo | None:
        """The newest checkpoint of ``agent`` in run ``run_uid`` (see
        :func:`xdoe.execution.latest_checkpoint`), or ``None``.

        Raises:
            TypeError: ``phase`` is a bool.
            StoreError: the store cannot be read.
        """
        stmt = _select_infos().where(Run.uid == run_uid, Checkpoint.agent == agent)
        if isinstance(phase, bool):
            raise TypeError("phase must be a name, an index or None")
        if isinstance(phase, int):
            stmt = stmt.where(Phase.index == phase)
        elif phase is not None:
            stmt = stmt.where(Phase.name == str(phase))
        if instance_id is not None:
            stmt = stmt.where(Checkpoint.instance_id == instance_id)
        if finished_only:
            stmt = stmt.where(FINISHED)
        order = [RunInstance.id.desc()]
        if best:
            order.append(Checkpoint.best.desc())
        stmt = stmt.order_by(*order, Checkpoint.id.desc()).limit(1)
        with self._read("read checkpoints from") as session:
            row = session.execute(stmt).first()
            return None if row is None else _info(row)

    def phase_id(self, instance_id: int, phase_index: int) -> int | None:
        """The row id of phase ``phase_index`` of an instance, ``None`` when not recorded."""
        with self._read("read phases from") as session:
            found = session.execute(
                select(Phase.id).where(Phase.instance_id == instance_id, Phase.index == int(phase_index))
            ).scalar_one_or_none()
        return None if found is None else int(found)

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
                  "metric": None if metric is None else float(metric), "best": False}
        doomed: list[str] = []
        with self._write("record a checkpoint in") as session:
            same = session.execute(
                select(Checkpoint.id).where(Checkpoint.instance_id == instance_id,
                                            Checkpoint.path == str(path))
            ).scalars().all()
            if same:
                session.execute(delete(Checkpoint).where(Checkpoint.id.in_(same)))
            row = Checkpoint(**values)
            session.add(row)
            session.flush()
            new_id = int(row.id)
            group = select(Checkpoint.id, Checkpoint.metric, Checkpoint.best, Checkpoint.path).where(
                Checkpoint.instance_id == instance_id, Checkpoint.agent == str(agent),
                Checkpoint.phase_id.is_(None) if phase_id is None else Checkpoint.phase_id == phase_id,
            ).order_by(Checkpoint.id.desc())
            rows = session.execute(group).all()
            best_id = _best(rows)
            session.execute(update(Checkpoint).where(Checkpoint.id.in_([r.id for r in rows]))
                            .values(best=False))
            if best_id is not None:
                session.execute(update(Checkpoint).where(Checkpoint.id == best_id).values(best=True))
            keep_ids = {r.id for r in rows[:keep]} | ({best_id} if best_id is not None else set())
            drop = [r for r in rows if r.id not in keep_ids]
            if drop:
                session.execute(delete(Checkpoint).where(Checkpoint.id.in_([r.id for r in drop])))
                doomed = [r.path for r in drop if r.path != str(path)]
        with self._read("read checkpoints from") as session:
            return _info(session.execute(_select_infos().where(Checkpoint.id == new_id)).one()), doomed

    def record_brain_sources(self, instance_id: int, phase_id: int | None,
                             rows: Sequence[SourceRow]) -> None:
        """Insert the ``brain_source`` rows of one phase start (one transaction)."""
        if not rows:
            return
        values = [{"instance_id": instance_id, "phase_id": phase_id, "agent": r.agent,
                   "source_kind": r.kind, "source_run_uid": r.run_uid, "source_phase": r.phase,
                   "source_checkpoint_id": r.checkpoint_id, "source_path": r.path,
                   "source_sha256": r.sha256} for r in rows]
        with self._write("record brain sources in") as session:
            session.execute(insert(BrainSource), values)
