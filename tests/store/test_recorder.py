"""RunRecorder conformance: rows in the store and results files, on every backend."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from xdoe.errors import InputError, StoreError
from xdoe.store import Episode, Phase, RunInstance, RunRecorder, Step, Store, StoreStepsError, document_hash
from xdoe.store.recorder._results import EPISODE_KEYS


def _count(store: Store, model: Any, *where: Any) -> int:
    with store.database.session() as session:
        return session.execute(select(func.count()).select_from(model).where(*where)).scalar_one()


def _read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _play(rec: RunRecorder, *, episodes: int, workers: int, steps: int = 4,
          agents: tuple[str, ...] = ("learner",)) -> None:
    """Record ``episodes`` x ``workers`` x ``agents`` episodes of ``steps`` steps each."""
    for episode in range(episodes):
        for worker in range(workers):
            for agent in agents:
                for step in range(steps):
                    rec.step(worker, episode, step, agent, {"taxi.observation": step},
                             {"taxi.action": 1}, {"taxi.reward": -1.0}, -1.0, step == steps - 1)
                rec.episode_finished(worker, episode, agent, steps, reward=float(10 * episode + worker),
                                     objective=-float(steps), wall_time=0.25,
                                     extras={"worker_param": worker})


def test_full_lifecycle_rows_and_files(store: Store, make_document: Any, tmp_path: Path) -> None:
    doc = make_document()
    rec = store.recorder(doc, results_root=tmp_path / "results")
    instance_id = rec.start()
    assert instance_id == rec.instance_id
    assert rec.results_dir is not None and rec.results_dir.parent == (tmp_path / "results" / doc["uid"]).resolve()
    running = json.loads((rec.results_dir / "session_metadata.json").read_text())
    assert running["status"] == "running" and running["end"] is None

    assert rec.phase_id is None
    rec.phase_started(0, "training", "train", {"mode": "train", "worker": 2, "episodes": 3})
    first_phase = rec.phase_id
    _play(rec, episodes=3, workers=2)
    rec.heartbeat()
    rec.phase_finished()
    assert rec.phase_id is None
    rec.phase_started(1, "testing", "test", {"mode": "test", "worker": 1, "episodes": 2})
    _play(rec, episodes=2, workers=1)
    rec.phase_finished()
    rec.finish("finished")

    # rows
    [run] = store.runs.versions()
    assert (run.uid, run.experiment, run.content_hash) == (doc["uid"], "taxi-study", document_hash(doc))
    assert (run.design_point, run.repetition, run.seed, run.levels) == (3, 0, 1804289383, {"alpha": 0.5})
    assert run.document == doc
    inst = store.runs.latest_instance(doc["uid"])
    assert inst is not None and inst.id == instance_id and inst.status == "finished"
    assert inst.end is not None and inst.start <= inst.heartbeat <= inst.end
    assert inst.error is None and inst.traceback is None and inst.results_dir == str(rec.results_dir)
    with store.database.session() as session:
        phases = session.execute(select(Phase).order_by(Phase.index)).scalars().all()
        assert [(p.index, p.name, p.mode, p.status) for p in phases] == [
            (0, "training", "train", "finished"), (1, "testing", "test", "finished")]
        assert phases[0].config == {"mode": "train", "worker": 2, "episodes": 3}
        assert phases[0].id == first_phase
        assert all(p.end is not None and p.end >= p.start for p in phases)
    rows = list(store.runs.episodes(doc["uid"]))
    assert len(rows) == 3 * 2 + 2 * 1
    assert rows[0] == {
        "experiment": "taxi-study", "run": doc["uid"], "content_hash": document_hash(doc),
        "instance": instance_id, "phase_index": 0, "phase": "training", "mode": "train",
        "worker": 0, "episode": 0, "agent": "learner", "steps": 4, "reward": 0.0,
        "objective": -4.0, "wall_time": 0.25, "extras": {"worker_param": 0},
    }
    assert [r["phase"] for r in store.runs.episodes(phase="testing")] == ["testing", "testing"]

    # files
    meta = json.loads((rec.results_dir / "session_metadata.json").read_text())
    assert meta["instance"] == rec.instance_uuid and meta["status"] == "finished"
    assert meta["total_episodes"] == 8 and meta["total_steps"] == 32
    assert meta["document"] == doc and meta["start"] < meta["end"]
    assert [p["episodes"] for p in meta["phases"]] == [6, 2]
    lines = (rec.results_dir / "episodes.jsonl").read_text().splitlines()
    assert len(lines) == 8
    first = json.loads(lines[0])
    assert tuple(first) == EPISODE_KEYS
    assert first == {"run": doc["uid"], "phase": "training", "mode": "train", "worker": 0,
                     "episode": 0, "agent": "learner", "steps": 4, "reward": 0.0,
                     "objective": -4.0, "wall_time": 0.25}
    average = _read_csv(rec.results_dir / "0-training-average_reward_per_episode.csv")
    # reward of (episode e, worker w) is 10e + w: the mean over workers 0 and 1 is 10e + 0.5
    assert [(r["episode"], r["agent"], r["workers"], float(r["mean_reward"])) for r in average] == [
        ("0", "learner", "2", 0.5), ("1", "learner", "2", 10.5), ("2", "learner", "2", 20.5)]
    assert len(_read_csv(rec.results_dir / "1-testing-average_reward_per_episode.csv")) == 2
    assert not (rec.results_dir / "all_transactions.csv").exists()  # store_steps="none"
    assert _count(store, Step) == 0


def test_failed_run_keeps_finished_episodes_and_traceback(store: Store, make_document: Any,
                                                          tmp_path: Path) -> None:
    rec = store.recorder(make_document(), results_root=tmp_path, flush_rows=1000)
    rec.start()
    rec.phase_started(0, "training", "train", {"worker": 1})
    _play(rec, episodes=5, workers=1)
    assert rec.buffered == 5  # nothing written yet: the failure must not lose them
    rec.finish("failed", error="ValueError: boom\n  while stepping", traceback="Traceback (most recent call last):\n  ...\nValueError: boom\n")

    inst = store.runs.instance(rec.instance_id)
    assert inst is not None and inst.status == "failed"
    assert inst.error == "ValueError: boom while stepping"
    assert inst.traceback is not None and inst.traceback.endswith("ValueError: boom\n")
    assert _count(store, Episode) == 5
    with store.database.session() as session:
        assert session.execute(select(Phase.status)).scalar_one() == "failed"
    meta = json.loads((rec.results_dir / "session_metadata.json").read_text())
    assert meta["status"] == "failed" and meta["error"] == inst.error and meta["total_episodes"] == 5
    assert len((rec.results_dir / "episodes.jsonl").read_text().splitlines()) == 5
    assert store.runs.finished_run_hashes() == set()
    rec.finish("finished")  # a second finish changes nothing
    assert store.runs.instance(rec.instance_id).status == "failed"  # type: ignore[union-attr]


def test_context_manager_records_exception(store: Store, make_document: Any, tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="environment exploded"):
        with store.recorder(make_document(), results_root=tmp_path) as rec:
            rec.phase_started(0, "training", "train", {"worker": 1})
            rec.episode_finished(0, 0, "learner", 3, 1.0, 1.0, 0.1)
            raise RuntimeError("environment exploded")
    inst = store.runs.instance(rec.instance_id)  # type: ignore[arg-type]
    assert inst is not None and inst.status == "failed"
    assert inst.error == "RuntimeError: environment exploded"
    assert "raise RuntimeError" in (inst.traceback or "")
    assert _count(store, Episode) == 1


def test_finish_without_start_records_failed_instance(store: Store, make_document: Any,
                                                       tmp_path: Path) -> None:
    rec = store.recorder(make_document(), results_root=tmp_path)
    rec.finish("failed", error="ComponentError: no module 'nope'")
    assert [i.status for i in store.runs.instances()] == ["failed"]


@pytest.mark.parametrize(
    ("policy", "expected_steps"),
    [("none", []), ("all", [0, 1, 2, 3, 4, 5, 6]), ("every:3", [0, 3, 6]), ("every:4", [0, 4, 6])],
)
def test_store_steps(store: Store, make_document: Any, tmp_path: Path, policy: str,
                     expected_steps: list[int]) -> None:
    rec = store.recorder(make_document(), results_root=tmp_path, store_steps=policy)
    with rec:
        rec.phase_started(0, "training", "train", {"worker": 1})
        for episode in range(2):
            _play_steps = 7
            for step in range(_play_steps):
                rec.step(0, episode, step, "learner", {"taxi.observation": [step, 1.5]},
                         {"taxi.action": step % 6}, {"taxi.reward": -1.0}, -1.0, step == _play_steps - 1)
            rec.episode_finished(0, episode, "learner", _play_steps, -7.0, -7.0, 0.1)
    with store.database.session() as session:
        steps = session.execute(select(Step).order_by(Step.id)).scalars().all()
    assert [(s.episode, s.step) for s in steps] == [(e, s) for e in range(2) for s in expected_steps]
    transactions = rec.results_dir / "all_transactions.csv"  # type: ignore[operator]
    if policy == "none":
        assert not transactions.exists()
        return
    first = steps[0]
    assert (first.sensors, first.actions, first.rewards, first.objective, first.done) == (
        {"taxi.observation": [0, 1.5]}, {"taxi.action": 0}, {"taxi.reward": -1.0}, -1.0, False)
    assert steps[-1].done is True
    rows = _read_csv(transactions)
    assert [(int(r["episode"]), int(r["step"])) for r in rows] == [(s.episode, s.step) for s in steps]
    assert json.loads(rows[0]["sensors"]) == {"taxi.observation": [0, 1.5]}
    assert rec.metadata()["stored_steps"] == len(steps)


@pytest.mark.parametrize("bad", ["some", "every:0", "every:-2", "every:x", "every", ""])
def test_bad_store_steps_is_input_error(store: Store, make_document: Any, bad: str) -> None:
    with pytest.raises(StoreStepsError, match="expected 'none', 'all' or 'every:N'") as info:
        store.recorder(make_document(), store_steps=bad)
    assert isinstance(info.value, InputError) and repr(bad) in str(info.value)


def test_buffer_stays_bounded_over_many_episodes(store: Store, make_document: Any,
                                                 tmp_path: Path) -> None:
    n = 20_000
    rec = store.recorder(make_document(), results_root=tmp_path, flush_rows=1000)
    with rec:
        rec.phase_started(0, "training", "train", {"worker": 4})
        for episode in range(n // 4):
            for worker in range(4):
                rec.episode_finished(worker, episode, "learner", 10, 1.0, 1.0, 0.01)
                assert rec.buffered < rec.flush_rows
        assert rec.peak_buffered == rec.flush_rows  # filled up to the limit, then flushed
        rec.phase_finished()
    assert _count(store, Episode) == n
    assert sum(1 for _ in store.runs.episodes(batch_size=500)) == n
    average = _read_csv(rec.results_dir / "0-training-average_reward_per_episode.csv")  # type: ignore[operator]
    assert len(average) == n // 4 and {r["workers"] for r in average} == {"4"}


def test_incomplete_episodes_are_averaged_at_phase_end(store: Store, make_document: Any,
                                                       tmp_path: Path) -> None:
    with store.recorder(make_document(), results_root=tmp_path) as rec:
        rec.phase_started(0, "training", "train", {"worker": 3})
        for worker, episode, reward in [(0, 0, 1.0), (1, 0, 2.0), (2, 0, 3.0), (0, 1, 5.0), (1, 1, 7.0)]:
            rec.episode_finished(worker, episode, "learner", 1, reward, reward, 0.0)
        rec.phase_finished()
    rows = _read_csv(rec.results_dir / "0-training-average_reward_per_episode.csv")  # type: ignore[operator]
    assert [(r["episode"], r["workers"], float(r["mean_reward"])) for r in rows] == [
        ("0", "3", 2.0), ("1", "2", 6.0)]


def test_misuse_is_reported(store: Store, make_document: Any, tmp_path: Path) -> None:
    rec = store.recorder(make_document(), results_root=tmp_path)
    with pytest.raises(StoreError, match="before start"):
        rec.phase_started(0, "training", "train", {})
    rec.start()
    with pytest.raises(StoreError, match="already started"):
        rec.start()
    with pytest.raises(StoreError, match="no phase is open"):
        rec.episode_finished(0, 0, "learner", 1, 0.0, 0.0, 0.0)
    rec.phase_started(0, "training", "train", {})
    with pytest.raises(StoreError, match="still open"):
        rec.phase_started(1, "testing", "test", {})
    with pytest.raises(ValueError, match="status must be one of"):
        rec.finish("done")
    rec.finish("interrupted")
    with pytest.raises(StoreError, match="after finish"):
        rec.phase_started(1, "testing", "test", {})
    assert store.runs.instance(rec.instance_id).status == "interrupted"  # type: ignore[arg-type, union-attr]


def test_document_without_uid_is_rejected(store: Store) -> None:
    with pytest.raises(InputError, match="uid"):
        store.recorder({"schedule": []})


def test_same_second_instances_get_distinct_folders(store: Store, make_document: Any,
                                                    tmp_path: Path) -> None:
    folders = set()
    for _ in range(3):
        with store.recorder(make_document(), results_root=tmp_path) as rec:
            folders.add(rec.results_dir)
    assert len(folders) == 3
    assert len({f.name[:19] for f in folders}) <= 2  # type: ignore[union-attr]
    assert len(store.runs.instances(status="finished")) == 3
    assert len(store.runs.versions()) == 1  # same document: one run, three instances


def test_mark_interrupted(store: Store, make_document: Any, tmp_path: Path) -> None:
    rec = store.recorder(make_document(), results_root=tmp_path)
    rec.start()
    rec.phase_started(0, "training", "train", {})
    assert [i.id for i in store.runs.instances(status="running")] == [rec.instance_id]
    assert store.runs.mark_interrupted(rec.instance_id, error="heartbeat stale") is True  # type: ignore[arg-type]
    assert store.runs.mark_interrupted(rec.instance_id) is False  # type: ignore[arg-type]
    inst = store.runs.instance(rec.instance_id)  # type: ignore[arg-type]
    assert inst is not None and inst.status == "interrupted" and inst.error == "heartbeat stale"
    with store.database.session() as session:
        assert session.execute(select(Phase.status)).scalar_one() == "interrupted"
        assert session.execute(select(RunInstance.end)).scalar_one() is not None
    assert store.runs.instances(status="running") == []


def test_a_deferred_phase_end_is_written_with_the_next_write(store: Store, make_document: Any,
                                                             tmp_path: Path) -> None:
    """The executor's phase end (issue 35.2): the phase's rows at once, its
    row's status and end in the transaction of the next phase's start or of
    the run's end (one transaction fewer per phase)."""
    from sqlalchemy import event

    commits: list[object] = []

    def committed(conn: object) -> None:
        commits.append(conn)

    def phases() -> list[tuple[int, str]]:
        return [(p.index, p.status) for p in store.runs.phases(rec.instance_id)]  # type: ignore[arg-type]

    rec = store.recorder(make_document(), results_root=tmp_path, flush_rows=1000)
    rec.start()
    rec.phase_started(0, "training", "train", {})
    rec.episode_finished(0, 0, "learner", 3, 1.0, 1.0, 0.1)  # buffered
    rec.phase_finished(deferred=True)
    assert rec.phase_id is None and rec.buffered == 0
    assert _count(store, Episode) == 1 and phases() == [(0, "running")]  # its rows now, its end not yet
    event.listen(store.database.engine, "commit", committed)
    try:
        rec.phase_started(1, "testing", "test", {})
    finally:
        event.remove(store.database.engine, "commit", committed)
    assert len(commits) == 1 and phases() == [(0, "finished"), (1, "running")]
    rec.phase_finished(deferred=True)
    rec.finish("finished")
    assert phases() == [(0, "finished"), (1, "finished")]
    with store.database.session() as session:
        ends = session.execute(select(Phase.end).order_by(Phase.index)).scalars().all()
    meta = json.loads((rec.results_dir / "session_metadata.json").read_text())  # type: ignore[operator]
    assert [p["status"] for p in meta["phases"]] == ["finished", "finished"]
    assert all(end is not None for end in ends) and all(p["end"] for p in meta["phases"])
