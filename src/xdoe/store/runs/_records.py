"""The records ``store.runs`` returns: run versions, run instances, what
the store knows of a run version, and the phases of an instance."""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from typing import Any

from xdoe.store._liveness import HEARTBEAT_TIMEOUT, dead_reason

__all__ = ["InstanceInfo", "PhaseRow", "PhaseSums", "RunInfo", "RunState"]


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
    """What the store knows of one run version (:meth:`Runs.run_states <xdoe.store.runs._runs.Runs.run_states>`).

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
