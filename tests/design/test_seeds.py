"""Per-run seeds computed without a SeedSequence object (issue 16) are
numpy's, bit for bit."""

from __future__ import annotations

import random

import numpy as np
import pytest

from xdoe._random import seed_word
from xdoe.design._seeds import LevelSeeds, _first_word, run_seed
from xdoe.errors import DesignError

ROOTS = [0, 1, 2, 42, 2**31 - 1, 2**32 - 1, 2**32, 2**32 + 1, 2**63, 2**64 - 1, 2**64 + 5, 2**96 + 3,
         2**127 + 11, 2**128 - 1, 2**128, 2**160 + 7, 2**200 + 99]


def numpy_word(root: int, key: tuple[int, ...]) -> int:
    """What every other seed of xdoe is made with: ``SeedSequence`` itself."""
    return seed_word(root, 1, *key)


def test_seed_word_is_the_first_generate_state_word() -> None:
    for seed, key in [(0, ()), (7, (1, 2)), (2**64 + 5, (4, 2**32 - 1, 0))]:
        ss = np.random.SeedSequence(seed, spawn_key=key)
        assert seed_word(seed, *key) == int(ss.generate_state(1, np.uint32)[0])


@pytest.mark.parametrize("root", ROOTS)
def test_first_word_is_seed_sequence_for_edge_keys(root: int) -> None:
    edges = [0, 1, 2, 2**31, 2**32 - 1]
    for key in [(a, b, r) for a in edges for b in edges for r in (0, 1, 7, 2**32 - 1, 2**32, 2**40 + 3)]:
        assert _first_word(root, key) == numpy_word(root, key), (root, key)


def test_first_word_is_seed_sequence_for_many_random_keys() -> None:
    rng = random.Random(16)
    for _ in range(20_000):
        root = rng.choice([rng.getrandbits(rng.choice([1, 8, 31, 32, 33, 64, 100, 128, 129, 256])), rng.choice(ROOTS)])
        key = (rng.getrandbits(32), rng.getrandbits(32), rng.choice([0, 1, 2, 3, rng.getrandbits(16)]))
        assert _first_word(root, key) == numpy_word(root, key), (root, key)


def test_run_seed_as_documented() -> None:
    import hashlib
    import json

    levels = {"alpha": 0.5, "agent": ["learner"], "flag": True}
    digest = hashlib.sha256(json.dumps(levels, sort_keys=True, separators=(",", ":")).encode()).digest()
    key = (int.from_bytes(digest[:4], "big"), int.from_bytes(digest[4:8], "big"), 3)
    assert run_seed(9, levels, 3) == numpy_word(9, key)


def test_run_seed_refuses_nan_and_negative() -> None:
    with pytest.raises(DesignError, match="NaN"):
        run_seed(1, {"x": float("nan")}, 0)
    with pytest.raises(DesignError):
        run_seed(-1, {}, 0)


def test_level_seeds_equal_run_seed() -> None:
    # remembered texts per level (and the levels that bypass them) give run_seed's seed
    seeds = LevelSeeds(11)
    cases = [{}, {"a": 1}, {"a": 1.0}, {"a": True}, {"a": 0.0}, {"a": -0.0}, {"a": None}, {"a": "x"},
             {"b": [1, 2], "a": 1}, {"é": "ü\u2028", "a": {"k": 1}}, {"z": 0.1, "a": 2, "m": "q"}]
    for _ in range(2):  # the second time from the remembered texts
        for levels in cases:
            for repetition in (0, 3):
                assert seeds.seed(levels, repetition) == run_seed(11, levels, repetition), levels
    assert seeds.seed({"a": -0.0}, 0) != seeds.seed({"a": 0.0}, 0)
    with pytest.raises(DesignError, match="NaN"):
        seeds.seed({"x": float("nan")}, 0)
