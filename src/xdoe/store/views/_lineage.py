"""Lineage: runs, their instances, phases, and where each agent's brain came
from (``brain_source`` rows), as data (:func:`build_lineage`) and as a
:class:`rich.tree.Tree` (:func:`render_lineage`).

In the tree, failed nodes are red and marked ``✗ failed``, running ones
yellow and marked ``● running``, interrupted ones (also running instances
that are stale, see :func:`xdoe.store._liveness.dead_reason`) magenta and marked
``⚠ interrupted``.
"""

from __future__ import annotations

import datetime as _dt
import socket
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, select

from xdoe.store.schema import _tables as t
from xdoe.store.schema._tables import utcnow
from xdoe.store._liveness import HEARTBEAT_TIMEOUT, dead_reason

if TYPE_CHECKING:
    from rich.tree import Tree

    from xdoe.store.schema._database import Database

__all__ = ["AgentNode", "PhaseNode", "InstanceNode", "RunNode", "build_lineage", "render_lineage",
           "MARKS"]

#: Status -> (mark, rich style) used by :func:`render_lineage`.
MARKS = {
    "finished": ("✓ finished", "green"),
    "running": ("● running", "yellow"),
    "failed": ("✗ failed", "bold red"),
    "interrupted": ("⚠ interrupted", "magenta"),
    "pruned": ("✂ pruned", "cyan"),
}


@dataclass
class AgentNode:
    """An agent of a phase and the source of its brain.

    ``kind`` is ``fresh``, ``previous_phase``, ``checkpoint``, ``path`` or
    ``replay`` (see :class:`xdoe.store.BrainSource`; an agent has one node per
    row, e.g. a load and a replay); for ``checkpoint`` the source run,
    phase, checkpoint id and its instance; ``checkpoints`` counts the
    checkpoints the agent saved in the phase."""

    agent: str
    kind: str | None
    source_run: str | None = None
    source_phase: str | None = None
    source_checkpoint: int | None = None
    source_instance: int | None = None
    source_path: str | None = None
    checkpoints: int = 0


@dataclass
class PhaseNode:
    id: int
    index: int
    name: str
    mode: str
    status: str
    agents: list[AgentNode] = field(default_factory=list)


@dataclass
class InstanceNode:
    """A run instance; ``status`` is the stored one except a stale running
    instance, shown ``interrupted`` with ``stale`` giving the reason."""

    id: int
    status: str
    host: str
    pid: int
    start: _dt.datetime
    end: _dt.datetime | None
    error: str | None
    stale: str | None = None
    phases: list[PhaseNode] = field(default_factory=list)


@dataclass
class RunNode:
    uid: str
    content_hash: str
    experiment: str | None
    design_point: int | None
    repetition: int | None
    instances: list[InstanceNode] = field(default_factory=list)


def build_lineage(
    db: "Database",
    experiment: str | None = None,
    *,
    run: str | None = None,
    latest_only: bool = False,
    heartbeat_timeout: float = HEARTBEAT_TIMEOUT,
    now: _dt.datetime | None = None,
    hostname: str | None = None,
) -> list[RunNode]:
    """The lineage of the runs in the store (of one experiment, or one run uid).

    Five small queries (runs, instances, phases, brain sources, checkpoint
    counts); runs in design order, instances oldest first.

    Args:
        latest_only: keep only the newest instance of each run version.

    Raises:
        StoreError: the store cannot be read.
    """
    moment = now or utcnow()
    host = hostname if hostname is not None else socket.gethostname()
    run_filter: list[Any] = []
    if experiment is not None:
        run_filter.append(t.experiment.c.uid == experiment)
    if run is not None:
        run_filter.append(t.run.c.uid == run)
    with db.read("read the lineage from") as conn:
        runs: dict[int, RunNode] = {}
        for r in conn.execute(
            select(t.run.c.id, t.run.c.uid, t.run.c.content_hash, t.experiment.c.uid.label("exp"), t.run.c.design_point,
                   t.run.c.repetition)
            .outerjoin(t.experiment, t.run.c.experiment_id == t.experiment.c.id).where(*run_filter)
            .order_by(t.run.c.id)
        ):
            runs[r.id] = RunNode(r.uid, r.content_hash, r.exp, r.design_point, r.repetition)
        instances: dict[int, InstanceNode] = {}
        for i in conn.execute(
            select(t.run_instance.c.id, t.run_instance.c.run_id, t.run_instance.c.status, t.run_instance.c.host,
                   t.run_instance.c.pid, t.run_instance.c.start, t.run_instance.c.end, t.run_instance.c.error,
                   t.run_instance.c.heartbeat)
            .join(t.run, t.run_instance.c.run_id == t.run.c.id)
            .outerjoin(t.experiment, t.run.c.experiment_id == t.experiment.c.id).where(*run_filter)
            .order_by(t.run_instance.c.id)
        ):
            node = InstanceNode(i.id, i.status, i.host, i.pid, i.start, i.end, i.error)
            if i.status == "running":
                node.stale = dead_reason(i.host, i.pid, i.heartbeat, i.start, now=moment,
                                      timeout=heartbeat_timeout, hostname=host)
            if i.run_id in runs:
                runs[i.run_id].instances.append(node)
                instances[i.id] = node
        if latest_only:
            for node in runs.values():
                node.instances = node.instances[-1:]
            instances = {i.id: i for n in runs.values() for i in n.instances}
        phases: dict[int, PhaseNode] = {}
        inst_ids = list(instances)
        for chunk in _chunks(inst_ids):
            for p in conn.execute(
                select(t.phase.c.id, t.phase.c.instance_id, t.phase.c.index, t.phase.c.name, t.phase.c.mode,
                       t.phase.c.status)
                .where(t.phase.c.instance_id.in_(chunk)).order_by(t.phase.c.instance_id, t.phase.c.index)
            ):
                node = PhaseNode(p.id, p.index, p.name, p.mode, p.status)
                instances[p.instance_id].phases.append(node)
                phases[p.id] = node
            counts: dict[tuple[int | None, str], int] = {}
            for c in conn.execute(
                select(t.checkpoint.c.phase_id, t.checkpoint.c.agent, func.count())
                .where(t.checkpoint.c.instance_id.in_(chunk))
                .group_by(t.checkpoint.c.phase_id, t.checkpoint.c.agent)
            ):
                counts[(c[0], c[1])] = int(c[2])
            source_ckpt = select(t.checkpoint.c.instance_id).where(
                t.checkpoint.c.id == t.brain_source.c.source_checkpoint_id).scalar_subquery()
            for b in conn.execute(
                select(t.brain_source.c.phase_id, t.brain_source.c.agent, t.brain_source.c.source_kind,
                       t.brain_source.c.source_run_uid, t.brain_source.c.source_phase,
                       t.brain_source.c.source_checkpoint_id, t.brain_source.c.source_path,
                       source_ckpt.label("source_instance"))
                .where(t.brain_source.c.instance_id.in_(chunk)).order_by(t.brain_source.c.id)
            ):
                phase = phases.get(b.phase_id) if b.phase_id is not None else None
                if phase is None:
                    continue
                phase.agents.append(AgentNode(
                    b.agent, b.source_kind, b.source_run_uid, b.source_phase,
                    b.source_checkpoint_id, b.source_instance, b.source_path,
                    counts.pop((b.phase_id, b.agent), 0)))
            # agents that saved checkpoints but have no brain-source row
            for (phase_id, agent), n in counts.items():
                if phase_id in phases:
                    phases[phase_id].agents.append(AgentNode(agent, None, checkpoints=n))
    nodes = list(runs.values())
    nodes.sort(key=lambda n: (n.design_point is None, n.design_point or 0, n.repetition is None,
                              n.repetition or 0, n.uid))
    return nodes


