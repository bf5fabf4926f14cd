"""JSON of the store: the reusable encoder of recorded payloads."""

from __future__ import annotations

import json
import re
import sys
from typing import Any

import numpy as np
import pytest

from xdoe.store._json import fast_encoder, json_default as _default

OPTIONS = [
    {"sort_keys": True, "separators": (",", ":"), "ensure_ascii": False, "default": _default},  # compact_json
    {"ensure_ascii": False},  # episodes.jsonl lines
    {},
]
VALUES: list[Any] = [
    {"b": 1, "a": [1.5, float("nan"), float("inf"), -float("inf"), None, True, "é\"\n\u2028"]},
    {"taxi.observation": 123}, "text", 3, -0.0, 1e300, None, [], {},
    {"nested": {"z": {"y": [1, {"x": 2.5}]}}, "k": (1, 2)},
    {1: "int key", "2": "str key"},
]


@pytest.mark.parametrize("options", OPTIONS)
def test_fast_encoder_writes_what_json_dumps_writes(options: dict[str, Any]) -> None:
    encode = fast_encoder(**options)
    for value in VALUES:
        try:
            expected: Any = json.dumps(value, **options)
        except TypeError as exc:  # sort_keys over int and str keys
            with pytest.raises(TypeError, match=re.escape(str(exc))):
                encode(value)
            continue
        assert encode(value) == expected
        assert encode(value) == expected  # reused: no state left from the first call


def test_fast_encoder_default_and_errors() -> None:
    encode = fast_encoder(**OPTIONS[0])
    value = {"int": np.int64(3), "array": np.arange(3), "float": np.float32(0.5)}
    assert encode(value) == json.dumps(value, **OPTIONS[0]) == '{"array":[0,1,2],"float":0.5,"int":3}'
    with pytest.raises(TypeError, match="cannot be stored as JSON"):
        encode({"x": object()})
    circular: dict[str, Any] = {}
    circular["self"] = circular
    with pytest.raises(ValueError, match="Circular reference"):
        encode(circular)
    assert encode({"after": "errors"}) == '{"after":"errors"}'


@pytest.mark.skipif(sys.implementation.name != "cpython", reason="the C encoder is CPython's")
def test_fast_encoder_uses_the_prebuilt_c_encoder() -> None:
    assert getattr(fast_encoder(**OPTIONS[0]), "__self__", None) is None  # not JSONEncoder.encode


def test_step_cells_of_one_key_are_the_compact_json_text():
    """The recorder writes one-key dicts (a step's sensor, action, reward)
    without the JSON encoder: the text must be exactly compact_json's."""
    from xdoe.store._json import compact_json
    from xdoe.store._recorder_rows import _json_cell

    cases = [{"taxi.observation": 29}, {"a": -1.0}, {'é"\\\n': 1e16}, {"a": 1e-7}, {"a": 5e-324},
             {"a": -0.0}, {"a": 2**70}, {"a": float("nan")}, {"a": float("inf")}, {"a": True},
             {"a": None}, {"a": np.int64(3)}, {"a": np.float32(0.5)}, {1: 2}, {"b": 1, "a": 2}, {}]
    for value in cases:
        assert _json_cell(value) == compact_json(value), value
    assert _json_cell(None) is None


def test_json_cell_prefix_cache_stays_bounded():
    from xdoe.store import _recorder_rows as rows
    from xdoe.store._json import compact_json

    for k in range(rows._MAX_PREFIXES + 10):
        cell = rows._json_cell({f"sensor-{k}": k})
        assert len(rows._PREFIXES) <= rows._MAX_PREFIXES
    assert cell == compact_json({f"sensor-{k}": k})
