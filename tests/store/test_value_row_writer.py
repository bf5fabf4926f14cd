"""``RunRecorder.value_row_writer`` records exactly the rows ``step`` records."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import sqlalchemy as sa

from xdoe.errors import StoreError
from xdoe.store import Store

VALUES: list[Any] = [3, -7, True, np.int64(4), 2.5, -0.0, float("nan"), float("inf"), np.float32(0.25),
                     None, "x\u00e9\"", [1, 2]]


def _recorded(store: Store, document: dict, root: Path, lean: bool) -> tuple[list[tuple], str]:
    rec = store.recorder(document, results_root=root, store_steps="all")
    rec.start()
    rec.phase_started(0, "training", "train", {"worker": 1})
    keys = ("taxi.observation", 'we"ird\u00e9', "taxi.reward")
    write = rec.value_row_writer(1, "learner", *keys)
    for i, value in enumerate(VALUES):
        for episode, (obs, action, reward) in enumerate(((value, 2, -1.0), (5, value, 0.5), (6, 1, value))):
            if lean:
                write(episode, i, obs, action, reward, -1.5 + i)
            else:
                rec.step(1, episode, i, "learner", {keys[0]: obs}, {keys[1]: action}, {keys[2]: reward},
                         -1.5 + i, False)
    rec.phase_finished()
    rec.finish("finished")
    with store.engine.connect() as con:
        rows = [tuple(r) for r in con.execute(sa.text(
            "SELECT worker, episode, step, agent, sensors, actions, rewards, objective, done FROM step "
            "ORDER BY id"))]
    return rows, (rec.results_dir / "all_transactions.csv").read_text(encoding="utf-8")


def test_value_row_writer_rows_equal_step_rows(tmp_path: Path, make_document: Any) -> None:
    out = {}
    for lean in (True, False):
        store = Store(f"sqlite:///{tmp_path / f'{lean}.sqlite'}")
        try:
            out[lean] = _recorded(store, make_document(), tmp_path / f"results-{lean}", lean)
        finally:
            store.close()
    assert len(out[True][0]) == 3 * len(VALUES)
    assert repr(out[True][0]) == repr(out[False][0])  # repr: NaN cells compare as text
    assert out[True][1] == out[False][1]


def test_value_row_writer_needs_an_open_phase(store: Store, make_document: Any, tmp_path: Path) -> None:
    rec = store.recorder(make_document(), results_root=tmp_path, store_steps="all")
    rec.start()
    rec.phase_started(0, "training", "train", {"worker": 1})
    write = rec.value_row_writer(0, "learner", "s", "a", "r")
    rec.phase_finished()
    with pytest.raises(StoreError, match="no phase is open"):
        write(0, 0, 1, 1, 0.0, 0.0)
    rec.finish("finished")
    with pytest.raises(StoreError, match="after finish"):
        write(0, 0, 1, 1, 0.0, 0.0)
