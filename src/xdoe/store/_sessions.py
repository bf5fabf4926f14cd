"""Session trees in the store: trees, nodes (one session = one run) and the
edges between them (parent -> child, with the overrides that made the child).

A *tree* (``session_tree``) is one grown tree (``kind="grow"``, with its session
config) or the branches made by hand from one root (``kind="branch"``). A
*node* (``session_node``) is one run of the tree, identified within it by the
run uid; it carries its place (``depth``, ``batch``: the growth round it was
started in, ``direction``: which configuration change made it), its health
(``pending`` until run, then ``running``, ``healthy``, ``dead``, ``goal`` or
``failed``), the metric its health criterion measured, and the run instance
that ran it. An *edge* (``session_edge``) links a child to its parent node and
records the overrides, the parent's phase and instance the child's brains
were loaded from, and the segment length.

The tables are created when first written, also in stores written before
they existed (``CREATE TABLE IF NOT EXISTS``; no migration needed); reading a
store without them finds no trees and creates nothing. Every write is
idempotent where a restarted ``xrun grow`` needs it: adding a node that
exists returns the existing one.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import Float, ForeignKey, Integer, String, Text, UniqueConstraint, select, update
from sqlalchemy.orm import Mapped, mapped_column

from xdoe.store._base import SCHEMA_LOCK
from xdoe.store._models import Base, Run, RunInstance
from xdoe.store._tables import _Id, JsonText, UtcDateTime, utcnow

if TYPE_CHECKING:
    from xdoe.store._base import StoreBase as Store

__all__ = [
    "HEALTH_STATES",
    "SessionTree",
    "SessionNode",
    "SessionEdge",
    "TreeInfo",
    "NodeInfo",
    "ensure_session_tables",
    "get_or_create_tree",
    "add_session_node",
    "set_node_health",
    "session_trees",
    "session_nodes",
    "nodes_of_run",
    "count_branch_children",
    "set_tree_status",
    "run_uids",
    "run_document",
]

#: Health of a session node.
HEALTH_STATES = ("pending", "running", "healthy", "dead", "goal", "failed")


class SessionTree(Base):
    """A tree of sessions: ``uid`` unique, ``kind`` ``grow`` or ``branch``,
    ``config`` the session config (grow), ``status`` where growth stands."""

    __tablename__ = "session_tree"

    id: Mapped[int] = mapped_column(_Id, primary_key=True, autoincrement=True)
    uid: Mapped[str] = mapped_column(String(255), unique=True)
    kind: Mapped[str] = mapped_column(String(16))
    config: Mapped[Any | None] = mapped_column(JsonText)
    status: Mapped[str | None] = mapped_column(Text)
    created: Mapped[_dt.datetime] = mapped_column(UtcDateTime, default=utcnow)
    updated: Mapped[_dt.datetime | None] = mapped_column(UtcDateTime)


class SessionNode(Base):
    """One session of a tree: a run (uid + content hash of its document)."""

    __tablename__ = "session_node"
    __table_args__ = (UniqueConstraint("tree_id", "run_uid", name="uq_session_node_tree_run"),)

    id: Mapped[int] = mapped_column(_Id, primary_key=True, autoincrement=True)
    tree_id: Mapped[int] = mapped_column(ForeignKey("session_tree.id", ondelete="CASCADE"), index=True)
    run_uid: Mapped[str] = mapped_column(String(255), index=True)
    content_hash: Mapped[str] = mapped_column(String(64))
    file: Mapped[str | None] = mapped_column(Text)
    depth: Mapped[int] = mapped_column(Integer)
    batch: Mapped[int] = mapped_column(Integer, default=0)
    direction: Mapped[int | None] = mapped_column(Integer)
    health: Mapped[str] = mapped_column(String(16))
    metric: Mapped[float | None] = mapped_column(Float)
    reason: Mapped[str | None] = mapped_column(Text)
    instance_id: Mapped[int | None] = mapped_column(ForeignKey("run_instance.id", ondelete="SET NULL"))
    created: Mapped[_dt.datetime] = mapped_column(UtcDateTime, default=utcnow)
    updated: Mapped[_dt.datetime | None] = mapped_column(UtcDateTime)


class SessionEdge(Base):
    """Parent -> child: the overrides (a list of ``[key, value]``), the
    parent's phase and instance the child loads its brains from, the segment
    (``{"episodes": N}`` or ``{"steps": N}``)."""

    __tablename__ = "session_edge"

    id: Mapped[int] = mapped_column(_Id, primary_key=True, autoincrement=True)
    parent_id: Mapped[int] = mapped_column(ForeignKey("session_node.id", ondelete="CASCADE"), index=True)
    child_id: Mapped[int] = mapped_column(ForeignKey("session_node.id", ondelete="CASCADE"), unique=True)
    overrides: Mapped[Any | None] = mapped_column(JsonText)
    source_phase: Mapped[str | None] = mapped_column(String(255))
    source_instance_id: Mapped[int | None] = mapped_column(Integer)
    segment: Mapped[Any | None] = mapped_column(JsonText)
    created: Mapped[_dt.datetime] = mapped_column(UtcDateTime, default=utcnow)


_TABLES = [SessionTree.__table__, SessionNode.__table__, SessionEdge.__table__]


@dataclass(frozen=True)
class TreeInfo:
    id: int
    uid: str
    kind: str
    config: Any
    status: str | None
    created: _dt.datetime


@dataclass(frozen=True)
class NodeInfo:
    """A node with its edge from the parent (``parent_id`` ``None`` for a
    root) and, when it ran, the status of its run instance."""

    id: int
    tree: str
    run_uid: str
    content_hash: str
    file: str | None
    depth: int
    batch: int
    direction: int | None
    health: str
    metric: float | None
    reason: str | None
    instance_id: int | None
    instance_status: str | None
    parent_id: int | None
    overrides: list[Any]
    source_phase: str | None
    source_instance_id: int | None
    segment: dict[str, Any] | None
    created: _dt.datetime


def ensure_session_tables(store: "Store") -> None:
    """Create the session tables when missing (idempotent; serialised by
    an advisory lock on PostgreSQL). Done once per :class:`Store` object."""
    if getattr(store, "_session_tables", False):
        return
    with store._write("create the session tables in") as session:
        conn = session.connection()
        if conn.dialect.name == "postgresql":
            conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({SCHEMA_LOCK})")
        Base.metadata.create_all(conn, tables=_TABLES, checkfirst=True)
    store._session_tables = True  # type: ignore[attr-defined]


def _readable(store: "Store") -> bool:
    """Whether the session tables exist (reading never creates them)."""
    if getattr(store, "_session_tables", False):
        return True
    from sqlalchemy import inspect as sa_inspect

    with store._read("read the tables of") as session:
        return bool(sa_inspect(session.connection()).has_table(SessionNode.__tablename__))


def _tree_info(row: SessionTree) -> TreeInfo:
    return TreeInfo(row.id, row.uid, row.kind, row.config, row.status, row.created)


def get_or_create_tree(store: "Store", uid: str, kind: str, config: Any = None,
                       status: str | None = None) -> TreeInfo:
    """The tree ``uid``, created with ``kind`` and ``config`` when missing.
    ``status`` (when given) is written either way."""
    ensure_session_tables(store)
    with store._write("record a session tree in") as session:
        row = session.execute(select(SessionTree).where(SessionTree.uid == uid)).scalar_one_or_none()
        if row is None:
            row = SessionTree(uid=uid, kind=kind, config=config, status=status, created=utcnow())
            session.add(row)
            session.flush()
        elif status is not None:
            row.status = status
            row.updated = utcnow()
        return _tree_info(row)


def set_tree_status(store: "Store", uid: str, status: str) -> None:
    """Record where the growth of tree ``uid`` stands (free text)."""
    ensure_session_tables(store)
    with store._write("update a session tree in") as session:
        session.execute(update(SessionTree).where(SessionTree.uid == uid)
                        .values(status=status, updated=utcnow()))


def add_session_node(
    store: "Store", tree_id: int, run_uid: str, content_hash: str, *, file: str | None = None,
    depth: int = 0, batch: int = 0, direction: int | None = None, parent_id: int | None = None,
    overrides: list[Any] | None = None, source_phase: str | None = None,
    source_instance_id: int | None = None, segment: dict[str, Any] | None = None,
) -> int:
    """Add a ``pending`` node (and its edge from ``parent_id``) in one
    transaction; returns its id. A node of the same run uid in the tree is
    returned as it is (a restarted grow re-adds what it planned before)."""
    ensure_session_tables(store)
    with store._write("record a session node in") as session:
        found = session.execute(select(SessionNode.id).where(
            SessionNode.tree_id == tree_id, SessionNode.run_uid == run_uid)).scalar_one_or_none()
        if found is not None:
            return int(found)
        node = SessionNode(tree_id=tree_id, run_uid=run_uid, content_hash=content_hash, file=file,
                           depth=depth, batch=batch, direction=direction, health="pending",
                           created=utcnow())
        session.add(node)
        session.flush()
        if parent_id is not None:
            session.add(SessionEdge(parent_id=parent_id, child_id=node.id, overrides=overrides or [],
                                    source_phase=source_phase, source_instance_id=source_instance_id,
                                    segment=segment, created=utcnow()))
        return int(node.id)


def set_node_health(store: "Store", node_id: int, health: str, *, metric: float | None = None,
                    reason: str | None = None, instance_id: int | None = None) -> None:
    """Record a node's health (one of :data:`HEALTH_STATES`), metric, reason and instance."""
    if health not in HEALTH_STATES:
        raise ValueError(f"health must be one of {', '.join(HEALTH_STATES)}, not {health!r}")
    ensure_session_tables(store)
    values: dict[str, Any] = {"health": health, "metric": metric, "reason": reason, "updated": utcnow()}
    if instance_id is not None:
        values["instance_id"] = instance_id
    with store._write("update a session node in") as session:
        session.execute(update(SessionNode).where(SessionNode.id == node_id).values(**values))


