"""Which runs are the design: a run is a member of its experiment's design
unless it is a *session* of a session tree made from another run (a child
node: ``xrun branch``, ``xrun grow``, :func:`xdoe.tree.attach`).

The fact used is the store's session tables: a node with an edge from a
parent. It holds for every child whatever its document says, so children
recorded before their documents stopped copying the parent's
``experiment_uid`` and ``design_point`` (a branch of ``taxi-study-0000`` used
to claim design point 0 of ``taxi-study``) are left out of the design too.
Children written now also say so themselves: their documents carry a
``session`` record and no ``experiment_uid`` or ``design_point``
(:mod:`xdoe.tree._branch`). A tree's root is the run it grew from: a run of
the design stays one.

:func:`branch_runs` names the children of the trees rooted in an
experiment's runs, for comparing them with the design explicitly
(``--include-branches``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import select

from xdoe.store.schema._tables import experiment as experiment_table, run

if TYPE_CHECKING:
    from xdoe.store.schema._database import Database

__all__ = ["BranchRun", "session_child_uids", "branch_runs", "branch_label"]


@dataclass(frozen=True)
class BranchRun:
    """A session of a tree: its run uid, ``tree``, ``parent`` run uid, the
    ``root`` run of its tree, the overrides of its edge and ``label``
    (:func:`branch_label`)."""

    run: str
    tree: str
    parent: str
    root: str
    overrides: list[Any]
    label: str


def branch_label(parent: str, overrides: list[Any]) -> str:
    """``taxi-study-0000 + brain.params.alpha=0.25``: the parent and what the
    child set (each override's key and the value it set; ``continued`` when
    it changed nothing but the segment)."""
    parts = []
    for o in overrides or []:
        if isinstance(o, dict):
            value = o.get("result", o.get("value"))
            parts.append(f"{o.get('key')}={value}")
        else:
            parts.append(str(o))
    return f"{parent} + {', '.join(parts)}" if parts else f"{parent} continued"


def _children(db: "Database") -> list[BranchRun]:
    from xdoe.store.sessions._sessions import Sessions

    nodes = Sessions(db).session_nodes()  # none (and nothing created) when the tables do not exist
    by_id = {n.id: n for n in nodes}
    out = []
    for n in nodes:
        if n.parent_id is None or n.parent_id not in by_id:
            continue
        root = by_id[n.parent_id]
        while root.parent_id is not None and root.parent_id in by_id:
            root = by_id[root.parent_id]
        parent = by_id[n.parent_id].run_uid
        out.append(BranchRun(n.run_uid, n.tree, parent, root.run_uid, list(n.overrides),
                             branch_label(parent, n.overrides)))
    return out


def session_child_uids(db: "Database") -> set[str]:
    """The run uids that are sessions of a tree (child nodes), never members
    of a design.

    Raises:
        StoreError: the store cannot be read.
    """
    return {c.run for c in _children(db)}


def branch_runs(db: "Database", experiment: str | None = None) -> dict[str, BranchRun]:
    """Run uid -> :class:`BranchRun` of every session of the trees whose root
    is a run of ``experiment`` (every tree's sessions when ``None``).

    Raises:
        StoreError: the store cannot be read.
    """
    children = _children(db)
    if experiment is None or not children:
        return {c.run: c for c in children}
    roots = {c.root for c in children}
    r, x = run.c, experiment_table.c
    with db.read("read runs from") as conn:
        mine = set(conn.execute(
            select(r.uid).join(experiment_table, r.experiment_id == x.id)
            .where(x.uid == experiment, r.uid.in_(sorted(roots)))).scalars())
    return {c.run: c for c in children if c.root in mine}
