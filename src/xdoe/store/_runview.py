"""The queries behind ``xrun dashboard``'s run pages: one run (instances,
phases, checkpoints), its learning curves read incrementally and binned in
SQL, and the bounded lineage of a campaign (see :mod:`xdoe.store._dashboard`
for the campaign pages)."""

from __future__ import annotations

import datetime as _dt
import json
import math
import socket
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, select

from xdoe.store._dashboard import _CHUNK, _statuses
from xdoe.store._models import Checkpoint, Episode, Experiment, Phase, Run, RunInstance, utcnow
from xdoe.store._liveness import HEARTBEAT_TIMEOUT
from xdoe.store._status import DesignRun, RunStatus, _decide

if TYPE_CHECKING:
    from xdoe.store._rows import StoreRows as Store

__all__ = ["PhaseView", "CheckpointView", "RunView", "run_view", "curve_points", "lineage_nodes",
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


def run_view(store: "Store", uid: str, instance_id: int | None = None, *,
             heartbeat_timeout: float = HEARTBEAT_TIMEOUT) -> RunView | None:
    """A run by uid (its latest version), or ``None`` when the store has no such run.

    ``instance_id`` picks the instance whose phases and checkpoints are
    shown (default: the one its status comes from, else the newest).
    """
    with store._read("read runs from") as session:
        row = session.execute(
            select(Run, Experiment.uid).outerjoin(Experiment, Run.experiment_id == Experiment.id)
            .where(Run.uid == uid).order_by(Run.id.desc()).limit(1)).first()
    if row is None:
        return None
    run, exp = row
    with store._read("read run instances from") as session:
        instances = session.execute(
            select(Run.uid, Run.content_hash, RunInstance.id, RunInstance.status, RunInstance.error,
                   RunInstance.host, RunInstance.pid, RunInstance.start, RunInstance.end,
                   RunInstance.heartbeat)
            .join(Run, RunInstance.run_id == Run.id).where(Run.uid == uid)
            .order_by(RunInstance.id)).all()
    design = DesignRun(uid=uid, content_hash=run.content_hash, design_point=run.design_point,
                       repetition=run.repetition, seed=run.seed)
    status = _decide(design, instances, now=utcnow(), timeout=heartbeat_timeout,
                     hostname=socket.gethostname())
    full = store.instances(run_uid=uid)
    chosen = instance_id if instance_id is not None else status.instance_id
    if chosen is None and full:
        chosen = full[-1].id
    instance = next((i for i in full if i.id == chosen), None)
    view = RunView(uid, exp, run.content_hash, json.loads(run.document), run.levels or {}, status,
                   full, instance)
    if instance is None:
        return view
    with store._read("read phases from") as session:
        counts: dict[int, int] = {}
        steps: dict[int, int] = {}
        for pid, _agent, n, total in session.execute(
            select(Episode.phase_id, Episode.agent, func.count(), func.sum(Episode.steps))
            .join(Phase, Episode.phase_id == Phase.id)
            .where(Phase.instance_id == instance.id).group_by(Episode.phase_id, Episode.agent)).all():
            counts[pid] = max(counts.get(pid, 0), int(n))  # one row per worker, episode and agent
            steps[pid] = max(steps.get(pid, 0), int(total or 0))
        names: dict[int, str] = {}
        for p in session.execute(select(Phase).where(Phase.instance_id == instance.id)
                                 .order_by(Phase.index)).scalars():
            names[p.id] = p.name
            cfg = p.config or {}
            planned = None
            if isinstance(cfg.get("episodes"), int):
                planned = cfg["episodes"] * int(cfg.get("worker", 1) or 1)
            view.phases.append(PhaseView(p.id, p.index, p.name, p.mode, p.status, p.start, p.end,
                                         int(counts.get(p.id, 0)), planned, int(steps.get(p.id, 0)),
                                         phase_step_budget(view.document, p.index)))
        for c in session.execute(select(Checkpoint).where(Checkpoint.instance_id == instance.id)
                                 .order_by(Checkpoint.id)).scalars():
            view.checkpoints.append(CheckpointView(
                c.id, names.get(c.phase_id) if c.phase_id is not None else None, c.agent,
                c.episode, c.step, c.metric, bool(c.best), c.path, c.created))
    return view


def curve_points(store: "Store", instance_id: int, *, after: int = 0,
                 max_points: int = 1000, bin_size: int | None = None) -> dict[str, Any]:
    """Learning-curve points of one instance newer than episode row ``after``.

    Per phase and agent, episode rows (one per worker) are averaged per
    episode; when a phase has more than ``max_points`` new episodes they are
    binned in SQL (``GROUP BY episode / k``, ``k = ceil(episodes / max_points)``)
    and each point is the bin's mean at its first episode. ``bin_size``
    forces ``k`` (a live page passes the ``k`` of its first read, so new
    points match the old ones).

    Returns:
        ``{"last": id of the newest row read (pass it as ``after`` next time),
        "k": the largest bin size used,
        "series": [{"phase", "phase_index", "mode", "agent", "x", "reward",
        "objective"}]}`` with ``x`` the episode number counted over the whole
        run (earlier phases' planned episodes first), units as stored.
    """
    with store._read("read episodes from") as session:
        phases = session.execute(
            select(Phase.id, Phase.index, Phase.name, Phase.mode, Phase.config)
            .where(Phase.instance_id == instance_id).order_by(Phase.index)).all()
        series: list[dict[str, Any]] = []
        last = after
        used = bin_size or 1
        offset = 0
        for p in phases:
            cfg = p.config or {}
            base = offset
            offset += int(cfg.get("episodes") or 0)
            n, top = session.execute(
                select(func.count(), func.max(Episode.id))
                .where(Episode.phase_id == p.id, Episode.id > after)).one()
            if not n:
                continue
            last = max(last, int(top))
            workers = max(1, int(cfg.get("worker", 1) or 1))
            k = bin_size or max(1, math.ceil(n / workers / max_points))
            used = max(used, k)
            bucket = (Episode.episode // k).label("b") if k > 1 else Episode.episode.label("b")
            rows = session.execute(
                select(Episode.agent, bucket, func.min(Episode.episode),
                       func.avg(Episode.reward), func.avg(Episode.objective))
                .where(Episode.phase_id == p.id, Episode.id > after)
                .group_by(Episode.agent, bucket).order_by(Episode.agent, bucket)).all()
            by_agent: dict[str, dict[str, Any]] = {}
            for agent, _b, episode, reward, objective in rows:
                s = by_agent.setdefault(agent, {"phase": p.name, "phase_index": p.index,
                                                "mode": p.mode, "agent": agent, "x": [],
                                                "reward": [], "objective": []})
                s["x"].append(base + int(episode))
                s["reward"].append(None if reward is None else float(reward))
                s["objective"].append(None if objective is None else float(objective))
            series.extend(by_agent.values())
    return {"last": last, "k": used, "series": series}


def lineage_nodes(store: "Store", experiment: str | None, *, limit: int = 400,
                  heartbeat_timeout: float = HEARTBEAT_TIMEOUT) -> tuple[list[dict[str, Any]], int]:
    """The first ``limit`` runs in design order (latest version, the instance
    their status comes from) with phases and brain sources, for the lineage
    graph; three queries whatever the store's size (cf. :meth:`xdoe.store.Store.build_lineage`,
    which reads every run).

    Returns:
        ``(nodes, total runs)``; a node is ``{"uid", "status", "design_point",
        "repetition", "instance", "phases": [(index, name, mode, status)],
        "sources": [(agent, kind, source run uid)]}``.
    """
    from xdoe.store._models import BrainSource

    statuses, _ = _statuses(store, experiment, heartbeat_timeout, None)
    statuses.sort(key=lambda r: (r.design_point is None, r.design_point or 0,
                                 r.repetition is None, r.repetition or 0, r.run))
    shown = statuses[:limit]
    nodes = [{"uid": r.run, "status": r.status, "design_point": r.design_point,
              "repetition": r.repetition, "instance": r.instance_id, "phases": [], "sources": []}
             for r in shown]
    by_instance = {n["instance"]: n for n in nodes if n["instance"] is not None}
    ids = list(by_instance)
    with store._read("read the lineage from") as session:
        for start in range(0, len(ids), _CHUNK):
            chunk = ids[start:start + _CHUNK]
            for p in session.execute(
                select(Phase.instance_id, Phase.index, Phase.name, Phase.mode, Phase.status)
                .where(Phase.instance_id.in_(chunk)).order_by(Phase.instance_id, Phase.index)
            ):
                by_instance[p.instance_id]["phases"].append((p.index, p.name, p.mode, p.status))
            for b in session.execute(
                select(BrainSource.instance_id, BrainSource.agent, BrainSource.source_kind,
                       BrainSource.source_run_uid)
                .where(BrainSource.instance_id.in_(chunk)).order_by(BrainSource.id)
            ):
                by_instance[b.instance_id]["sources"].append((b.agent, b.source_kind, b.source_run_uid))
    return nodes, len(statuses)
