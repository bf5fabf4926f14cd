"""Sessions of a tree are not runs of the design (issue 22, bullet 2): a
branch or a grown session never enters the design's results, analysis or
status, also when it was recorded the old way (the parent's experiment uid
and design point copied into the child); ``include_branches`` shows them
as their own rows."""

from __future__ import annotations

import copy
import csv
from pathlib import Path
from typing import Any

import pytest

from treebuilders import level_document
from xdoe.analysis import analyze
from xdoe.documents import dump_canonical
from xdoe.execution import run
from xdoe.results import load
from xdoe.store import Store, document_hash
from xdoe.tree import branch, grow


def design_document(uid: str, point: int, rep: int, level: float) -> dict[str, Any]:
    """A run document as xgen writes it: experiment ``lv``, factor ``level``."""
    doc = level_document(uid, level=level)
    doc["design_point"] = {"index": point, "repetition": rep, "levels": {"level": level}}
    return doc


@pytest.fixture
def design(store_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, Path]:
    """Four finished design runs (levels 1 and 2, two repetitions) written as
    ``runs/run-*.yaml`` and run into a store (SQLite, and PostgreSQL when
    there is a server)."""
    monkeypatch.chdir(tmp_path)
    url = store_url
    folder = tmp_path / "runs"
    folder.mkdir()
    for i, (point, rep, level) in enumerate([(0, 0, 1.0), (1, 0, 2.0), (0, 1, 1.0), (1, 1, 2.0)]):
        doc = design_document(f"lv-{i:04d}", point, rep, level)
        (folder / f"run-lv-{i:04d}.yaml").write_text(dump_canonical(doc), encoding="utf-8")
        assert run(folder / f"run-lv-{i:04d}.yaml", store=url, results=tmp_path / "results").ok
    return url, folder


def runs_of(frame: Any) -> list[str]:
    return sorted(frame["run"].unique())


def test_a_branch_is_not_a_repetition_of_its_parents_design_point(design: tuple[str, Path], tmp_path: Path) -> None:
    url, folder = design
    before = analyze(load(url, "lv"))
    child = branch("lv-0000", set=["environment.params.level=x3"], episodes=3, store=url, output=folder,
                   results=tmp_path / "results")
    assert child.result is not None and child.result.ok
    pending = branch("lv-0000", set=["brain.params.alpha=0.5"], run=False, store=url, output=folder)
    # beside the design, out of its glob; the document says what it is
    assert child.file.parent == folder / "branches" and pending.file.parent == folder / "branches"
    assert sorted(p.name for p in folder.glob("run-*.yaml")) == [f"run-lv-{i:04d}.yaml" for i in range(4)]
    assert "design_point" not in child.document and "experiment_uid" not in child.document
    assert child.document["session"]["overrides"] == {"environment.params.level": 3.0}
    origin = child.document["session"]  # where in the design it started: provenance, not membership
    assert origin["experiment"] == "lv" and origin["design_point"] == {"index": 0, "repetition": 0,
                                                                       "levels": {"level": 1.0}}
    frame = load(url, "lv")
    assert runs_of(frame) == [f"lv-{i:04d}" for i in range(4)] and "branch" not in frame.columns
    after = analyze(frame)
    assert after.runs == before.runs == 4
    assert [(f.name, f.effect, f.p) for f in after.factors] == [(f.name, f.effect, f.p) for f in before.factors]
    assert [(p.index, p.n, p.estimate) for p in after.points] == [(p.index, p.n, p.estimate) for p in before.points]
    # compared explicitly: one labelled row each, never a design point
    both = load(url, "lv", include_branches=True)
    rows = both[both["branch"].notna()]
    assert runs_of(rows) == ["lv-0000_b01"] and rows["design_point"].isna().all()
    assert rows["branch"].iloc[0] == "lv-0000 + environment.params.level=3.0"
    shown = analyze(both)
    assert [(p.index, p.n, p.estimate) for p in shown.points[:2]] == [(p.index, p.n, p.estimate) for p in before.points]
    assert shown.points[2].index == -1 and shown.points[2].n == 1
    assert shown.points[2].levels == {"branch": "lv-0000_b01 (lv-0000 + environment.params.level=3.0)"}
    assert shown.points[2].estimate == pytest.approx(9.0)  # level 3 x 3 steps
    assert [(f.name, f.effect) for f in shown.factors] == [(f.name, f.effect) for f in before.factors]
    # the export: the design's runs; with include_branches the child after them, labelled
    with Store(url) as store:
        plain = store.views.export_episodes(tmp_path / "design.csv", "lv")
        labelled = store.views.export_episodes(tmp_path / "all.csv", "lv", include_branches=True)
    with open(plain.path, newline="") as fh:
        assert sorted({r["run"] for r in csv.DictReader(fh)}) == [f"lv-{i:04d}" for i in range(4)]
    with open(labelled.path, newline="") as fh:
        table = list(csv.DictReader(fh))
    assert labelled.columns[-1] == "branch" and table[-1]["run"] == "lv-0000_b01"
    assert {r["branch"] for r in table if r["run"] == "lv-0000_b01"} == {"lv-0000 + environment.params.level=3.0"}
    assert {r["branch"] for r in table if r["run"] != "lv-0000_b01"} == {""}
    # status: the design's four runs, the unrun child is not "missing"
    with Store(url) as store:
        for status in (store.views.campaign_status(folder), store.views.campaign_status(None, "lv"), store.views.campaign_status()):
            assert [r.run for r in status.runs] == [f"lv-{i:04d}" for i in (0, 2, 1, 3)]
            assert status.all_finished
        sessions = store.views.campaign_status(folder / "branches")  # asked for: the folder of the tree's sessions
        assert [(r.run, r.status) for r in sessions.runs] == [("lv-0000_b01", "finished"), ("lv-0000_b02", "missing")]
        # the dashboard's campaign statistics: the design only (the tree page shows the sessions)
        summaries = store.views.campaign_summaries()
        assert [(c.experiment, c.runs, c.counts["finished"]) for c in summaries] == [("lv", 4, 4)]
        assert [r.status.run for r in store.views.campaign_runs("lv").rows] == [f"lv-{i:04d}" for i in (0, 2, 1, 3)]


