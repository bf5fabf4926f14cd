"""When the results files are written through: an episode's line as it is
recorded, the stored steps with the recorder's row buffer."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from sqlalchemy import func, select

from xdoe.store import Episode, Step, Store


def _rows(store: Store, model: Any) -> int:
    with store.database.session() as session:
        return session.execute(select(func.count()).select_from(model)).scalar_one()


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _episode(rec: Any, episode: int, steps: int = 2) -> None:
    for step in range(steps):
        rec.step(0, episode, step, "learner", {"taxi.observation": step}, {"taxi.action": 1},
                 {"taxi.reward": -1.0}, -1.0, step == steps - 1)
    rec.episode_finished(0, episode, "learner", steps, reward=-float(steps), objective=-1.0,
                         wall_time=0.01, extras={"info": {"taxi": {"prob": 1.0}}})


def test_files_are_written_through_before_the_store(store: Store, make_document: Any, tmp_path: Path) -> None:
    rec = store.recorder(make_document(), results_root=tmp_path, store_steps="all", flush_rows=7)
    rec.start()
    rec.phase_started(0, "training", "train", {"worker": 1})
    for episode in range(3):  # 3 x (2 steps + 1 episode) rows: one flush after the 7th row
        _episode(rec, episode)
    assert rec.buffered == 2 and _rows(store, Episode) == 2 and _rows(store, Step) == 5
    # the files hold at least what the store holds (a resumed instance filters them to it): every
    # recorded episode's line (written as recorded, no flush), the steps the store holds
    written = _lines(rec.paths.episodes)
    assert [row["episode"] for row in written] == [0, 1, 2]
    with rec.paths.average_reward(0, "training").open(newline="", encoding="utf-8") as fh:
        assert [row["episode"] for row in csv.DictReader(fh)] == ["0", "1", "2"]
    with rec.paths.all_transactions.open(newline="", encoding="utf-8") as fh:
        assert len(list(csv.DictReader(fh))) == 5
    rec.flush()
    assert _rows(store, Episode) == 3 and len(_lines(rec.paths.episodes)) == 3
    with rec.paths.all_transactions.open(newline="", encoding="utf-8") as fh:
        assert len(list(csv.DictReader(fh))) == 6
    rec.phase_finished()
    rec.finish("finished")


def test_failed_run_writes_every_finished_episode(store: Store, make_document: Any, tmp_path: Path) -> None:
    rec = store.recorder(make_document(), results_root=tmp_path, flush_rows=1000)
    rec.start()
    rec.phase_started(0, "training", "train", {"worker": 1})
    for episode in range(4):
        _episode(rec, episode)
    rec.finish("failed", error="RuntimeError: boom")
    lines = _lines(rec.paths.episodes)
    assert [row["episode"] for row in lines] == [0, 1, 2, 3] and _rows(store, Episode) == 4
    assert lines[0] == {"run": rec.run_uid, "phase": "training", "mode": "train", "worker": 0,
                        "episode": 0, "agent": "learner", "steps": 2, "reward": -2.0,
                        "objective": -1.0, "wall_time": 0.01}
    with store.database.session() as session:
        extras = session.execute(select(Episode.extras).order_by(Episode.id)).scalars().first()
    assert extras == {"info": {"taxi": {"prob": 1.0}}}
