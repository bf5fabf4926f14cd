"""The lineage of a campaign as a graph for the browser: one node per run
(its status), an edge to it from every run whose brain it loaded or
replayed (``brain_source`` rows, :func:`xdoe.store._dashboard.lineage_nodes`),
laid out in layers by depth (longest path from a root), wrapped into columns
of at most :data:`COLUMN` nodes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from xdoe.store import Store

__all__ = ["lineage_graph", "COLUMN"]

COLUMN = 20


def lineage_graph(store: "Store", experiment: str | None, *, limit: int = 400,
                  heartbeat_timeout: float = 120.0) -> dict[str, Any]:
    """``{"nodes": [{"id", "label", "status", "x", "y", "phases", "sources"}],
    "edges": [[from, to, kind]], "total": runs, "shown": nodes}``; the first
    ``limit`` runs in design order are shown."""
    from xdoe.store._runview import lineage_nodes

    shown, total = lineage_nodes(store, experiment, limit=limit, heartbeat_timeout=heartbeat_timeout)
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
    return {"nodes": list(info.values()), "edges": edges, "total": total, "shown": len(shown)}
