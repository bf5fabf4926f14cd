"""The queries behind ``xrun dashboard``'s run pages: one run (instances,
phases, checkpoints) and the bounded lineage of a campaign (see :mod:`xdoe.store.views._dashboard`
for the campaign pages)."""

from __future__ import annotations

import datetime as _dt
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, select

from xdoe.store.views._dashboard import _CHUNK, _statuses
from xdoe.store._liveness import HEARTBEAT_TIMEOUT
from xdoe.store.runs._runs import Runs
from xdoe.store.views._status import RunStatus, campaign_status
from xdoe.store.schema._tables import (brain_source as brain_source_t, checkpoint as checkpoint_t, episode as episode_t,
                                experiment as experiment_t, phase as phase_t, run as run_t)

if TYPE_CHECKING:
    from xdoe.store.schema._database import Database

__all__ = ["PhaseView", "CheckpointView", "RunView", "run_view", "lineage_nodes",
           "phase_step_budget"]


@dataclass(frozen=True)
class PhaseView:
    id: int
    index: int
    name: str
    mode: str
    status: str
    start: _dt.datetime
    end: _dt.datetime | None
    episodes: int
    planned: int | None
    #: environment steps recorded (of the agent with most; all workers together)
    steps: int = 0
    #: the phase's step budget (``MaxStepsTerminationCondition``'s ``phase_steps``), if any
    planned_steps: int | None = None

    @property
    def progress(self) -> str:
        """``"12,345 / 40,000 steps (56 episodes)"`` for a step-budgeted phase,
        else ``"56 / 300 episodes"`` (``"56 episodes"`` without a plan)."""
        if self.planned_steps:
            return (f"{self.steps:,} / {self.planned_steps:,} steps "
                    f"({self.episodes:,} episode{'s' if self.episodes != 1 else ''})")
        if self.planned:
            return f"{self.episodes:,} / {self.planned:,} episodes"
        return f"{self.episodes:,} episodes"


def phase_step_budget(document: dict[str, Any], index: int) -> int | None:
    """The ``phase_steps`` of a ``MaxStepsTerminationCondition`` among the
    simulation conditions of phase ``index`` of a run document (a phase
    without ``simulation`` inherits the previous phase's), else ``None``."""
    simulation: Any = None
    for entry in (document.get("schedule") or [])[: index + 1]:
        body = next(iter(entry.values()), None) if isinstance(entry, dict) and entry else None
        if isinstance(body, dict) and isinstance(body.get("simulation"), dict):
            simulation = body["simulation"]
    budgets = [c.get("params", {}).get("phase_steps") for c in (simulation or {}).get("conditions") or []
               if isinstance(c, dict) and str(c.get("name", "")).endswith("MaxStepsTerminationCondition")
               and isinstance(c.get("params"), dict)]
    budgets = [b for b in budgets if isinstance(b, int) and not isinstance(b, bool)]
    return min(budgets) if budgets else None


@dataclass(frozen=True)
class CheckpointView:
    id: int
    phase: str | None
    agent: str
    episode: int | None
    step: int | None
    metric: float | None
    best: bool
    path: str
    created: _dt.datetime


@dataclass
class RunView:
    """A run: its latest version's document and levels, every instance
    (newest last), and for the chosen instance its phases and checkpoints."""

    uid: str
    experiment: str | None
    content_hash: str
    document: dict[str, Any]
    levels: dict[str, Any]
    status: RunStatus
    instances: list[Any]
    instance: Any | None
    phases: list[PhaseView] = field(default_factory=list)
    checkpoints: list[CheckpointView] = field(default_factory=list)


