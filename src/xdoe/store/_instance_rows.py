"""Queries about the rows of one run instance that resuming and lineage need.

A mixin of :class:`xdoe.store.Store` (with :mod:`xdoe.store._checkpoint_rows`):
the phases of an instance, dropping what a resumed instance redoes, the
per-phase sums of the episodes it keeps, and the stored steps ``replay:``
streams; and the value types of runs and instances the facade returns.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, and_, delete, func, or_, select

from xdoe.store import _tables as t
from xdoe.store._base import StoreBase
from xdoe.store._liveness import HEARTBEAT_TIMEOUT, dead_reason

__all__ = ["InstanceRows", "InstanceInfo", "PhaseRow", "PhaseSums", "RunInfo", "RunState"]


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

    def dead_reason(self, heartbeat_timeout: float = HEARTBEAT_TIMEOUT, *,
                    this_process_is_dead: bool = False) -> str | None:
        """Why this *running* instance is in fact dead (its process is gone
        from this host, or no heartbeat for ``heartbeat_timeout`` seconds), or
        ``None`` when it may be alive; ``this_process_is_dead``: an instance
        recorded by this very process counts as dead (a leftover)."""
        return dead_reason(self.host, self.pid, self.heartbeat, self.start, timeout=heartbeat_timeout,
                           this_process_is_dead=this_process_is_dead)

    def alive(self, heartbeat_timeout: float = HEARTBEAT_TIMEOUT) -> bool:
        """Whether this ``running`` instance still runs (:meth:`dead_reason`
        is ``None``; an instance of this very process counts as dead)."""
        return self.dead_reason(heartbeat_timeout, this_process_is_dead=True) is None


@dataclass(frozen=True)
class RunState:
    """What the store knows of one run version (:meth:`xdoe.store.Store.run_states`).

    Attributes:
        finished: id of its newest ``finished`` instance (the one "finished"
            rule, :mod:`xdoe.store._rules`), or ``None``.
        latest: its most recently started instance, or ``None``.
        running: its instances with status ``running`` (alive or not), oldest first.
    """

    finished: int | None = None
    latest: InstanceInfo | None = None
    running: tuple[InstanceInfo, ...] = ()


@dataclass(frozen=True)
class PhaseRow:
    """A phase of a run instance as stored."""

    id: int
    index: int
    name: str
    status: str


#: phase index -> (episodes, steps, {agent: reward sum}, {agent: objective sum})
PhaseSums = dict[int, tuple[int, int, dict[str, float], dict[str, float]]]


class InstanceRows(StoreBase):
    """Resume and lineage queries of :class:`xdoe.store.Store`."""

    def phases(self, instance_id: int) -> list[PhaseRow]:
        """The phase rows of an instance, by schedule index."""
        p = t.phase.c
        with self._core_read("read phases from") as conn:
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

        self._write_again("drop what a resumed run redoes in", drop)  # deletes: safe to run again

    def phase_sums(self, instance_id: int) -> PhaseSums:
        """Per phase index: the episodes and steps recorded (the most of any
        agent) and each agent's summed reward and objective."""
        sums: PhaseSums = {}
        p, e = t.phase.c, t.episode.c
        with self._core_read("read episodes from") as conn:
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
        with self._core_read("read runs from") as conn:
            statuses = conn.execute(
                select(i.status).join(t.run, i.run_id == r.id).where(r.uid == run_uid)
            ).scalars().all()
            uids = conn.execute(select(r.uid).distinct()).scalars().all()
        return list(statuses), list(uids)

    def checkpointed_agents(self, instance_id: int) -> dict[str, list[str]]:
        """Agent -> the names of the phases of an instance it has checkpoints in."""
        agents: dict[str, list[str]] = {}
        ck, p = t.checkpoint.c, t.phase.c
        with self._core_read("read checkpoints from") as conn:
            for agent, name in conn.execute(
                select(ck.agent, p.name).join(t.phase, ck.phase_id == p.id)
                .where(ck.instance_id == instance_id).distinct()
            ):
                agents.setdefault(agent, []).append(name)
        return agents

    def step_agents(self, phase_ids: Sequence[int]) -> dict[str, int]:
        """Agent -> number of stored steps in these phases."""
        s = t.step.c
        with self._core_read("read steps from") as conn:
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
        with self.engine.connect() as conn:
            yield from conn.execution_options(yield_per=batch_size).execute(stmt)