def _chunks(ids: list[int], size: int = 500) -> list[list[int]]:
    return [ids[k:k + size] for k in range(0, len(ids), size)]


def _status_text(status: str, label: str, extra: str = "") -> Any:
    from rich.text import Text

    key = status if status in MARKS else None
    mark, style = MARKS[key] if key else (status, "")
    text = Text(label + " ")
    text.append(f"[{mark}]", style=style or None)
    if extra:
        text.append(" " + extra, style="dim" if status == "finished" else (style or None))
    return text


def _agent_text(agent: AgentNode) -> str:
    kind = agent.kind
    if kind is None:
        source = "source not recorded"
    elif kind == "fresh":
        source = "fresh brain"
    elif kind == "previous_phase":
        source = "kept from the previous phase"
        if agent.source_checkpoint is not None:
            source += f" (restored from checkpoint #{agent.source_checkpoint})"
    elif kind == "replay":
        where = f"run {agent.source_run or '?'}"
        if agent.source_phase:
            where += f", phase {agent.source_phase}"
        source = f"pretrained on the stored steps of {where}"
    elif kind == "checkpoint":
        where = f"run {agent.source_run or '?'}"
        if agent.source_phase:
            where += f", phase {agent.source_phase}"
        if agent.source_checkpoint is not None:
            where += f", checkpoint #{agent.source_checkpoint}"
            if agent.source_instance is not None:
                where += f" of instance {agent.source_instance}"
        elif agent.source_run:
            where += " (checkpoint since deleted)"
        source = f"loaded from {where}"
    elif kind == "path":
        source = f"loaded from file {agent.source_path}"
    else:
        source = kind
    saved = f"; {agent.checkpoints} checkpoint{'s' if agent.checkpoints != 1 else ''}" if agent.checkpoints else ""
    return f"agent {agent.agent} ← {source}{saved}"


def render_lineage(nodes: list[RunNode], title: str = "lineage") -> "Tree":
    """A :class:`rich.tree.Tree`: title > run (uid, design point, version) >
    instance (id, status mark, host, start, error) > phase (index, name,
    mode, status) > agent (source of its brain, checkpoints saved)."""
    from rich.markup import escape
    from rich.tree import Tree

    tree = Tree(escape(title))
    for run in nodes:
        label = f"run {run.uid}"
        if run.design_point is not None:
            label += f" (design point {run.design_point}, repetition {run.repetition})"
        label += f" · version {run.content_hash[:8]}"
        run_status = run.instances[-1].status if run.instances else None
        if run.instances and run.instances[-1].stale:
            run_status = "interrupted"
        if run_status in ("failed", "running", "interrupted"):
            branch = tree.add(_status_text(run_status, label))
        else:
            branch = tree.add(escape(label) if run.instances else _status_text("missing", label, "no instance"))
        for inst in run.instances:
            status = "interrupted" if inst.stale else inst.status
            when = inst.start.strftime("%Y-%m-%d %H:%M:%S")
            extra = inst.error or ""
            if inst.stale:
                extra = f"marked running but {inst.stale}"
            node = branch.add(_status_text(
                status, f"instance {inst.id} on {inst.host} (pid {inst.pid}), started {when} UTC", extra))
            for phase in inst.phases:
                pnode = node.add(_status_text(
                    "interrupted" if inst.stale and phase.status == "running" else phase.status,
                    f"phase {phase.index} {phase.name} ({phase.mode})"))
                for agent in phase.agents:
                    pnode.add(escape(_agent_text(agent)))
    return tree
