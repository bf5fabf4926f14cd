"""Graphs for the tree page. A session tree (:mod:`xdoe.tree`, the store's
``session_*`` tables): one node per session with its health and metric, an
edge from parent to child labelled with the overrides, laid out top-down
(children side by side under their parent). Else the lineage of a campaign: one node per run
(its status), an edge to it from every run whose brain it loaded or
replayed (``brain_source`` rows, :meth:`store.views.lineage_nodes <xdoe.store.views._views.Views.lineage_nodes>`),
laid out in layers by depth (longest path from a root), wrapped into columns
of at most :data:`COLUMN` nodes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from xdoe.store import Store

__all__ = ["lineage_graph", "session_graph", "COLUMN"]

COLUMN = 20


def lineage_graph(store: "Store", experiment: str | None, *, limit: int = 400,
                  heartbeat_timeout: float = 120.0) -> dict[str, Any]:
    """``{"nodes": [{"id", "label", "status", "x", "y", "phases", "sources"}],
    "edges": [[from, to, kind]], "total": runs, "shown": nodes}``; the first
    ``limit`` runs in design order are shown."""

    shown, total = store.views.lineage_nodes(experiment, limit=limit, heartbeat_timeout=heartbeat_timeout)
    uids = {n["uid"] for n in shown}
    edges: list[list[str]] = []
    parents: dict[str, set[str]] = {u: set() for u in uids}
    info: dict[str, dict[str, Any]] = {}
    for n in shown:
        phases = [f"{i} {name} ({mode}, {status})" for i, name, mode, status in n["phases"]]
        sources = []
        for agent, kind, source in n["sources"]:
            if kind in ("checkpoint", "replay") and source:
                sources.append(f"{agent} ← {source} ({kind})")
                if source in uids and source != n["uid"] and source not in parents[n["uid"]]:
                    edges.append([source, n["uid"], kind])
                    parents[n["uid"]].add(source)
        point = "" if n["design_point"] is None else f"point {n['design_point']}, rep {n['repetition']}"
        info[n["uid"]] = {"id": n["uid"], "label": n["uid"], "status": n["status"], "detail": point,
                          "phases": phases, "sources": sources}
    depth: dict[str, int] = {}

    def level(uid: str, seen: frozenset[str] = frozenset()) -> int:
        if uid not in depth:
            ups = [p for p in parents[uid] if p not in seen]
            depth[uid] = 1 + max((level(p, seen | {uid}) for p in ups), default=-1)
        return depth[uid]

    layers: dict[int, list[str]] = {}
    for n in shown:
        layers.setdefault(level(n["uid"]), []).append(n["uid"])
    x = 0
    for d in sorted(layers):
        members = layers[d]
        for i, uid in enumerate(members):
            info[uid]["x"] = x + i // COLUMN
            info[uid]["y"] = -(i % COLUMN)
            info[uid]["depth"] = d
        x += (len(members) - 1) // COLUMN + 2
    return {"kind": "lineage", "nodes": list(info.values()), "edges": edges, "total": total,
            "shown": len(shown)}


def session_graph(store: "Store", tree: str) -> dict[str, Any]:
    """``{"kind": "sessions", "nodes": [{"id" (run uid), "label", "health", "metric",
    "reason", "edge", "x", "y"}], "edges": [[parent uid, child uid, label]], "total", "shown"}``
    for session tree ``tree`` (:meth:`store.sessions.session_nodes <xdoe.store.sessions._sessions.Sessions.session_nodes>`); ``x`` is the
    leaf order (a parent centred over its children), ``y`` is minus the depth."""
    from xdoe.tree import edge_label, node_health

    nodes = store.sessions.session_nodes(tree)
    uid = {n.id: n.run_uid for n in nodes}
    children: dict[int | None, list[Any]] = {}
    for n in nodes:
        children.setdefault(n.parent_id if n.parent_id in uid else None, []).append(n)
    info: dict[str, dict[str, Any]] = {}
    next_leaf = 0

    def place(node: Any, depth: int) -> float:
        nonlocal next_leaf
        xs = [place(c, depth + 1) for c in children.get(node.id, [])]
        if xs:
            x = (min(xs) + max(xs)) / 2
        else:
            x, next_leaf = float(next_leaf), next_leaf + 1
        info[node.run_uid] = {"id": node.run_uid, "label": node.run_uid, "health": node_health(node),
                              "metric": node.metric, "reason": node.reason or "",
                              "edge": edge_label(node), "x": x, "y": -depth}
        return x

    for root in children.get(None, []):
        place(root, 0)
    edges = [[uid[n.parent_id], n.run_uid, edge_label(n)] for n in nodes if n.parent_id in uid]
    return {"kind": "sessions", "nodes": [info[n.run_uid] for n in nodes if n.run_uid in info],
            "edges": edges, "total": len(nodes), "shown": len(info)}