def session_trees(store: "Store") -> list[TreeInfo]:
    """Every tree, oldest first (none when the tables do not exist yet)."""
    if not _readable(store):
        return []
    with store._read("read session trees from") as session:
        return [_tree_info(r) for r in session.execute(
            select(SessionTree).order_by(SessionTree.id)).scalars()]


def session_nodes(store: "Store", tree: str | None = None) -> list[NodeInfo]:
    """The nodes of one tree (by uid) or of every tree, in creation order,
    with their edges and the status of their run instances."""
    if not _readable(store):
        return []
    stmt = (select(SessionNode, SessionTree.uid, RunInstance.status, SessionEdge)
            .join(SessionTree, SessionNode.tree_id == SessionTree.id)
            .outerjoin(RunInstance, SessionNode.instance_id == RunInstance.id)
            .outerjoin(SessionEdge, SessionEdge.child_id == SessionNode.id))
    if tree is not None:
        stmt = stmt.where(SessionTree.uid == tree)
    out: list[NodeInfo] = []
    with store._read("read session nodes from") as session:
        for node, tree_uid, status, edge in session.execute(stmt.order_by(SessionNode.id)):
            out.append(NodeInfo(
                node.id, tree_uid, node.run_uid, node.content_hash, node.file, node.depth,
                node.batch, node.direction, node.health, node.metric, node.reason, node.instance_id,
                status, None if edge is None else edge.parent_id,
                [] if edge is None else list(edge.overrides or []),
                None if edge is None else edge.source_phase,
                None if edge is None else edge.source_instance_id,
                None if edge is None else edge.segment, node.created))
    return out


