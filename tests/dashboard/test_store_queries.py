"""The store side of the dashboard: stop requests honoured by the executor,
the new index on existing stores, curve points (cursor, down-sampling),
campaign pages (filter, sort, pages)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from sqlalchemy import inspect, text

from dashboard_helpers import taxi_run
from xdoe.execution import run
from xdoe.execution._resume import decide
from xdoe.store import Store


@pytest.fixture
def store(tmp_path: Path):
    with Store(f"sqlite:///{tmp_path / 'xrun.sqlite'}") as s:
        yield s


def _record(store: Store, uid: str, episodes: int, *, workers: int = 1, status: str = "finished",
            experiment: str = "exp", levels: dict | None = None, tmp: Path) -> int:
    doc = {"uid": uid, "experiment_uid": experiment, "seed": 1, "schedule": [],
           "design_point": {"index": int(uid.split("-")[-1]), "repetition": 0, "levels": levels or {}}}
    rec = store.recorder(doc, results_root=tmp / "results")
    rec.start()
    rec.phase_started(0, "training", "train", {"worker": workers, "episodes": episodes})
    for e in range(episodes):
        for w in range(workers):
            rec.episode_finished(worker=w, episode=e, agent="a", steps=3, reward=float(e + w),
                                 objective=float(e), wall_time=0.0)
    rec.phase_finished()
    if status != "running":
        rec.finish(status)
    else:
        rec.flush()
    return int(rec.instance_id)


def test_curve_points_reads_only_new_rows_and_bins_in_sql(store: Store, tmp_path: Path) -> None:
    inst = _record(store, "r-0", 3000, workers=2, tmp=tmp_path)
    data = store.curve_points(inst, max_points=100)
    (series,) = data["series"]
    assert len(series["x"]) == 100  # 3000 episodes in bins of 30
    assert series["x"][:2] == [0, 30]
    assert series["objective"][0] == pytest.approx(sum(range(30)) / 30)
    assert series["reward"][0] == pytest.approx(sum(range(30)) / 30 + 0.5)  # mean over both workers
    again = store.curve_points(inst, after=data["last"])
    assert again["series"] == [] and again["last"] == data["last"]
    full = store.curve_points(inst, max_points=5000)
    assert full["series"][0]["x"] == list(range(3000))


def test_stop_request_is_recorded_only_for_a_running_instance(store: Store, tmp_path: Path) -> None:
    done = _record(store, "r-0", 2, tmp=tmp_path)
    live = _record(store, "r-1", 2, status="running", tmp=tmp_path)
    assert store.request_stop(done) is False
    assert store.stop_requested(done) is None
    assert store.request_stop(live, "enough") is True
    assert store.request_stop(live) is True  # twice is fine
    assert store.stop_requested(live) == "enough"


def test_resuming_drops_a_stop_request_left_behind_in_the_same_transaction(store: Store, tmp_path: Path) -> None:
    # a process that died after a stop was asked for leaves the request behind; the instance that
    # resumes it drops it when it takes over (before, a separate later call could also erase a stop
    # asked for just after the takeover: the run then ignored it)
    live = _record(store, "r-2", 2, status="running", tmp=tmp_path)
    assert store.request_stop(live, "left behind")
    (inst,) = store.instances(run_uid="r-2")
    rec = store.recorder({"uid": "r-2", "experiment_uid": "exp", "seed": 1, "schedule": [],
                          "design_point": {"index": 2, "repetition": 0, "levels": {}}},
                         results_root=tmp_path / "results")
    assert rec.resume(inst)
    assert store.stop_requested(live) is None
    assert store.request_stop(live, "now") and store.stop_requested(live) == "now"


def test_a_stop_request_interrupts_the_run_which_then_resumes(store: Store, tmp_path: Path) -> None:
    doc = taxi_run("stop-0", "stopping", 200_000)
    box: dict = {}
    worker = threading.Thread(target=lambda: box.update(
        result=run(doc, store=store, results=tmp_path / "results")))
    worker.start()
    deadline = time.monotonic() + 60
    while not store.instances("running") and time.monotonic() < deadline:
        time.sleep(0.05)
    (inst,) = store.instances("running")
    assert store.request_stop(inst.id, "stopped by the test")
    worker.join(60)
    assert not worker.is_alive()
    result = box["result"]
    assert result.status == "interrupted" and "stopped by the test" in result.error
    assert store.instance(inst.id).status == "interrupted"
    assert store.stop_requested(inst.id) is None  # honoured, so removed
    view = store.run_view("stop-0")
    assert 0 < view.phases[0].episodes < 200_000  # rows written before the stop are kept
    assert decide(store, "stop-0", store.run_view("stop-0").content_hash).action == "resume"
    # starting the same document again resumes the same instance (and we stop it again)
    request_again = threading.Thread(target=lambda: box.update(
        again=run(doc, store=store, results=tmp_path / "results")))
    request_again.start()
    while store.instance(inst.id).status != "running" and time.monotonic() < deadline + 30:
        time.sleep(0.05)
    store.request_stop(inst.id)
    request_again.join(60)
    assert box["again"].resumed and box["again"].instance_id == inst.id
    assert box["again"].status == "interrupted"


def test_a_new_index_is_created_on_an_existing_store(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'old.sqlite'}"
    with Store(url) as s:
        with s.engine.begin() as conn:
            conn.execute(text("DROP INDEX ix_episode_phase_id"))
        assert "ix_episode_phase_id" not in {i["name"] for i in inspect(s.engine).get_indexes("episode")}
    for _ in range(2):  # idempotent
        with Store(url) as s:
            assert "ix_episode_phase_id" in {i["name"] for i in inspect(s.engine).get_indexes("episode")}


def test_campaign_pages_filter_sort_and_paginate(store: Store, tmp_path: Path) -> None:
    for k in range(7):
        _record(store, f"exp-{k}", k + 1, levels={"alpha": [0.1, 0.5][k % 2]}, tmp=tmp_path,
                status="failed" if k == 3 else "finished")
    (summary,) = store.campaign_summaries()
    assert summary.experiment == "exp" and summary.runs == 7
    assert summary.counts["finished"] == 6 and summary.counts["failed"] == 1
    assert summary.progress == pytest.approx(6 / 7)
    page = store.campaign_runs("exp", per_page=3)
    assert page.pages == 3 and [r.status.run for r in page.rows] == ["exp-0", "exp-1", "exp-2"]
    assert page.factors == ["alpha"]
    assert page.rows[2].response == pytest.approx(1.0)  # mean objective of episodes 0..2
    by_response = store.campaign_runs("exp", sort="response", descending=True, per_page=2)
    assert [r.status.run for r in by_response.rows] == ["exp-6", "exp-5"]
    failed = store.campaign_runs("exp", status="failed")
    assert [r.status.run for r in failed.rows] == ["exp-3"] and failed.filtered == 1
    found = store.campaign_runs("exp", search="0.5")
    assert {r.status.run for r in found.rows} == {"exp-1", "exp-3", "exp-5"}
    last = store.campaign_runs("exp", per_page=3, page=99)
    assert last.page == 3 and [r.status.run for r in last.rows] == ["exp-6"]


def test_live_reads_keep_the_bin_size_of_the_first_read(store: Store, tmp_path: Path) -> None:
    inst = _record(store, "r-0", 2000, tmp=tmp_path)
    first = store.curve_points(inst, max_points=100)
    assert first["k"] == 20
    later = store.curve_points(inst, after=first["last"] - 100, bin_size=first["k"])
    assert later["series"][0]["x"] == [1900, 1920, 1940, 1960, 1980]
