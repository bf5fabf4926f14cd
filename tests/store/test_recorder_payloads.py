"""The recorder's per-step hot path writes exactly what ``compact_json`` would."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import select

from xdoe.store import Step, Store
from xdoe.store._json import compact_json
from xdoe.store.recorder._cells import _encode_compact


def test_prebuilt_encoder_equals_compact_json() -> None:
    values: list[Any] = [
        {"taxi.observation": 328}, {"b": 1.5, "a": [1, 2, {"z": None, "y": True}]},
        {"nan": float("nan"), "inf": -math.inf}, {"ü": "ß"}, {"np": np.int64(3), "arr": np.arange(3)},
        {"f32": np.float32(0.25), "bool": np.bool_(True)}, [], 7, "text",
    ]
    for value in values:
        assert _encode_compact(value) == compact_json(value)


def test_step_rows_hold_compact_json(store: Store, make_document: Any, tmp_path: Path) -> None:
    rec = store.recorder(make_document(), results_root=tmp_path, store_steps="all")
    rec.start()
    rec.phase_started(0, "training", "train", {"worker": 1})
    sensors = {"taxi.observation": np.int64(12), "taxi.extra": [0.5, float("nan")]}
    rec.step(0, 0, 0, "learner", sensors, {"taxi.action": 3}, {"taxi.reward": -1.0}, -1.0, True)
    rec.phase_finished()
    rec.finish("finished")
    with store.database.session() as session:
        row = session.execute(select(Step)).scalar_one()
    assert row.actions == {"taxi.action": 3} and row.rewards == {"taxi.reward": -1.0}
    assert row.sensors["taxi.observation"] == 12 and math.isnan(row.sensors["taxi.extra"][1])
    with (rec.results_dir / "all_transactions.csv").open(encoding="utf-8") as handle:
        text = handle.read()
    assert compact_json(sensors).replace('"', '""') in text
    assert json.loads(compact_json(sensors))["taxi.observation"] == 12