def old_style_child(store: Store, url: str, parent: str, tmp_path: Path, *, level: float, ran: bool) -> Path:
    """A child recorded as branches were before issue 22: the parent's
    document with its ``experiment_uid`` and ``design_point`` kept, written
    beside the design's run files, recorded as a session node."""

    source = store.runs.instances("finished", run_uid=parent)[-1]
    doc = copy.deepcopy(store.sessions.run_document(parent, source.content_hash))
    assert doc is not None and doc["design_point"]["index"] == 0
    uid = f"{parent}_b01"
    doc["uid"] = uid
    doc["schedule"][0]["training"]["agents"][0]["load"] = {"agent": "learner", "experiment_run": parent}
    for phase in doc["schedule"]:
        next(iter(phase.values()))["environments"][0]["environment"]["params"]["level"] = level
    file = tmp_path / "runs" / f"run-{uid}.yaml"
    file.write_text(dump_canonical(doc), encoding="utf-8")
    tree = store.sessions.get_or_create_tree(parent, "branch")
    root = store.sessions.nodes_of_run(parent)
    root_id = root[0].id if root else store.sessions.add_session_node(tree.id, parent, source.content_hash)
    store.sessions.add_session_node(
        tree.id, uid, document_hash(doc), file=str(file), depth=1, parent_id=root_id,
        overrides=[{"key": "environment.params.level", "value": level, "paths": [], "result": level}])
    if ran:
        assert run(file, store=url, results=tmp_path / "results").ok
    return file


@pytest.mark.parametrize("ran", [True, False], ids=["ran", "no-run"])
def test_children_recorded_the_old_way_stay_out_of_the_design(design: tuple[str, Path], tmp_path: Path,
                                                               ran: bool) -> None:
    url, folder = design
    before = analyze(load(url, "lv"))
    with Store(url) as store:
        old_style_child(store, url, "lv-0000", tmp_path, level=5.0, ran=ran)
    frame = load(url, "lv")
    assert runs_of(frame) == [f"lv-{i:04d}" for i in range(4)]
    assert [(p.index, p.n, p.estimate) for p in analyze(frame).points] == [(p.index, p.n, p.estimate) for p in before.points]
    with Store(url) as store:  # the old file sits in the design's folder: still not a design run
        status = store.views.campaign_status(folder)
        assert len(status.runs) == 4 and status.all_finished and status.counts.get("missing", 0) == 0
        assert len(store.views.campaign_status(None, "lv").runs) == 4
    labelled = load(url, "lv", include_branches=True)
    branches = labelled[labelled["branch"].notna()]
    assert runs_of(branches) == (["lv-0000_b01"] if ran else [])
    if ran:  # its recorded design point and levels are not shown: it is not a design point
        assert branches["design_point"].isna().all() and branches["level"].isna().all()


def test_grown_sessions_from_a_design_run_are_not_the_design(design: tuple[str, Path], tmp_path: Path) -> None:
    url, folder = design
    config = {"uid": "from-design", "root": str(folder / "run-lv-0001.yaml"), "output": str(folder),
              "segment": {"episodes": 3}, "criterion": {"name": "ImprovementCriterion", "params": {"last": 2}},
              "directions": [{"environment.params.level": "x2"}],
              "limits": {"max_sessions": 3, "max_depth": 2, "max_parallel": 1}}
    path = tmp_path / "session.yaml"
    path.write_text(dump_canonical(config), encoding="utf-8")
    grown = grow(path, store=url, results=tmp_path / "results")
    children = [n for n in grown.nodes if n.parent_id is not None]
    assert children, [(n.health, n.reason) for n in grown.nodes]
    assert all(Path(n.file or "").parent == folder / "branches" for n in children)
    assert sorted(p.name for p in folder.glob("run-*.yaml")) == [f"run-lv-{i:04d}.yaml" for i in range(4)]
    frame = load(url, "lv")
    assert runs_of(frame) == [f"lv-{i:04d}" for i in range(4)]
    both = load(url, "lv", include_branches=True)
    assert runs_of(both[both["branch"].notna()]) == sorted(n.run_uid for n in children if n.instance_id)
    with Store(url) as store:
        assert len(store.views.campaign_status(folder).runs) == 4
        assert len(store.views.campaign_status().runs) == 4
