"""The session trees of :class:`xdoe.store.Store` (``xrun grow``, ``xrun
branch``, the dashboard's tree view): trees, nodes and the edges between
them.

Each method runs the query of :mod:`xdoe.store._sessions` (imported on first
use, with its tables: a run loads neither), which describes the tables.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from xdoe.store._base import StoreBase

if TYPE_CHECKING:
    from xdoe.store._sessions import NodeInfo, TreeInfo

__all__ = ["SessionRows"]


class SessionRows(StoreBase):
    """Session-tree queries of a store. Reading a store without the session
    tables finds nothing and creates nothing; the first write creates them."""

    def get_or_create_tree(self, uid: str, kind: str, config: Any = None,
                           status: str | None = None) -> "TreeInfo":
        """The tree ``uid``, created with ``kind`` (``grow`` or ``branch``) and
        ``config`` when missing; ``status`` (when given) is written either way."""
        from xdoe.store._sessions import get_or_create_tree

        return get_or_create_tree(self, uid, kind, config, status)

    def set_tree_status(self, uid: str, status: str) -> None:
        """Record where the growth of tree ``uid`` stands (free text)."""
        from xdoe.store._sessions import set_tree_status

        set_tree_status(self, uid, status)

    def add_session_node(self, tree_id: int, run_uid: str, content_hash: str, *, file: str | None = None,
                         depth: int = 0, batch: int = 0, direction: int | None = None,
                         parent_id: int | None = None, overrides: list[Any] | None = None,
                         source_phase: str | None = None, source_instance_id: int | None = None,
                         segment: dict[str, Any] | None = None) -> int:
        """Add a ``pending`` node (and its edge from ``parent_id``) in one
        transaction; returns its id. A node of the same run uid in the tree is
        returned as it is (a restarted grow re-adds what it planned before)."""
        from xdoe.store._sessions import add_session_node

        return add_session_node(self, tree_id, run_uid, content_hash, file=file, depth=depth, batch=batch,
                                direction=direction, parent_id=parent_id, overrides=overrides,
                                source_phase=source_phase, source_instance_id=source_instance_id,
                                segment=segment)

    def set_node_health(self, node_id: int, health: str, *, metric: float | None = None,
                        reason: str | None = None, instance_id: int | None = None) -> None:
        """Record a node's health (one of :data:`HEALTH_STATES
        <xdoe.store._sessions.HEALTH_STATES>`), metric, reason and instance.

        Raises:
            ValueError: ``health`` is not one of them.
        """
        from xdoe.store._sessions import set_node_health

        set_node_health(self, node_id, health, metric=metric, reason=reason, instance_id=instance_id)

    def session_trees(self) -> list["TreeInfo"]:
        """Every tree, oldest first (none when the tables do not exist yet)."""
        from xdoe.store._sessions import session_trees

        return session_trees(self)

    def session_nodes(self, tree: str | None = None) -> list["NodeInfo"]:
        """The nodes of one tree (by uid) or of every tree, in creation order,
        with their edges and the status of their run instances."""
        from xdoe.store._sessions import session_nodes

        return session_nodes(self, tree)

    def nodes_of_run(self, run_uid: str) -> list["NodeInfo"]:
        """The nodes (of any tree) that are the run ``run_uid``, oldest first."""
        from xdoe.store._sessions import nodes_of_run

        return nodes_of_run(self, run_uid)

    def count_branch_children(self, run_uid: str) -> int:
        """How many child nodes (in any tree) have a parent node of run ``run_uid``."""
        from xdoe.store._sessions import count_branch_children

        return count_branch_children(self, run_uid)

    def run_uids(self) -> set[str]:
        """Every run uid in the store (to pick fresh child uids)."""
        from xdoe.store._sessions import run_uids

        return run_uids(self)

    def run_document(self, run_uid: str, content_hash: str) -> dict[str, Any] | None:
        """The stored run document of one run version, or ``None``."""
        from xdoe.store._sessions import run_document

        return run_document(self, run_uid, content_hash)
