"""Conformance of the session-tree tables (trees, nodes, edges) on every backend."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import inspect

from xdoe.store import Store, session_edge, session_node, session_tree


def test_trees_nodes_edges_round_trip(store: Store, make_document, tmp_path: Path) -> None:
    tree = store.sessions.get_or_create_tree("t", "grow", {"directions": [{"a": "x0.5"}]})
    again = store.sessions.get_or_create_tree("t", "branch")
    assert again.id == tree.id and again.kind == "grow" and again.config == {"directions": [{"a": "x0.5"}]}
    root = store.sessions.add_session_node(tree.id, "r", "h0", file="run-r.yaml")
    assert store.sessions.add_session_node(tree.id, "r", "h0") == root  # idempotent: a restart re-adds it
    overrides = [{"key": "alpha", "value": "x0.5", "paths": ["a.alpha"], "result": 0.25}]
    child = store.sessions.add_session_node(tree.id, "r_b01", "h1", depth=1, batch=1, direction=1,
                                   parent_id=root, overrides=overrides, source_phase="training",
                                   source_instance_id=3, segment={"episodes": 300})
    # a finished instance to point at
    with store.recorder(make_document("r_b01"), results_root=tmp_path / "results") as rec:
        pass
    store.sessions.set_node_health(root, "healthy", metric=-200.0, reason="root")
    store.sessions.set_node_health(child, "dead", metric=-210.5, reason="no rise", instance_id=rec.instance_id)
    store.sessions.set_tree_status("t", "exhausted")
    nodes = store.sessions.session_nodes("t")
    assert [(n.run_uid, n.health, n.metric, n.parent_id) for n in nodes] == [
        ("r", "healthy", -200.0, None), ("r_b01", "dead", -210.5, root)]
    assert nodes[1].overrides == overrides and nodes[1].segment == {"episodes": 300}
    assert nodes[1].source_phase == "training" and nodes[1].source_instance_id == 3
    assert nodes[1].instance_status == "finished" and nodes[1].direction == 1
    assert [t.status for t in store.sessions.session_trees()] == ["exhausted"]
    assert store.sessions.count_branch_children("r") == 1 and store.sessions.count_branch_children("r_b01") == 0
    assert [n.id for n in store.sessions.nodes_of_run("r_b01")] == [child]
    with pytest.raises(ValueError, match="health must be one of"):
        store.sessions.set_node_health(root, "zombie")


def test_tables_are_added_to_an_existing_store(store_url: str) -> None:
    with Store(store_url) as old:  # a store written before session trees existed
        for table in (session_edge, session_node, session_tree):
            table.drop(old.database.engine, checkfirst=True)
        assert "session_node" not in inspect(old.database.engine).get_table_names()
    with Store(store_url) as store:
        store.sessions.ensure_tables()
        store.sessions.ensure_tables()  # idempotent
        assert {"session_tree", "session_node", "session_edge"} <= set(inspect(store.database.engine).get_table_names())
        assert store.sessions.session_trees() == []
    with Store(store_url) as again:  # a second process opening it: nothing to create
        store_tree = again.sessions.get_or_create_tree("x", "branch")
        assert again.sessions.session_trees()[0].id == store_tree.id
