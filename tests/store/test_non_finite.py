"""Issue 25 item 9: a NaN or infinite episode reward was stored as NULL but
written as ``NaN`` (invalid JSON) to ``episodes.jsonl``, with no warning. The
policy now: recorded as missing (NULL in the store, ``null`` in the file),
left out of the average reward, warned once per run and value."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from xdoe.errors import NonFiniteWarning
from xdoe.store import Episode, Store


def _strict_json(line: str) -> Any:
    def refuse(token: str) -> Any:
        raise ValueError(f"not JSON: {token}")

    return json.loads(line, parse_constant=refuse)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_rewards_are_missing_and_warned_once(bad: float, store: Store, make_document: Any,
                                                        tmp_path: Path) -> None:
    with store.recorder(make_document(), results_root=tmp_path) as rec:
        rec.phase_started(0, "training", "train", {"worker": 2})
        with pytest.warns(NonFiniteWarning, match=r"reward is (nan|inf|-inf); recorded as missing") as caught:
            for worker, episode, reward in [(0, 0, 1.0), (1, 0, bad), (0, 1, bad), (1, 1, bad)]:
                rec.episode_finished(worker, episode, "learner", 1, reward, 0.5, 0.1)
        assert len([w for w in caught if issubclass(w.category, NonFiniteWarning)]) == 1
        rec.phase_finished()
    lines = (rec.results_dir / "episodes.jsonl").read_text(encoding="utf-8").splitlines()  # type: ignore[operator]
    rows = [_strict_json(line) for line in lines]  # valid JSON: no NaN/Infinity tokens
    assert [row["reward"] for row in rows] == [1.0, None, None, None]
    with store.database.session() as session:
        rewards = session.execute(select(Episode.reward).order_by(Episode.episode, Episode.worker)).scalars().all()
    assert rewards == [1.0, None, None, None]
    path = rec.results_dir / "0-training-average_reward_per_episode.csv"  # type: ignore[operator]
    with path.open(newline="", encoding="utf-8") as fh:
        average = [(r["episode"], r["workers"], r["mean_reward"]) for r in csv.DictReader(fh)]
    assert average == [("0", "1", "1.0"), ("1", "0", "")]  # the mean of the finite rewards; none: empty


def test_a_nan_objective_is_missing_too(store: Store, make_document: Any, tmp_path: Path) -> None:
    with store.recorder(make_document(), results_root=tmp_path) as rec:
        rec.phase_started(0, "training", "train", {"worker": 1})
        with pytest.warns(NonFiniteWarning, match="objective is nan"):
            rec.episode_finished(0, 0, "learner", 1, 2.0, math.nan, 0.1)
        rec.phase_finished()
    row = _strict_json((rec.results_dir / "episodes.jsonl").read_text(encoding="utf-8"))  # type: ignore[operator]
    assert row["reward"] == 2.0 and row["objective"] is None
