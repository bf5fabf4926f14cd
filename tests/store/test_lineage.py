"""xrun tree: runs > instances > phases > agents with the source of their
brain; failed, running and interrupted nodes are marked."""

from __future__ import annotations

import datetime as _dt

from rich.console import Console
from sqlalchemy import update

from xdoe.store import BrainSource, Checkpoint, RunInstance, render_lineage


def text(tree) -> str:
    console = Console(record=True, width=250, color_system=None)
    console.print(tree)
    return console.export_text()


def doc(uid: str, experiment: str = "lin") -> dict:
    return {"uid": uid, "experiment_uid": experiment, "seed": 1, "schedule": []}


def instance(store, tmp_path, uid: str, phases, status, *, sources=(), error=None):
    rec = store.recorder(doc(uid, uid.rsplit("-", 1)[0]), results_root=tmp_path / "results")
    rec.start()
    for index, name in enumerate(phases):
        rec.phase_started(index, name, "train", {})
        rec.phase_finished()
    with store.database.session(write=True) as s, s.begin():
        from xdoe.store import Phase
        from sqlalchemy import select

        ids = dict(s.execute(select(Phase.index, Phase.id).where(Phase.instance_id == rec.instance_id)).all())
        for phase_index, values in sources:
            s.add(BrainSource(instance_id=rec.instance_id, phase_id=ids[phase_index], **values))
    if status is not None:
        rec.finish(status, error=error)
    return rec, ids


def test_tree_shows_sources_and_marks(store, tmp_path):
    source, ids = instance(store, tmp_path, "lin-0000", ["training", "testing"], "finished", sources=[
        (0, {"agent": "learner", "source_kind": "fresh"}),
        (1, {"agent": "learner", "source_kind": "previous_phase"})])
    with store.database.session(write=True) as s, s.begin():
        ck = Checkpoint(instance_id=source.instance_id, phase_id=ids[0], agent="learner", step=10,
                        episode=2, path="/nowhere.brain", sha256="0" * 64, metric=1.0, best=True)
        s.add(ck)
        s.flush()
        ck_id = ck.id
    instance(store, tmp_path, "lin-0001", ["testing"], "failed", error="ValueError: broken", sources=[
        (0, {"agent": "learner", "source_kind": "checkpoint", "source_run_uid": "lin-0000",
             "source_phase": "training", "source_checkpoint_id": ck_id})])
    instance(store, tmp_path, "lin-0002", ["training"], None, sources=[
        (0, {"agent": "learner", "source_kind": "path", "source_path": "/models/a.npz"})])
    stale, _ = instance(store, tmp_path, "lin-0003", ["training"], None)
    old = _dt.datetime.now(_dt.timezone.utc) - _dt.timedelta(hours=1)
    with store.database.session(write=True) as s, s.begin():
        s.execute(update(RunInstance).where(RunInstance.id == stale.instance_id)
                  .values(host="elsewhere", heartbeat=old))
    instance(store, tmp_path, "other-0000", ["training"], "finished")

    nodes = store.views.build_lineage("lin")
    assert [n.uid for n in nodes] == ["lin-0000", "lin-0001", "lin-0002", "lin-0003"]
    agent = nodes[1].instances[0].phases[0].agents[0]
    assert (agent.kind, agent.source_run, agent.source_checkpoint, agent.source_instance) == (
        "checkpoint", "lin-0000", ck_id, source.instance_id)
    assert nodes[0].instances[0].phases[0].agents[0].checkpoints == 1
    assert nodes[3].instances[0].stale and "no heartbeat" in nodes[3].instances[0].stale

    out = text(render_lineage(nodes, "experiment lin"))
    assert out.startswith("experiment lin")
    assert "other-0000" not in out
    assert "agent learner ← fresh brain; 1 checkpoint" in out
    assert "agent learner ← kept from the previous phase" in out
    assert (f"agent learner ← loaded from run lin-0000, phase training, checkpoint #{ck_id} "
            f"of instance {source.instance_id}") in out
    assert "agent learner ← loaded from file /models/a.npz" in out
    lines = out.splitlines()
    failed = [line for line in lines if "✗ failed" in line]
    assert any("run lin-0001" in line for line in failed)
    assert any("instance" in line and "ValueError: broken" in line for line in failed)
    running = [line for line in lines if "● running" in line]
    assert any("run lin-0002" in line for line in running)
    interrupted = [line for line in lines if "⚠ interrupted" in line]
    assert any("run lin-0003" in line for line in interrupted)
    assert any("marked running but no heartbeat" in line for line in interrupted)

    # one run, latest instance only
    instance(store, tmp_path, "lin-0000", ["training"], "failed", error="again")
    assert len(store.views.build_lineage("lin", run="lin-0000")[0].instances) == 2
    only = store.views.build_lineage(run="lin-0000", latest_only=True)
    assert len(only) == 1 and [i.status for i in only[0].instances] == ["failed"]
