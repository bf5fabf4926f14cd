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

The tables are SQLAlchemy Core tables of :data:`xdoe.store.schema._tables.METADATA`
(defined when this module is first imported, by the first use of
``store.sessions``); they are created when first written, also in stores written before
they existed (``CREATE TABLE IF NOT EXISTS``; no migration needed); reading a
store without them finds no trees and creates nothing. Every write is
idempotent where a restarted ``xrun grow`` needs it: adding a node that
exists returns the existing one.
"""

from __future__ import annotations

import datetime as _dt
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import Float, Integer, String, Table, Text, UniqueConstraint, func, insert, select, update
from sqlalchemy import inspect as sa_inspect

from xdoe.store.schema._database import SCHEMA_LOCK
from xdoe.store.schema._tables import METADATA, JsonText, UtcDateTime, _col, _fk, _pk, run, run_instance, utcnow

if TYPE_CHECKING:
    from xdoe.store.schema._database import Database

__all__ = ["HEALTH_STATES", "NodeInfo", "Sessions", "TreeInfo", "session_edge", "session_node", "session_tree"]

#: Health of a session node.
HEALTH_STATES = ("pending", "running", "healthy", "dead", "goal", "failed")

#: A tree of sessions: ``uid`` unique, ``kind`` ``grow`` or ``branch``,
#: ``config`` the session config (grow), ``status`` where growth stands.
session_tree = Table(
    "session_tree", METADATA,
    _pk(),
    _col("uid", String(255), False, unique=True),
    _col("kind", String(16), False),
    _col("config", JsonText),
    _col("status", Text),
    _col("created", UtcDateTime, False, default=utcnow),
    _col("updated", UtcDateTime),
)

#: One session of a tree: a run (uid + content hash of its document).
session_node = Table(
    "session_node", METADATA,
    _pk(),
    _fk("tree_id", "session_tree.id", "CASCADE", nullable=False, index=True),
    _col("run_uid", String(255), False, index=True),
    _col("content_hash", String(64), False),
    _col("file", Text),
    _col("depth", Integer, False),
    _col("batch", Integer, False, default=0),
    _col("direction", Integer),
    _col("health", String(16), False),
    _col("metric", Float),
    _col("reason", Text),
    _fk("instance_id", "run_instance.id", "SET NULL", nullable=True),
    _col("created", UtcDateTime, False, default=utcnow),
    _col("updated", UtcDateTime),
    UniqueConstraint("tree_id", "run_uid", name="uq_session_node_tree_run"),
)

#: Parent -> child: the overrides (a list of ``[key, value]``), the parent's
#: phase and instance the child loads its brains from, the segment
#: (``{"episodes": N}`` or ``{"steps": N}``).
session_edge = Table(
    "session_edge", METADATA,
    _pk(),
    _fk("parent_id", "session_node.id", "CASCADE", nullable=False, index=True),
    _fk("child_id", "session_node.id", "CASCADE", nullable=False, unique=True),
    _col("overrides", JsonText),
    _col("source_phase", String(255)),
    _col("source_instance_id", Integer),
    _col("segment", JsonText),
    _col("created", UtcDateTime, False, default=utcnow),
)

_TABLES = [session_tree, session_node, session_edge]


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


_TREE_COLUMNS = (session_tree.c.id, session_tree.c.uid, session_tree.c.kind, session_tree.c.config,
                 session_tree.c.status, session_tree.c.created)


class Sessions:
    """The session trees of a store, ``store.sessions`` (``xrun grow``,
    ``xrun branch``, the dashboard's tree view). Reading a store without the
    session tables finds nothing and creates nothing; the first write
    creates them.

    Args:
        db: the store's database (shared with the other parts).
    """

    def __init__(self, db: "Database") -> None:
        self._db = db
        self._tables_made = False

    def ensure_tables(self) -> None:
        """Create the session tables when missing (idempotent; serialised by
        an advisory lock on PostgreSQL). Done once per store object."""
        if self._tables_made:
            return
        with self._db.write("create the session tables in") as conn:
            if conn.dialect.name == "postgresql":
                conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({SCHEMA_LOCK})")
            METADATA.create_all(conn, tables=_TABLES, checkfirst=True)
        self._tables_made = True

    def _readable(self) -> bool:
        """Whether the session tables exist (reading never creates them)."""
        if self._tables_made:
            return True
        with self._db.read("read the tables of") as conn:
            return bool(sa_inspect(conn).has_table(session_node.name))

    def get_or_create_tree(self, uid: str, kind: str, config: Any = None,
                           status: str | None = None) -> TreeInfo:
        """The tree ``uid``, created with ``kind`` and ``config`` when missing.
        ``status`` (when given) is written either way."""
        self.ensure_tables()
        st = session_tree.c
        with self._db.write("record a session tree in") as conn:
            row = conn.execute(select(*_TREE_COLUMNS).where(st.uid == uid)).first()
            if row is None:
                now = utcnow()
                key = conn.execute(insert(session_tree).values(uid=uid, kind=kind, config=config, status=status,
                                                               created=now)).inserted_primary_key
                assert key is not None
                return TreeInfo(int(key[0]), uid, kind, config, status, now)
            if status is not None:
                conn.execute(update(session_tree).where(st.id == row.id).values(status=status, updated=utcnow()))
            return TreeInfo(int(row.id), row.uid, row.kind, row.config,
                            status if status is not None else row.status, row.created)

    def set_tree_status(self, uid: str, status: str) -> None:
        """Record where the growth of tree ``uid`` stands (free text)."""
        self.ensure_tables()
        with self._db.write("update a session tree in") as conn:
            conn.execute(update(session_tree).where(session_tree.c.uid == uid).values(status=status, updated=utcnow()))

    def add_session_node(
        self, tree_id: int, run_uid: str, content_hash: str, *, file: str | None = None,
        depth: int = 0, batch: int = 0, direction: int | None = None, parent_id: int | None = None,
        overrides: list[Any] | None = None, source_phase: str | None = None,
        source_instance_id: int | None = None, segment: dict[str, Any] | None = None,
    ) -> int:
        """Add a ``pending`` node (and its edge from ``parent_id``) in one
        transaction; returns its id. A node of the same run uid in the tree is
        returned as it is (a restarted grow re-adds what it planned before)."""
        self.ensure_tables()
        sn = session_node.c
        with self._db.write("record a session node in") as conn:
            found = conn.execute(select(sn.id).where(sn.tree_id == tree_id, sn.run_uid == run_uid)).scalar_one_or_none()
            if found is not None:
                return int(found)
            now = utcnow()
            key = conn.execute(insert(session_node).values(
                tree_id=tree_id, run_uid=run_uid, content_hash=content_hash, file=file, depth=depth, batch=batch,
                direction=direction, health="pending", created=now)).inserted_primary_key
            assert key is not None
            node_id = int(key[0])
            if parent_id is not None:
                conn.execute(insert(session_edge).values(
                    parent_id=parent_id, child_id=node_id, overrides=overrides or [], source_phase=source_phase,
                    source_instance_id=source_instance_id, segment=segment, created=now))
            return node_id

    def set_node_health(self, node_id: int, health: str, *, metric: float | None = None,
                        reason: str | None = None, instance_id: int | None = None) -> None:
        """Record a node's health (one of :data:`HEALTH_STATES`), metric, reason and instance."""
        if health not in HEALTH_STATES:
            raise ValueError(f"health must be one of {', '.join(HEALTH_STATES)}, not {health!r}")
        self.ensure_tables()
        values: dict[str, Any] = {"health": health, "metric": metric, "reason": reason, "updated": utcnow()}
        if instance_id is not None:
            values["instance_id"] = instance_id
        with self._db.write("update a session node in") as conn:
            conn.execute(update(session_node).where(session_node.c.id == node_id).values(**values))

    def session_trees(self) -> list[TreeInfo]:
        """Every tree, oldest first (none when the tables do not exist yet)."""
        if not self._readable():
            return []
        with self._db.read("read session trees from") as conn:
            return [TreeInfo(int(r.id), r.uid, r.kind, r.config, r.status, r.created)
                    for r in conn.execute(select(*_TREE_COLUMNS).order_by(session_tree.c.id))]

    def session_nodes(self, tree: str | None = None) -> list[NodeInfo]:
        """The nodes of one tree (by uid) or of every tree, in creation order,
        with their edges and the status of their run instances."""
        if not self._readable():
            return []
        sn, se, st = session_node.c, session_edge.c, session_tree.c
        stmt = (select(sn.id, st.uid, sn.run_uid, sn.content_hash, sn.file, sn.depth, sn.batch, sn.direction,
                       sn.health, sn.metric, sn.reason, sn.instance_id, run_instance.c.status, se.parent_id,
                       se.overrides, se.source_phase, se.source_instance_id, se.segment, sn.created)
                .select_from(session_node)
                .join(session_tree, sn.tree_id == st.id)
                .outerjoin(run_instance, sn.instance_id == run_instance.c.id)
                .outerjoin(session_edge, se.child_id == sn.id))
        if tree is not None:
            stmt = stmt.where(st.uid == tree)
        with self._db.read("read session nodes from") as conn:
            return [NodeInfo(int(r[0]), *r[1:14], list(r.overrides or []), *r[15:])
                    for r in conn.execute(stmt.order_by(sn.id))]

    def nodes_of_run(self, run_uid: str) -> list[NodeInfo]:
        """The nodes (of any tree) that are the run ``run_uid``, oldest first."""
        if not self._readable():
            return []
        sn, st = session_node.c, session_tree.c
        with self._db.read("read session nodes from") as conn:
            trees = conn.execute(select(st.uid).join(session_node, sn.tree_id == st.id)
                                 .where(sn.run_uid == run_uid).distinct()).scalars().all()
        return [n for t in trees for n in self.session_nodes(t) if n.run_uid == run_uid]

    def count_branch_children(self, run_uid: str) -> int:
        """How many child nodes (in any tree) have a parent node of run ``run_uid``."""
        if not self._readable():
            return 0
        sn = session_node.c
        with self._db.read("read session edges from") as conn:
            return int(conn.execute(
                select(func.count()).select_from(session_edge)
                .join(session_node, session_edge.c.parent_id == sn.id)
                .where(sn.run_uid == run_uid)).scalar_one())

    def run_uids(self) -> set[str]:
        """Every run uid in the store (to pick fresh child uids)."""
        with self._db.read("read runs from") as conn:
            return set(conn.execute(select(run.c.uid).distinct()).scalars())

    def run_document(self, run_uid: str, content_hash: str) -> dict[str, Any] | None:
        """The stored run document of one run version, or ``None``."""
        with self._db.read("read a run document from") as conn:
            text = conn.execute(select(run.c.document).where(
                run.c.uid == run_uid, run.c.content_hash == content_hash)).scalar_one_or_none()
        return None if text is None else json.loads(text)