def nodes_of_run(store: "Store", run_uid: str) -> list[NodeInfo]:
    """The nodes (of any tree) that are the run ``run_uid``, oldest first."""
    if not _readable(store):
        return []
    with store._read("read session nodes from") as session:
        trees = session.execute(select(SessionTree.uid).join(
            SessionNode, SessionNode.tree_id == SessionTree.id).where(
            SessionNode.run_uid == run_uid).distinct()).scalars().all()
    return [n for t in trees for n in session_nodes(store, t) if n.run_uid == run_uid]


def count_branch_children(store: "Store", run_uid: str) -> int:
    """How many child nodes (in any tree) have a parent node of run ``run_uid``."""
    from sqlalchemy import func

    if not _readable(store):
        return 0
    with store._read("read session edges from") as session:
        return int(session.execute(
            select(func.count()).select_from(SessionEdge)
            .join(SessionNode, SessionEdge.parent_id == SessionNode.id)
            .where(SessionNode.run_uid == run_uid)).scalar_one())


def run_uids(store: "Store") -> set[str]:
    """Every run uid in the store (to pick fresh child uids)."""
    with store._read("read runs from") as session:
        return set(session.execute(select(Run.uid).distinct()).scalars())


def run_document(store: "Store", run_uid: str, content_hash: str) -> dict[str, Any] | None:
    """The stored run document of one run version, or ``None``."""
    import json

    with store._read("read a run document from") as session:
        text = session.execute(select(Run.document).where(
            Run.uid == run_uid, Run.content_hash == content_hash)).scalar_one_or_none()
    return None if text is None else json.loads(text)
