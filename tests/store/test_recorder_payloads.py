"""The recorder's per-step hot path writes exactly what ``compact_json`` would."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sqlalchemy import select

from xdoe.store import Step, Store
from xdoe.store._json import compact_json, json_default


def test_compact_json_is_json_dumps_of_its_options() -> None:
    """compact_json (json's encoder made once) writes the text of
    ``json.dumps`` with sorted keys, no spaces, ``ensure_ascii=False`` and
    :func:`json_default`; a value that contains itself fails."""
    values: list[Any] = [
        {"taxi.observation": 328}, {"b": 1.5, "a": [1, 2, {"z": None, "y": True}]},
        {"nan": float("nan"), "inf": -math.inf}, {"ü": "ß"}, {"np": np.int64(3), "arr": np.arange(3)},
        {"f32": np.float32(0.25), "bool": np.bool_(True)}, [], 7, "text", None, -0.0, (1, "é\n"),
        {"info": {"taxi": {"prob": 1.0, "terminated": True, "truncated": False}}}, {2: "int key", 1.5: "float"},
    ]
    for value in values:
        assert compact_json(value) == json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                                                 default=json_default)
    cyclic: dict[str, Any] = {}
    cyclic["self"] = cyclic
    with pytest.raises(RecursionError):
        compact_json(cyclic)


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
