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
