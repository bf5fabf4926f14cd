"""Shared sub-trees of run documents (the expander's caches) never change what is written."""

from __future__ import annotations

import pytest

from xdoe.design.runfiles import RunSequence, prepare
from xdoe.design.runfiles import _shared
from xdoe.documents import dump_canonical

DOC = {
    "uid": "cache",
    "seed": 5,
    "repetitions": 2,
    "factors": {"a": {"levels": [1, 1.0, True, "x"]}, "b": {"levels": [[1, 2], [3]]}, "c": {"levels": [3, 2]}},
    "definitions": {
        "environments": {
            "e1": {"environment": {"name": "m:E", "uid": "e1", "params": {"a": "${a}", "tag": "e-${c}"}}},
            "e2": {"environment": {"name": "m:E", "uid": "e2", "params": {"b": "${b}"}}},
        },
        "agents": {"ag": {"brain": {"name": "m:B", "params": {"c": "${c}"}}, "muscle": {"name": "m:M"},
                          "objective": {"name": "m:O"}}},
        "sensors": {"s1": {"e1": [0], "e2": [1]}, "s2": {"e1": [2]}},
        "simulation": {"s": {"name": "m:S"}},
        "phase_config": {"p": {"mode": "train", "episodes": "${c}"}, "q": {"mode": "test"}},
    },
    "schedule": [
        {"train": {"environments": [["e1"], ["e1", "e2"]], "agents": [["ag"]], "sensors": {"ag": ["s1", "s2"]},
                   "simulation": ["s"], "phase_config": ["p"]}},
        {"test": {"phase_config": ["q"]}},
    ],
}


@pytest.mark.parametrize("limit", [2, 5, 4096])
def test_shared_documents_equal_fresh_ones(monkeypatch: pytest.MonkeyPatch, limit: int) -> None:
    monkeypatch.setattr(_shared, "MAX_INSTANCES", limit)  # also forgets and rebuilds the caches
    experiment, design, runs = prepare(DOC)
    assert len(runs) == 4 * 2 * 2 * 2 * 2 * 2  # a, b, c, environments, sensors; 2 repetitions
    for k in range(len(runs)):
        fresh = RunSequence(experiment, design)[k]  # a new expander: nothing shared yet
        assert runs.dump(k) == dump_canonical(fresh), k
        assert runs[k] == fresh
    texts = [runs.dump(k) for k in range(len(runs))]
    # 1, 1.0 and true are different levels: the caches are keyed by type too
    assert any("a: 1.0\n" in t for t in texts) and any("a: 1\n" in t for t in texts)
    assert any("a: true\n" in t for t in texts)
