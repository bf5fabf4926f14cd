"""JSON of the store: the cells of recorded payloads are compact_json's text."""

from __future__ import annotations


import numpy as np


def test_step_cells_of_one_key_are_the_compact_json_text():
    """The recorder writes one-key dicts (a step's sensor, action, reward)
    without the JSON encoder: the text must be exactly compact_json's."""
    from xdoe.store._json import compact_json
    from xdoe.store.recorder._cells import _json_cell

    cases = [{"taxi.observation": 29}, {"a": -1.0}, {'é"\\\n': 1e16}, {"a": 1e-7}, {"a": 5e-324},
             {"a": -0.0}, {"a": 2**70}, {"a": float("nan")}, {"a": float("inf")}, {"a": True},
             {"a": None}, {"a": np.int64(3)}, {"a": np.float32(0.5)}, {1: 2}, {"b": 1, "a": 2}, {}]
    for value in cases:
        assert _json_cell(value) == compact_json(value), value
    assert _json_cell(None) is None


def test_json_cell_prefix_cache_stays_bounded():
    from xdoe.store.recorder import _cells as rows
    from xdoe.store._json import compact_json

    for k in range(rows._MAX_PREFIXES + 10):
        cell = rows._json_cell({f"sensor-{k}": k})
        assert len(rows._PREFIXES) <= rows._MAX_PREFIXES
    assert cell == compact_json({f"sensor-{k}": k})
