"""Per-run seeds come from one function, ``run_seed``: numpy's SeedSequence
(``xdoe._random.seed_word``) keyed by the levels' canonical JSON."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

from xdoe._random import seed_word
from xdoe.design.runfiles._seeds import run_seed, seed_levels
from xdoe.errors import DesignError

#: (root seed, levels, repetition, seed) as main at aea22cf wrote them (its seeds were computed
#: without numpy, bit for bit numpy's): the seeds of existing run files must not change
PINNED = [(0, {}, 0, 3664239610), (1, {"a": 1}, 0, 14015044), (1, {"a": 1.0}, 0, 4017059456),
          (1, {"a": True}, 3, 765956805), (1, {"a": -0.0}, 0, 595796748),
          (42, {"b": [1, 2], "a": "x"}, 7, 3806597185), (2**32, {"é": "ü"}, 0, 163836461),
          (2**64 + 5, {"z": None}, 2**32, 2142543103), (2**128 - 1, {"k": {"n": 1}}, 1, 3171663935),
          (7, {"~copy": 2, "a": 0.5}, 0, 3658727192)]


def test_seed_word_is_the_first_generate_state_word() -> None:
    for seed, key in [(0, ()), (7, (1, 2)), (2**64 + 5, (4, 2**32 - 1, 0))]:
        ss = np.random.SeedSequence(seed, spawn_key=key)
        assert seed_word(seed, *key) == int(ss.generate_state(1, np.uint32)[0])


def test_run_seed_as_documented() -> None:
    levels = {"alpha": 0.5, "agent": ["learner"], "flag": True}
    digest = hashlib.sha256(json.dumps(levels, sort_keys=True, separators=(",", ":")).encode()).digest()
    key = (1, int.from_bytes(digest[:4], "big"), int.from_bytes(digest[4:8], "big"), 3)
    ss = np.random.SeedSequence(9, spawn_key=key)
    assert run_seed(9, levels, 3) == int(ss.generate_state(1, np.uint32)[0])


@pytest.mark.parametrize(("root", "levels", "repetition", "seed"), PINNED)
def test_run_seeds_are_the_ones_run_files_hold(root: int, levels: dict, repetition: int, seed: int) -> None:
    assert run_seed(root, levels, repetition) == seed


def test_copies_of_a_point_get_seeds_of_their_own() -> None:
    levels = {"a": 0.5}
    assert seed_levels(levels, 0) is levels
    assert run_seed(7, seed_levels(levels, 2), 0) == 3658727192 != run_seed(7, levels, 0)


def test_run_seed_refuses_nan_and_negative() -> None:
    with pytest.raises(DesignError, match="NaN"):
        run_seed(1, {"x": float("nan")}, 0)
    with pytest.raises(DesignError):
        run_seed(-1, {}, 0)
    with pytest.raises(DesignError):
        run_seed(1, {}, -1)
