"""Queries about the rows of one run instance that resuming and lineage need.

A mixin of :class:`xdoe.store.Store` (with :mod:`xdoe.store._checkpoint_rows`):
the phases of an instance, dropping what a resumed instance redoes, the
per-phase sums of the episodes it keeps, and the stored steps ``replay:``
streams; and the value types of runs and instances the facade returns.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, delete, func, or_, select
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session

from xdoe.store._models import Checkpoint, Episode, Phase, Run, RunInstance, Step

__all__ = ["InstanceRows", "InstanceInfo", "PhaseRow", "PhaseSums", "RunInfo"]


@dataclass(frozen=True)
class RunInfo:
    """A run version as stored: ``document`` is the run document (dict)."""

    id: int
    uid: str
    experiment: str | None
    content_hash: str
    design_point: int | None
    repetition: int | None
    seed: int | None
    levels: dict[str, Any] | None
    created: _dt.datetime
    document: dict[str, Any]


@dataclass(frozen=True)
class InstanceInfo:
    """One run instance (times are aware UTC datetimes)."""

    id: int
    uuid: str
    run_uid: str
    content_hash: str
    host: str
    pid: int
    start: _dt.datetime
    end: _dt.datetime | None
    status: str
    error: str | None
    traceback: str | None
    heartbeat: _dt.datetime | None
    results_dir: str | None


@dataclass(frozen=True)
class PhaseRow:
    """A phase of a run instance as stored."""

    id: int
    index: int
    name: str
    status: str


#: phase index -> (episodes, steps, {agent: reward sum}, {agent: objective sum})
PhaseSums = dict[int, tuple[int, int, dict[str, float], dict[str, float]]]


class InstanceRows:
    """Resume and lineage queries of :class:`xdoe.store.Store`."""

    engine: Engine

    def _read(self, action: str) -> AbstractContextManager[Session]:  # pragma: no cover - Store's
        raise NotImplementedError

    def _write(self, action: str) -> AbstractContextManager[Session]:  # pragma: no cover - Store's
        raise NotImplementedError

    def phases(self, instance_id: int) -> list[PhaseRow]:
        """The phase rows of an instance, by schedule index."""
        with self._read("read phases from") as session:
            return [PhaseRow(int(r.id), int(r.index), r.name, r.status) for r in session.execute(
                select(Phase.id, Phase.index, Phase.name, Phase.status)
                .where(Phase.instance_id == instance_id).order_by(Phase.index))]

    def drop_redone(self, phase_ids: Sequence[int], continued: int | None = None,
                    next_episodes: Sequence[int] = ()) -> None:
        """Delete what a resumed instance runs again, in one transaction: the
        phases ``phase_ids`` (with their episodes, steps, checkpoints and brain
        sources) and, of phase row ``continued``, the episode and step rows of
        worker ``w`` from episode ``next_episodes[w]`` on (and of any worker
        beyond them)."""
        with self._write("drop what a resumed run redoes in") as session:
            if phase_ids:
                session.execute(delete(Phase).where(Phase.id.in_(list(phase_ids))))
            if continued is not None:
                for table in (Episode, Step):
                    session.execute(delete(table).where(
                        table.phase_id == continued,
                        or_(*[and_(table.worker == w, table.episode >= nxt)
                              for w, nxt in enumerate(next_episodes)],
                            table.worker >= len(next_episodes))))

    def phase_sums(self, instance_id: int) -> PhaseSums:
        """Per phase index: the episodes and steps recorded (the most of any
        agent) and each agent's summed reward and objective."""
        sums: PhaseSums = {}
        with self._read("read episodes from") as session:
            for index, agent, n, steps, reward, objective in session.execute(
                select(Phase.index, Episode.agent, func.count(), func.sum(Episode.steps),
                       func.sum(Episode.reward), func.sum(Episode.objective))
                .join(Phase, Episode.phase_id == Phase.id)
                .where(Phase.instance_id == instance_id).group_by(Phase.index, Episode.agent)
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
        with self._read("read runs from") as session:
            statuses = session.execute(
                select(RunInstance.status).join(Run, RunInstance.run_id == Run.id).where(Run.uid == run_uid)
            ).scalars().all()
            uids = session.execute(select(Run.uid).distinct()).scalars().all()
        return list(statuses), list(uids)

    def checkpointed_agents(self, instance_id: int) -> dict[str, list[str]]:
        """Agent -> the names of the phases of an instance it has checkpoints in."""
        agents: dict[str, list[str]] = {}
        with self._read("read checkpoints from") as session:
            for agent, name in session.execute(
                select(Checkpoint.agent, Phase.name).join(Phase, Checkpoint.phase_id == Phase.id)
                .where(Checkpoint.instance_id == instance_id).distinct()
            ):
                agents.setdefault(agent, []).append(name)
        return agents

    def step_agents(self, phase_ids: Sequence[int]) -> dict[str, int]:
        """Agent -> number of stored steps in these phases."""
        with self._read("read steps from") as session:
            return {a: int(n) for a, n in session.execute(
                select(Step.agent, func.count()).where(Step.phase_id.in_(list(phase_ids)))
                .group_by(Step.agent))}

    def steps(self, phase_ids: Sequence[int], agent: str, batch_size: int = 2000) -> Iterator[Any]:
        """Stream the stored steps of ``agent`` in these phases, in (phase,
        worker, episode, step) order; rows with ``phase_id``, ``worker``,
        ``episode``, ``step``, ``sensors``, ``actions``, ``rewards``,
        ``objective``, ``done`` (JSON columns as stored)."""
        stmt = (select(Step.phase_id, Step.worker, Step.episode, Step.step, Step.sensors, Step.actions,
                       Step.rewards, Step.objective, Step.done)
                .where(Step.phase_id.in_(list(phase_ids)), Step.agent == agent)
                .order_by(Step.phase_id, Step.worker, Step.episode, Step.step))
        with self.engine.connect() as conn:
            yield from conn.execution_options(yield_per=batch_size).execute(stmt)