def run_view(db: "Database", uid: str, instance_id: int | None = None, *,
             heartbeat_timeout: float = HEARTBEAT_TIMEOUT) -> RunView | None:
    """A run by uid (its latest version), or ``None`` when the store has no such run.

    ``instance_id`` picks the instance whose phases and checkpoints are
    shown (default: the one its status comes from, else the newest).
    """
    r, e = run_t.c, experiment_t.c
    with db.read("read runs from") as conn:
        row = conn.execute(
            select(r.content_hash, r.document, r.levels, e.uid).select_from(run_t)
            .outerjoin(experiment_t, r.experiment_id == e.id)
            .where(r.uid == uid).order_by(r.id.desc()).limit(1)).first()
    if row is None:
        return None
    content_hash, document, levels, exp = row
    status = campaign_status(db, run=uid, include_branches=True, heartbeat_timeout=heartbeat_timeout).runs[0]
    full = Runs(db).instances(run_uid=uid)
    chosen = instance_id if instance_id is not None else status.instance_id
    if chosen is None and full:
        chosen = full[-1].id
    instance = next((i for i in full if i.id == chosen), None)
    view = RunView(uid, exp, content_hash, json.loads(document), levels or {}, status, full, instance)
    if instance is None:
        return view
    p, ep, c = phase_t.c, episode_t.c, checkpoint_t.c
    with db.read("read phases from") as conn:
        counts: dict[int, int] = {}
        steps: dict[int, int] = {}
        for pid, _agent, n, total in conn.execute(
            select(ep.phase_id, ep.agent, func.count(), func.sum(ep.steps))
            .join(phase_t, ep.phase_id == p.id)
            .where(p.instance_id == instance.id).group_by(ep.phase_id, ep.agent)).all():
            counts[pid] = max(counts.get(pid, 0), int(n))  # one row per worker, episode and agent
            steps[pid] = max(steps.get(pid, 0), int(total or 0))
        names: dict[int, str] = {}
        for ph in conn.execute(select(p.id, p.index, p.name, p.mode, p.status, p.start, p.end, p.config)
                               .where(p.instance_id == instance.id).order_by(p.index)).all():
            names[ph.id] = ph.name
            cfg = ph.config or {}
            planned = None
            if isinstance(cfg.get("episodes"), int):
                planned = cfg["episodes"] * int(cfg.get("worker", 1) or 1)
            view.phases.append(PhaseView(ph.id, ph.index, ph.name, ph.mode, ph.status, ph.start, ph.end,
                                         int(counts.get(ph.id, 0)), planned, int(steps.get(ph.id, 0)),
                                         phase_step_budget(view.document, ph.index)))
        for ck in conn.execute(select(c.id, c.phase_id, c.agent, c.episode, c.step, c.metric, c.best, c.path,
                                      c.created)
                               .where(c.instance_id == instance.id).order_by(c.id)).all():
            view.checkpoints.append(CheckpointView(
                ck.id, names.get(ck.phase_id) if ck.phase_id is not None else None, ck.agent,
                ck.episode, ck.step, ck.metric, bool(ck.best), ck.path, ck.created))
    return view


def lineage_nodes(db: "Database", experiment: str | None, *, limit: int = 400,
                  heartbeat_timeout: float = HEARTBEAT_TIMEOUT) -> tuple[list[dict[str, Any]], int]:
    """The first ``limit`` runs in design order (latest version, the instance
    their status comes from) with phases and brain sources, for the lineage
    graph; three queries whatever the store's size (cf. :meth:`store.views.build_lineage <xdoe.store.views._views.Views.build_lineage>`,
    which reads every run).

    Returns:
        ``(nodes, total runs)``; a node is ``{"uid", "status", "design_point",
        "repetition", "instance", "phases": [(index, name, mode, status)],
        "sources": [(agent, kind, source run uid)]}``.
    """
    statuses, _ = _statuses(db, experiment, heartbeat_timeout, None)
    statuses.sort(key=lambda r: (r.design_point is None, r.design_point or 0,
                                 r.repetition is None, r.repetition or 0, r.run))
    shown = statuses[:limit]
    nodes = [{"uid": r.run, "status": r.status, "design_point": r.design_point,
              "repetition": r.repetition, "instance": r.instance_id, "phases": [], "sources": []}
             for r in shown]
    by_instance = {n["instance"]: n for n in nodes if n["instance"] is not None}
    ids = list(by_instance)
    p, b = phase_t.c, brain_source_t.c
    with db.read("read the lineage from") as conn:
        for start in range(0, len(ids), _CHUNK):
            chunk = ids[start:start + _CHUNK]
            for ph in conn.execute(
                select(p.instance_id, p.index, p.name, p.mode, p.status)
                .where(p.instance_id.in_(chunk)).order_by(p.instance_id, p.index)
            ):
                by_instance[ph.instance_id]["phases"].append((ph.index, ph.name, ph.mode, ph.status))
            for src in conn.execute(
                select(b.instance_id, b.agent, b.source_kind, b.source_run_uid)
                .where(b.instance_id.in_(chunk)).order_by(b.id)
            ):
                by_instance[src.instance_id]["sources"].append((src.agent, src.source_kind, src.source_run_uid))
    return nodes, len(statuses)
