"""Showing session trees: as a :class:`rich.tree.Tree` (text), as JSON, as
Graphviz DOT; the whole tree or one path from the root to a node.

Each node shows its run uid, health (healthy / dead / goal / running /
pending / failed), the metric its criterion measured and why; each edge the
overrides that made the child (``alpha=x0.5 (→ 0.25)``), or ``continue`` when
it changed nothing but the segment.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Sequence

from xdoe.tree._overrides import describe_overrides

if TYPE_CHECKING:
    from rich.tree import Tree

    from xdoe.store import NodeInfo, TreeInfo

__all__ = ["HEALTH_STYLES", "edge_label", "node_health", "path_to", "render_text", "render_json", "render_dot"]

#: Health -> (mark, rich style, DOT colour).
HEALTH_STYLES = {
    "healthy": ("✓ healthy", "green", "palegreen"),
    "dead": ("✗ dead", "red", "lightpink"),
    "goal": ("★ goal", "bold green", "gold"),
    "running": ("● running", "yellow", "lightyellow"),
    "pending": ("… pending", "dim", "white"),
    "failed": ("✗ failed", "bold red", "tomato"),
    "interrupted": ("⚠ interrupted", "magenta", "plum"),
}


def node_health(node: "NodeInfo") -> str:
    """The health shown: the stored one, except a session marked running
    whose run instance ended without being judged (killed): ``interrupted``."""
    if node.health == "running" and node.instance_status in ("interrupted", "failed"):
        return "interrupted"
    return node.health


def path_to(nodes: Sequence["NodeInfo"], target: "NodeInfo") -> list["NodeInfo"]:
    """Root-first path from the root of ``target``'s tree to ``target``."""
    by_id = {n.id: n for n in nodes}
    path = [target]
    while path[-1].parent_id is not None and path[-1].parent_id in by_id:
        path.append(by_id[path[-1].parent_id])
    return path[::-1]


def _edge(node: "NodeInfo") -> str:
    if node.parent_id is None:
        return ""
    text = describe_overrides(node.overrides) or "continue"
    if node.segment:
        text += " · " + ", ".join(f"{k} {v}" for k, v in node.segment.items())
    if node.source_phase:
        text += f" · from phase {node.source_phase}"
    return text


#: What an edge into ``node`` shows: its overrides, segment and source phase ("" for a root).
edge_label = _edge


def _metric(node: "NodeInfo") -> str:
    return "-" if node.metric is None else f"{node.metric:.4g}"


def _label(node: "NodeInfo") -> Any:
    from rich.text import Text

    health = node_health(node)
    mark, style, _ = HEALTH_STYLES.get(health, (health, "", "white"))
    text = Text()
    edge = _edge(node)
    if edge:
        text.append(f"[{edge}] ", style="cyan")
    text.append(node.run_uid + " ")
    text.append(mark, style=style)
    text.append(f"  metric {_metric(node)}")
    if node.reason:
        text.append(f" · {node.reason}", style="dim")
    return text


def render_text(trees: Sequence["TreeInfo"], nodes: Sequence["NodeInfo"], title: str = "session trees") -> "Tree":
    """One :class:`rich.tree.Tree` holding every tree: tree > root > children
    (in creation order), each node labelled ``[overrides] uid mark metric · reason``."""
    from rich.markup import escape
    from rich.tree import Tree

    top = Tree(escape(title))
    children: dict[int | None, list[NodeInfo]] = {}
    for n in nodes:
        children.setdefault(n.parent_id, []).append(n)

    def add(branch: Any, node: "NodeInfo") -> None:
        sub = branch.add(_label(node))
        for child in children.get(node.id, []):
            add(sub, child)

    for tree in trees:
        own = [n for n in nodes if n.tree == tree.uid]
        if not own:
            continue
        status = f" · {tree.status}" if tree.status else ""
        branch = top.add(escape(f"tree {tree.uid} ({tree.kind}, {len(own)} sessions{status})"))
        for root in (n for n in own if n.parent_id is None):
            add(branch, root)
    return top


def _node_json(node: "NodeInfo") -> dict[str, Any]:
    return {"id": node.id, "run": node.run_uid, "parent": node.parent_id, "depth": node.depth,
            "health": node_health(node), "metric": node.metric, "reason": node.reason,
            "direction": node.direction, "overrides": node.overrides, "segment": node.segment,
            "source_phase": node.source_phase, "instance": node.instance_id, "file": node.file}


def render_json(trees: Sequence["TreeInfo"], nodes: Sequence["NodeInfo"]) -> str:
    """``{"trees": [{uid, kind, status, nodes: [...]}]}`` as indented JSON."""
    out = [{"uid": t.uid, "kind": t.kind, "status": t.status,
            "nodes": [_node_json(n) for n in nodes if n.tree == t.uid]} for t in trees]
    return json.dumps({"trees": [t for t in out if t["nodes"]]}, indent=2, ensure_ascii=False)


def _dot_text(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def render_dot(trees: Sequence["TreeInfo"], nodes: Sequence["NodeInfo"]) -> str:
    """A Graphviz ``digraph`` (one cluster per tree): nodes filled by health,
    edges labelled with their overrides (``dot -Tpng``)."""
    lines = ["digraph sessions {", "  rankdir=TB;", '  node [shape=box, style="rounded,filled"];']
    for i, tree in enumerate(trees):
        own = [n for n in nodes if n.tree == tree.uid]
        if not own:
            continue
        lines.append(f"  subgraph cluster_{i} {{")
        lines.append(f'    label="{_dot_text(tree.uid)}";')
        for n in own:
            health = node_health(n)
            colour = HEALTH_STYLES.get(health, ("", "", "white"))[2]
            label = _dot_text(n.run_uid) + "\\n" + _dot_text(f"{health} · metric {_metric(n)}")
            lines.append(f'    n{n.id} [label="{label}", fillcolor="{colour}"];')
        for n in own:
            if n.parent_id is not None:
                lines.append(f'    n{n.parent_id} -> n{n.id} [label="{_dot_text(_edge(n))}"];')
        lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"
