"""Execution backends: in-process, local process pool, Dask; claiming per run."""

from __future__ import annotations

import datetime as _dt
import os
from collections import Counter, defaultdict
from dataclasses import replace
from pathlib import Path

import pytest
from scale_components import countdown_run, write_runs
from sqlalchemy import insert

from xdoe.campaign import CampaignOptions, RunTask, execute_task, parse_jobs
from xdoe.campaign.backends import DaskBackend, ProcessPoolBackend, SequentialBackend
from xdoe.errors import InputError
from xdoe.store import Claim, Store, document_hash, utcnow
from xdoe.execution import load_plan


def episode_rewards(url: str) -> dict[str, list[tuple]]:
    out: dict[str, list[tuple]] = defaultdict(list)
    with Store(url) as store:
        for row in store.runs.episodes():
            out[row["run"]].append((row["phase"], row["worker"], row["episode"], row["agent"],
                                    row["steps"], row["reward"]))
    return dict(out)


def instances_per_run(url: str) -> Counter:
    with Store(url) as store:
        return Counter(i.run_uid for i in store.runs.instances())


@pytest.fixture
def files(tmp_path: Path) -> list[str]:
    docs = [countdown_run(f"r{i}", seed=i, episodes=3 + i, worker=1 + i % 2) for i in range(4)]
    return write_runs(tmp_path / "runs", docs)


def tasks_for(files: list[str], url: str, tmp_path: Path, **kw) -> list[RunTask]:
    return [RunTask(f, CampaignOptions(store_url=url, results=str(tmp_path / "results"), **kw)) for f in files]


def test_process_pool_runs_everything_like_the_sequential_backend(files, tmp_path):
    seq_url = f"sqlite:///{tmp_path / 'seq.sqlite'}"
    par_url = f"sqlite:///{tmp_path / 'par.sqlite'}"
    with SequentialBackend() as backend:
        seq = list(backend.map_runs(tasks_for(files, seq_url, tmp_path)))
    with ProcessPoolBackend(2) as backend:
        par = list(backend.map_runs(tasks_for(files, par_url, tmp_path)))
    assert sorted(r.uid for r in par) == ["r0", "r1", "r2", "r3"]
    assert all(r.status == "finished" for r in seq + par), [(r.uid, r.error) for r in par]
    assert episode_rewards(seq_url) == episode_rewards(par_url)
    assert len(episode_rewards(par_url)["r3"]) == 2 * 6 + 1  # 2 workers x 6 train + 1 test
    assert set(instances_per_run(par_url).values()) == {1}
    with Store(par_url) as store:  # claims were released
        assert all(store.runs.claim_of(r.uid, document_hash(load_plan(r.file).document)) is None for r in par)


def test_a_killed_worker_process_fails_only_its_run(tmp_path):
    docs = [countdown_run("ok-a", episodes=4, sleep=0.02), countdown_run("killer", kill_at_episode=1),
            countdown_run("ok-b", episodes=4, sleep=0.02), countdown_run("ok-c", episodes=2)]
    files = write_runs(tmp_path / "runs", docs)
    url = f"sqlite:///{tmp_path / 'xrun.sqlite'}"
    with ProcessPoolBackend(2) as backend:
        results = {r.uid: r for r in backend.map_runs(tasks_for(files, url, tmp_path))}
        assert backend.pools_created >= 2  # the broken pool was replaced
    assert results["killer"].status == "failed"
    assert results["killer"].error.startswith("worker process died (killed by SIGKILL")
    assert {u: r.status for u, r in results.items() if u != "killer"} == {
        "ok-a": "finished", "ok-b": "finished", "ok-c": "finished"}
    with Store(url) as store:
        killer = store.runs.instances(run_uid="killer")
        assert [i.status for i in killer] == ["failed"] and "worker process died" in killer[0].error
        for uid in ("ok-a", "ok-b", "ok-c"):  # a run cut short by the broken pool ran again
            statuses = [i.status for i in store.runs.instances(run_uid=uid)]
            assert statuses.count("finished") == 1 and set(statuses) <= {"finished", "interrupted"}
        h = document_hash(load_plan(files[1]).document)
        assert store.runs.claim_of("killer", h) is None


