"""ResultsPaths, safe names, store_steps parsing and document hashing (backend-free)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pytest

from xdoe.store import ResultsPaths, StepPolicy, canonical_json, document_hash, safe_name


def test_results_paths_layout_and_suffixes(tmp_path: Path) -> None:
    started = dt.datetime(2024, 5, 6, 7, 8, 9, tzinfo=dt.timezone.utc)
    first = ResultsPaths.create(tmp_path, "taxi-study-0003", started)
    second = ResultsPaths.create(tmp_path, "taxi-study-0003", started)
    third = ResultsPaths.create(tmp_path, "taxi-study-0003", started)
    assert first.directory == (tmp_path / "taxi-study-0003" / "2024-05-06_07-08-09").resolve()
    assert second.directory.name == "2024-05-06_07-08-09-1"
    assert third.directory.name == "2024-05-06_07-08-09-2"
    assert first.session_metadata.name == "session_metadata.json"
    assert first.episodes.name == "episodes.jsonl"
    assert first.all_transactions.name == "all_transactions.csv"
    assert first.average_reward(1, "testing").name == "1-testing-average_reward_per_episode.csv"
    assert first.agent_dir(0, "training", "learner") == first.directory / "agents" / "0-training" / "learner"


def test_results_folder_uses_utc(tmp_path: Path) -> None:
    berlin = dt.timezone(dt.timedelta(hours=2))
    paths = ResultsPaths.create(tmp_path, "r", dt.datetime(2024, 5, 6, 1, 0, 0, tzinfo=berlin))
    assert paths.directory.name == "2024-05-05_23-00-00"


@pytest.mark.parametrize(
    ("name", "safe"),
    [("taxi-study-0003", "taxi-study-0003"), ("a/b", "a_b"), ("..", "_"), ("", "_"),
     ("phase one: train", "phase_one_train"), ("../../etc", ".._.._etc")],
)
def test_safe_name(name: str, safe: str) -> None:
    assert safe_name(name) == safe
    assert "/" not in safe_name(name)


@pytest.mark.parametrize(("text", "every"), [("none", 0), ("all", 1), ("every:1", 1),
                                             ("EVERY: 25", 25), (" All ", 1)])
def test_step_policy_parse(text: str, every: int) -> None:
    assert StepPolicy.parse(text).every == every


def test_step_policy_every_n_keeps_multiples_and_last_step() -> None:
    policy = StepPolicy.parse("every:5")
    kept = [s for s in range(12) if policy.wants(s, done=(s == 11))]
    assert kept == [0, 5, 10, 11]
    assert str(policy) == "every:5"
    assert not StepPolicy.parse("none").wants(0, True)


def test_document_hash_is_canonical() -> None:
    a = {"uid": "r", "seed": 1, "schedule": [{"training": {"x": 0.1, "y": [1, 2]}}]}
    b = {"schedule": [{"training": {"y": [1, 2], "x": 0.1}}], "seed": 1, "uid": "r"}
    assert document_hash(a) == document_hash(b)
    assert len(document_hash(a)) == 64
    assert document_hash(a) != document_hash({**a, "seed": 2})
    assert canonical_json(a) == '{"schedule":[{"training":{"x":0.1,"y":[1,2]}}],"seed":1,"uid":"r"}'


def test_document_hash_accepts_numpy_and_refuses_nan() -> None:
    assert document_hash({"x": np.int64(3), "y": np.array([1.5])}) == document_hash({"x": 3, "y": [1.5]})
    with pytest.raises(ValueError):
        document_hash({"x": float("nan")})


@pytest.mark.parametrize("workers", [1, 3])
def test_episode_lines_and_average_rows_are_json_and_csv_of_the_values(tmp_path: Path, workers: int) -> None:
    """ResultsWriter.episode writes its line from per-phase constants: the
    bytes are ``json.dumps(dict(zip(EPISODE_KEYS, values)), ensure_ascii=False)``
    for every kind of value (non-finite and signed-zero floats, ``None``,
    non-ASCII and quoted names, values of other types); the average-reward
    rows are those of the mean over workers (``repr`` of the float)."""
    import csv
    import json

    from xdoe.store.recorder._results import EPISODE_KEYS, ResultsWriter

    paths = ResultsPaths(tmp_path / "inst")
    paths.directory.mkdir(parents=True)
    writer = ResultsWriter(paths, 'run "é"\\x', store_steps=False)
    rewards = [-7.0, -0.0, 0.1 + 0.2, float("nan"), float("inf"), -float("inf"), 1e300, 5e-324, 3.0]
    others = [None, -0.0, 2.5, float("nan"), float("-inf"), 12.0, None, 1e-7, 0.0]
    expected: list[str] = []
    for index, (name, mode) in enumerate([("training", "train"), ("tést \"q\"", "test")]):
        writer.phase_started(index, name, mode, workers)
        for episode, (reward, other) in enumerate(zip(rewards, others)):
            for worker in range(workers):
                for agent in ("learner", "ägent,\"x\"\n"):
                    values = (writer.run_uid, name, mode, worker, episode, agent, 25 + episode, reward,
                              other, None if other is None else abs(other))
                    writer.episode(*values[3:])
                    expected.append(json.dumps(dict(zip(EPISODE_KEYS, values)), ensure_ascii=False))
        # values of other types take the encoder: the same text all the same
        odd = (writer.run_uid, name, mode, True, 9, "learner", 3.0, 0.5, 1, np.float64(0.25))
        writer.episode(*odd[3:])
        expected.append(json.dumps(dict(zip(EPISODE_KEYS, odd)), ensure_ascii=False))
    writer.close()
    assert paths.episodes.read_text(encoding="utf-8") == "".join(line + "\n" for line in expected)

    with paths.average_reward(0, "training").open(newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["episode", "agent", "workers", "mean_reward"]
    want = []
    for episode, reward in enumerate(rewards):
        for agent in ("learner", "ägent,\"x\"\n"):
            total = 0.0
            for _ in range(workers):
                total += reward
            want.append([str(episode), agent, str(workers), repr(total / workers)])
    want.append(["9", "learner", "1", "0.5"])  # one worker's episode 9 (at the phase's end when 3)
    assert rows[1:] == want
