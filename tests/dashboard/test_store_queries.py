"""The store side of the dashboard: stop requests honoured by the executor,
the new index on existing stores, curve points (cursor, down-sampling),
campaign pages (filter, sort, pages)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import inspect, text

from dashboard_helpers import taxi_run, tictactoe_run
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
    """x is the run's environment steps so far: both workers' episodes (3
    steps each) in recorded order, one point each, 6,000 in bins of 60."""
    inst = _record(store, "r-0", 3000, workers=2, tmp=tmp_path)
    data = store.views.curve_points(inst, max_points=100)
    (series,) = data["series"]
    assert data["k"] == 60 and len(series["x"]) == 100  # 6,000 episodes in bins of 60
    assert series["x"][:2] == [180, 360]  # each point at its bin's last step
    assert series["objective"][0] == pytest.approx(sum(range(30)) / 30)
    assert series["reward"][0] == pytest.approx(sum(range(30)) / 30 + 0.5)  # both workers' episodes
    again = store.views.curve_points(inst, after=data["last"])
    assert again["series"] == [] and again["last"] == data["last"]
    full = store.views.curve_points(inst, max_points=6000)
    assert full["k"] == 1 and full["series"][0]["x"] == list(range(3, 18_001, 3))
    assert full["series"][0]["reward"][:4] == [0.0, 1.0, 1.0, 2.0]  # w0 e0, w1 e0, w0 e1, w1 e1


def _record_phases(store: Store, uid: str, phases: list[list[tuple]], *, tmp: Path,
                   flush_inside: tuple[int, int] | None = None, on_flush: Callable[[int], None] | None = None) -> int:
    """A finished run whose phase ``i`` records ``phases[i]``: ``(worker,
    episode, {agent: (steps, reward, objective)}, cut_by)`` each, flushed per
    episode (also between the agents of episode ``flush_inside = (phase,
    episode)``), ``on_flush(instance id)`` called after every flush."""
    rec = store.recorder({"uid": uid, "experiment_uid": "exp", "seed": 1, "schedule": []},
                         results_root=tmp / "results")
    rec.start()

    def flush() -> None:
        rec.flush()
        if on_flush is not None:
            on_flush(int(rec.instance_id))

    for i, episodes in enumerate(phases):
        rec.phase_started(i, f"phase{i}", "train" if i == 0 else "test", {"worker": 2, "episodes": 9})
        for worker, episode, agents, cut in episodes:
            for agent, (steps, reward, objective) in agents.items():
                rec.episode_finished(worker=worker, episode=episode, agent=agent, steps=steps, reward=reward,
                                     objective=objective, wall_time=0.0, cut_by=cut)
                if flush_inside == (i, episode):
                    flush()
            flush()
        rec.phase_finished()
    rec.finish("finished")
    return int(rec.instance_id)


def test_cut_episodes_count_in_x_without_a_point_and_phases_follow_each_other(store: Store, tmp_path: Path) -> None:
    two = lambda s, r: {"a": (s, r, r), "b": (s, r + 2.0, None)}  # noqa: E731 - pooled: the mean, None skipped
    inst = _record_phases(store, "cuts-0", [
        [(0, 0, two(5, 1.0), None), (1, 0, two(7, 3.0), "step_budget"), (0, 1, two(4, 5.0), "environment"),
         (1, 1, two(2, 0.0), "stop")],
        [(0, 0, two(10, 8.0), None), (0, 1, two(1, 9.0), "step_budget")],
    ], tmp=tmp_path)
    data = store.views.curve_points(inst)
    assert [(s["phase"], s["agent"], s["x"], s["reward"], s["objective"]) for s in data["series"]] == [
        ("phase0", "a", [5, 16], [1.0, 5.0], [1.0, 5.0]),  # one line per agent, then the pooled one
        ("phase0", "b", [5, 16], [3.0, 7.0], [None, None]),
        ("phase0", None, [5, 16], [2.0, 6.0], [1.0, 5.0]),  # a time limit (environment) is no budget: kept
        ("phase1", "a", [28], [8.0], [8.0]),  # after phase0's 18 steps; the cut episode's step counts, no point
        ("phase1", "b", [28], [10.0], [None]),
        ("phase1", None, [28], [9.0], [8.0]),
    ]
    assert {s["agents"] for s in data["series"]} == {2}
    binned = store.views.curve_points(inst, bin_size=2)  # bins: the mean of their uncut episodes at their last step
    assert [(s["x"], s["reward"]) for s in binned["series"] if s["agent"] is None] == [([12, 18], [2.0, 6.0]),
                                                                                        ([29], [9.0])]
    assert [(s["x"], s["reward"]) for s in binned["series"] if s["agent"] == "b"] == [([12, 18], [3.0, 7.0]),
                                                                                       ([29], [10.0])]


def test_reads_after_a_row_continue_the_curve_of_a_full_read(store: Store, tmp_path: Path) -> None:
    """A live page's reads (each after the newest row of the one before,
    while the run records) give, concatenated, the points of one read of
    the finished run: x from the steps of the rows before (summed in SQL);
    an episode whose first agent was written before a read is not read again."""
    import random

    rng = random.Random(4)
    phases = [[(w, e, {"a": (s, float(e), float(-e)), "b": (s, 1.0, None)}, "step_budget" if rng.random() < 0.2
                else None) for e in range(12) for w in range(2) if (s := rng.randint(1, 9))] for _ in range(2)]
    got: dict[str, dict[str, list]] = {}
    cursor = [0]

    def read(instance: int) -> None:
        data = store.views.curve_points(instance, after=cursor[0], bin_size=1)
        cursor[0] = data["last"]
        for s in data["series"]:
            mine = got.setdefault((s["phase"], s["agent"]), {"x": [], "reward": [], "objective": []})
            for key in mine:
                mine[key] += s[key]

    inst = _record_phases(store, "live-0", phases, tmp=tmp_path, flush_inside=(0, 3), on_flush=read)
    full = store.views.curve_points(inst)
    assert got == {(s["phase"], s["agent"]): {k: s[k] for k in ("x", "reward", "objective")} for s in full["series"]}
    pooled = [s for s in full["series"] if s["agent"] is None]
    assert len(pooled[0]["x"]) > 15 and pooled[1]["x"][0] > pooled[0]["x"][-1]
    assert len(got) == 6  # two phases, each with the lines of agents a and b and the pooled one


@pytest.mark.parametrize("kind", ["two workers", "two agents"])
def test_the_run_page_draws_the_campaign_curve_of_the_run(store_url: str, tmp_path: Path, kind: str) -> None:
    """One definition: a finished run's page, unbinned, shows per phase and
    agent the x (steps so far, earlier phases first) and y of
    :func:`xdoe.store.run_episodes` for that agent (``xrun plot curves --agent``),
    then pooled over the agents (``xrun plot curves``), with the campaign
    curve's x (:func:`xdoe.analysis._curves.episode_x`), episodes cut by the
    step budget left out: a real two-worker Taxi run and a real two-agent
    tic-tac-toe run."""
    import numpy as np

    from xdoe.analysis._curves import episode_x
    from xdoe.store import run_episodes

    if kind == "two workers":
        doc, budget, agents = taxi_run("one-0", "one", 100_000, test_episodes=4), 1000, ["learner"]
        doc["schedule"][0]["training"]["phase_config"]["worker"] = 2
    else:
        doc, budget, agents = tictactoe_run("one-0", "one", 100_000, test_episodes=6), 301, ["learner", "random"]
    doc["schedule"][0]["training"]["simulation"]["conditions"] = [
        {"name": "xdoe.conditions:EnvironmentTerminationCondition", "params": {}},
        {"name": "xdoe.conditions:MaxStepsTerminationCondition", "params": {"phase_steps": budget}}]
    with Store(store_url) as st:
        assert run(doc, store=st, results=tmp_path / "results").status == "finished"
        view = st.views.run_view("one-0")
        page = st.views.curve_points(view.instance.id, max_points=10**6)
        offset, cut_episodes, expected = 0.0, 0, []
        for phase in view.phases:
            lines = [*((a, a) for a in agents), (None, None)] if len(agents) > 1 else [(agents[0], None)]
            for name, only in lines:
                per_metric = {m: list(run_episodes(st.database, [phase.id], m, agent=only))
                              for m in ("reward", "objective")}
                (_, reward, steps, wall, cut, _), = per_metric["reward"]
                (_, objective, *_), = per_metric["objective"]
                x = offset + episode_x(steps, wall, "steps")
                expected.append((phase.name, name, x[~cut].tolist(), reward[~cut].tolist(), objective[~cut].tolist()))
            offset, cut_episodes = x[-1], cut_episodes + int(cut.sum())  # the pooled line's (the last)
    assert cut_episodes >= 1  # the budget cut the last episode(s) of the training phase
    assert [(s["phase"], s["agent"], s["x"], s["reward"], s["objective"]) for s in page["series"]] == expected
    assert [s["agent"] for s in page["series"]] == [*agents, *([None] if len(agents) > 1 else [])] * 2
    assert page["series"][-1]["x"][0] > budget and np.all(np.diff(page["series"][0]["x"]) > 0)
    if len(agents) > 1:  # the agents' rewards differ (the learner wins what the random player loses)
        assert page["series"][0]["reward"] != page["series"][1]["reward"]


def test_stop_request_is_recorded_only_for_a_running_instance(store: Store, tmp_path: Path) -> None:
    done = _record(store, "r-0", 2, tmp=tmp_path)
    live = _record(store, "r-1", 2, status="running", tmp=tmp_path)
    assert store.runs.request_stop(done) is False
    assert store.runs.stop_requested(done) is None
    assert store.runs.request_stop(live, "enough") is True
    assert store.runs.request_stop(live) is True  # twice is fine
    assert store.runs.stop_requested(live) == "enough"


def test_resuming_drops_a_stop_request_left_behind_in_the_same_transaction(store: Store, tmp_path: Path) -> None:
    # a process that died after a stop was asked for leaves the request behind; the instance that
    # resumes it drops it when it takes over (before, a separate later call could also erase a stop
    # asked for just after the takeover: the run then ignored it)
    live = _record(store, "r-2", 2, status="running", tmp=tmp_path)
    assert store.runs.request_stop(live, "left behind")
    (inst,) = store.runs.instances(run_uid="r-2")
    rec = store.recorder({"uid": "r-2", "experiment_uid": "exp", "seed": 1, "schedule": [],
                          "design_point": {"index": 2, "repetition": 0, "levels": {}}},
                         results_root=tmp_path / "results")
    assert rec.resume(inst)
    assert store.runs.stop_requested(live) is None
    assert store.runs.request_stop(live, "now") and store.runs.stop_requested(live) == "now"


def test_a_stop_request_interrupts_the_run_which_then_resumes(store: Store, tmp_path: Path) -> None:
    doc = taxi_run("stop-0", "stopping", 200_000)
    box: dict = {}
    worker = threading.Thread(target=lambda: box.update(
        result=run(doc, store=store, results=tmp_path / "results")))
    worker.start()
    deadline = time.monotonic() + 60
    while not store.runs.instances("running") and time.monotonic() < deadline:
        time.sleep(0.05)
    (inst,) = store.runs.instances("running")
    assert store.runs.request_stop(inst.id, "stopped by the test")
    worker.join(60)
    assert not worker.is_alive()
    result = box["result"]
    assert result.status == "interrupted" and "stopped by the test" in result.error
    assert store.runs.instance(inst.id).status == "interrupted"
    assert store.runs.stop_requested(inst.id) is None  # honoured, so removed
    view = store.views.run_view("stop-0")
    assert 0 < view.phases[0].episodes < 200_000  # rows written before the stop are kept
    assert decide(store, "stop-0", store.views.run_view("stop-0").content_hash).action == "resume"
    # starting the same document again resumes the same instance (and we stop it again)
    request_again = threading.Thread(target=lambda: box.update(
        again=run(doc, store=store, results=tmp_path / "results")))
    request_again.start()
    while store.runs.instance(inst.id).status != "running" and time.monotonic() < deadline + 30:
        time.sleep(0.05)
    store.runs.request_stop(inst.id)
    request_again.join(60)
    assert box["again"].resumed and box["again"].instance_id == inst.id
    assert box["again"].status == "interrupted"


def test_a_new_index_is_created_on_an_existing_store(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'old.sqlite'}"
    with Store(url) as s:
        with s.database.engine.begin() as conn:
            conn.execute(text("DROP INDEX ix_episode_phase_id"))
        assert "ix_episode_phase_id" not in {i["name"] for i in inspect(s.database.engine).get_indexes("episode")}
    for _ in range(2):  # idempotent
        with Store(url) as s:
            assert "ix_episode_phase_id" in {i["name"] for i in inspect(s.database.engine).get_indexes("episode")}


def test_campaign_pages_filter_sort_and_paginate(store: Store, tmp_path: Path) -> None:
    for k in range(7):
        _record(store, f"exp-{k}", k + 1, levels={"alpha": [0.1, 0.5][k % 2]}, tmp=tmp_path,
                status="failed" if k == 3 else "finished")
    (summary,) = store.views.campaign_summaries()
    assert summary.experiment == "exp" and summary.runs == 7
    assert summary.counts["finished"] == 6 and summary.counts["failed"] == 1
    assert summary.progress == pytest.approx(6 / 7)
    page = store.views.campaign_runs("exp", per_page=3)
    assert page.pages == 3 and [r.status.run for r in page.rows] == ["exp-0", "exp-1", "exp-2"]
    assert page.factors == ["alpha"]
    assert page.rows[2].response == pytest.approx(1.0)  # mean objective of episodes 0..2
    by_response = store.views.campaign_runs("exp", sort="response", descending=True, per_page=2)
    assert [r.status.run for r in by_response.rows] == ["exp-6", "exp-5"]
    failed = store.views.campaign_runs("exp", status="failed")
    assert [r.status.run for r in failed.rows] == ["exp-3"] and failed.filtered == 1
    found = store.views.campaign_runs("exp", search="0.5")
    assert {r.status.run for r in found.rows} == {"exp-1", "exp-3", "exp-5"}
    last = store.views.campaign_runs("exp", per_page=3, page=99)
    assert last.page == 3 and [r.status.run for r in last.rows] == ["exp-6"]


def test_live_reads_keep_the_bin_size_of_the_first_read(store: Store, tmp_path: Path) -> None:
    inst = _record(store, "r-0", 2000, tmp=tmp_path)
    first = store.views.curve_points(inst, max_points=100)
    assert first["k"] == 20
    later = store.views.curve_points(inst, after=first["last"] - 100, bin_size=first["k"])
    # the bins of the full read: episodes 1,900-1,919 (3 steps each), ... at their last step
    assert later["series"][0]["x"] == [5760, 5820, 5880, 5940, 6000] == first["series"][0]["x"][-5:]


def test_the_data_marker_changes_with_every_row_and_status_that_makes_a_result(store: Store, tmp_path: Path) -> None:
    """Issue 26: the dashboard keeps its analyses by ``store.views.data_marker``;
    it must change when a run, an episode row or a status changes (a
    finished instance's status, without any new row), and only then."""
    instance = _record(store, "m-0", 3, status="running", tmp=tmp_path)
    marks = [store.views.data_marker()]
    assert store.views.data_marker() == marks[0]  # nothing new, nothing changes
    store.runs.mark_interrupted(instance, "gone")  # a status, no new row
    marks.append(store.views.data_marker())
    _record(store, "m-1", 2, tmp=tmp_path)  # a run, its instance, phase and episodes
    marks.append(store.views.data_marker())
    rec = store.recorder({"uid": "m-2", "experiment_uid": "exp", "seed": 1, "schedule": []},
                         results_root=tmp_path / "results")
    rec.start()
    rec.phase_started(0, "training", "train", {"worker": 1, "episodes": 2})
    marks.append(store.views.data_marker())
    rec.episode_finished(worker=0, episode=0, agent="a", steps=3, reward=1.0, objective=1.0, wall_time=0.0)
    rec.flush()
    marks.append(store.views.data_marker())
    assert len(set(marks)) == len(marks), marks