def test_a_run_that_finished_as_the_pool_broke_is_read_back_not_run_again(tmp_path):
    # the race behind a once-flaky test_a_killed_worker_process_fails_only_its_run: a worker
    # finishes its run in the store, another worker dies before the result comes back, the pool
    # terminates the first worker; its run is read back from the store ("finished"), not resubmitted
    # (which would find it finished and say "skipped")
    files = write_runs(tmp_path / "runs", [countdown_run("done", episodes=3, worker=2)])
    url = f"sqlite:///{tmp_path / 'xrun.sqlite'}"
    [task] = tasks_for(files, url, tmp_path)
    since = _dt.datetime.now(_dt.timezone.utc) - _dt.timedelta(seconds=1)
    with ProcessPoolBackend(1) as backend:
        [result] = list(backend.map_runs([task]))
        with Store(url) as store:
            pid = store.runs.latest_instance("done").pid
        assert result.status == "finished" and pid != os.getpid()  # it ran in a worker process
        back = backend._ended_meanwhile(task, pid, since)
        assert back is not None and back.status == "finished" and back.task_key == task.key
        assert (back.instance_id, back.results_dir, back.episodes, back.steps) == (
            result.instance_id, result.results_dir, result.episodes, result.steps)
        assert [(p.index, p.name, p.mode, p.episodes, p.steps) for p in back.phases] == [
            (p.index, p.name, p.mode, p.episodes, p.steps) for p in result.phases]
        for mine, theirs in zip(back.phases, result.phases):
            assert mine.objectives == pytest.approx(theirs.objectives)
            assert mine.rewards == pytest.approx(theirs.rewards)
        # not this worker's, or from before this campaign: run again
        assert backend._ended_meanwhile(task, pid + 1, since) is None
        assert backend._ended_meanwhile(task, pid, since + _dt.timedelta(hours=1)) is None


def test_a_run_that_failed_as_the_pool_broke_is_read_back_not_run_again(tmp_path):
    # the same race for a run that failed: run again, it would record the same failure twice
    # (seen once with --jobs 2 in tests/cli/test_plugin_failures.py: bad-exit had two instances)
    doc = countdown_run("bad", episodes=3, length=4)
    env = doc["schedule"][0]["training"]["environments"][0]["environment"]
    env["name"] = "crash_components:CrashingEnvironment"
    env["params"] = {"length": 4, "how": "raise", "at_episode": 1}
    files = write_runs(tmp_path / "runs", [doc])
    url = f"sqlite:///{tmp_path / 'xrun.sqlite'}"
    [task] = tasks_for(files, url, tmp_path)
    since = _dt.datetime.now(_dt.timezone.utc) - _dt.timedelta(seconds=1)
    with ProcessPoolBackend(1) as backend:
        [result] = list(backend.map_runs([task]))
        assert result.status == "failed" and "plugin exploded" in result.error
        with Store(url) as store:
            pid = store.runs.latest_instance("bad").pid
        back = backend._ended_meanwhile(task, pid, since)
        assert back is not None and back.status == "failed" and back.task_key == task.key
        assert "plugin exploded" in back.error and back.instance_id == result.instance_id
        assert back.episodes == result.episodes == 1
    with Store(url) as store:
        assert [i.status for i in store.runs.instances(run_uid="bad")] == ["failed"]


