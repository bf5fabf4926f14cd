"""Attaching a :class:`~xdoe.TrainingSession` to a node of a session tree, so
training loops that live elsewhere grow trees too::

    from xdoe.tree import attach

    session = TrainingSession(brain, store=url, run="cartpole-b02")
    attach(session, "cartpole-b01", overrides={"learning_rate": 0.0005})  # loads the parent's brain
    with session:
        ...                                  # train as usual
    # on finish the node is judged against its parent (ImprovementCriterion)

The session's run becomes a child node of the parent's node (in the
parent's tree, or a new ``branch`` tree named after the parent), the edge
records ``overrides`` (what your loop changed), and when the session
finishes its health and metric are recorded like those of ``xrun branch``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping

from xdoe.errors import RunError
from xdoe.tree._branch import judge, newest_checkpoints, resolve_source, tree_for
from xdoe.tree._criteria import HealthCriterion, ImprovementCriterion

if TYPE_CHECKING:
    from xdoe.session import TrainingSession

__all__ = ["Attachment", "attach", "record_finish"]


@dataclass
class Attachment:
    """A session's place in a tree: node id, tree uid, the parent's metric
    and the criterion that judges the session when it finishes."""

    node_id: int
    tree: str
    parent_metric: float | None
    criterion: HealthCriterion


def attach(session: "TrainingSession", parent: str | int, *, overrides: Mapping[str, Any] | None = None,
           load: bool = True, criterion: HealthCriterion | None = None) -> Attachment:
    """Make ``session`` a child of the finished session ``parent`` (a run
    instance id, a run uid or ``run-uid:phase``) and, with ``load``, load
    the parent's final checkpoint of the session's agent into its brain.

    Raises:
        InputError: no such parent session (close matches listed).
        RunError: ``load`` and the parent saved no checkpoint of the agent.
    """
    from xdoe.execution import load_brain

    store = session.store
    source = resolve_source(store, parent)
    if load:
        newest = newest_checkpoints(store, source)
        if session.agent not in newest:
            raise RunError(f"parent {parent}: no checkpoint of agent {session.agent!r} "
                           f"(agents with checkpoints: {', '.join(sorted(newest)) or 'none'})")
        load_brain(session.brain, newest[session.agent])
    tree, parent_id = tree_for(store, source)
    nodes = {n.id: n for n in store.sessions.session_nodes(tree.uid)}
    applied = [{"key": str(k), "value": v, "paths": [], "result": v} for k, v in (overrides or {}).items()]
    node_id = store.sessions.add_session_node(tree.id, session.run_uid, session.recorder.content_hash,
                                     depth=nodes[parent_id].depth + 1, parent_id=parent_id,
                                     overrides=applied, source_phase=source.phase,
                                     source_instance_id=source.instance_id)
    attachment = Attachment(node_id, tree.uid, nodes[parent_id].metric, criterion or ImprovementCriterion())
    session.tree_node = attachment  # type: ignore[attr-defined]
    session.finish_hooks.append(record_finish)
    return attachment


def record_finish(session: "TrainingSession") -> None:
    """Judge an attached session that just finished and record its health."""
    from xdoe.execution import RunResult

    attachment: Attachment | None = getattr(session, "tree_node", None)
    if attachment is None or session.status is None:
        return
    result = RunResult(uid=session.run_uid, status=session.status, instance_id=session.instance_id)
    health, assessment = judge(session.store, result, attachment.criterion, attachment.parent_metric)
    session.store.sessions.set_node_health(attachment.node_id, health, metric=assessment.metric,
                                  reason=assessment.reason, instance_id=session.instance_id)