def test_claims_skip_finished_and_held_runs_and_take_over_stale_ones(files, tmp_path):
    url = f"sqlite:///{tmp_path / 'xrun.sqlite'}"
    task = tasks_for(files[:1], url, tmp_path)[0]
    plan = load_plan(task.file)
    h = document_hash(plan.document)
    old = utcnow() - _dt.timedelta(seconds=90)
    with Store(url) as store:
        with store.database.orm_write("test") as s:
            s.execute(insert(Claim).values(run_uid=plan.uid, content_hash=h, owner="ghost", host="elsewhere",
                                           pid=1, heartbeat=old, claimed_at=old))
        assert execute_task(task, store=store).status == "claimed"  # live for the default 120 s
        fresh = RunTask(task.file, replace(task.options, heartbeat_timeout=60))
        result = execute_task(fresh, store=store)
        assert result.status == "finished"  # taken over from the dead owner
        assert store.runs.claim_of(plan.uid, h) is None  # released at the end
        again = execute_task(RunTask(task.file, task.options), store=store)
        assert again.status == "skipped"
        rerun = execute_task(RunTask(task.file, replace(task.options, rerun=True)), store=store)
        assert rerun.status == "finished"
        assert [i.status for i in store.runs.instances(run_uid=plan.uid)] == ["finished", "finished"]


def test_dask_local_cluster_runs_into_the_shared_store(files, tmp_path):
    pytest.importorskip("distributed", reason="Dask is not installed (the dask extra: pip install 'xdoe[dask]')")
    url = f"sqlite:///{tmp_path / 'xrun.sqlite'}"
    with DaskBackend("local", n_workers=2) as backend:
        results = list(backend.map_runs(tasks_for(files[:3], url, tmp_path)))
    assert sorted((r.uid, r.status) for r in results) == [("r0", "finished"), ("r1", "finished"),
                                                          ("r2", "finished")]
    assert instances_per_run(url) == Counter({"r0": 1, "r1": 1, "r2": 1})


def test_parse_jobs():
    assert parse_jobs("3") == 3 and parse_jobs(None) == 1 and parse_jobs("auto") >= 1
    for bad in ("0", "-2", "many"):
        with pytest.raises(InputError, match="--jobs"):
            parse_jobs(bad)


def test_isolated_worker_forwards_phase_ends_and_fewer_episode_events(files, tmp_path):
    """The one-worker backend of ``xrun`` (``isolate``) forwards each phase's
    start and its last episode (the display's final state), and throttles
    the episodes between; with ``forward_progress=False`` it forwards nothing."""
    from xdoe.campaign import make_backend

    url = f"sqlite:///{tmp_path / 'iso.sqlite'}"
    events = []
    with make_backend(CampaignOptions(), forward_progress=True) as backend:
        results = list(backend.map_runs(tasks_for(files[:2], url, tmp_path), progress=events.append))
    assert all(r.status == "finished" for r in results)
    ends = {(e.run, e.phase) for e in events if e.episodes == e.episodes_total}
    starts = {(e.run, e.phase) for e in events if e.episodes == 0}
    assert ends == starts == {(r, p) for r in ("r0", "r1") for p in ("training", "testing")}, events
    quiet_url = f"sqlite:///{tmp_path / 'quiet.sqlite'}"
    with make_backend(CampaignOptions()) as backend:
        quiet = []
        results = list(backend.map_runs(tasks_for(files[:2], quiet_url, tmp_path), progress=quiet.append))
        assert backend._progress is None  # no queue: nothing pickled or sent
    assert all(r.status == "finished" for r in results) and quiet == []


def test_throttled_progress_keeps_phase_starts_and_ends():
    from xdoe.campaign.backends._pool import _Throttled
    from xdoe.execution import ProgressEvent

    sent = []
    throttled = _Throttled(sent.append)
    for episode in range(0, 1001):
        throttled(ProgressEvent("r", "train", 0, 1, episode, 1000, episode * 10))
    assert sent[0].episodes == 0 and sent[-1].episodes == 1000
    assert len(sent) < 50  # a tight loop of 1001 events: phase start, end, a few in between
