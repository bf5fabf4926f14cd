"""PettingZooEnvironment: both APIs, masks, per-agent rewards (the executor side:
tests/execution/test_pettingzoo_runner.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pettingzoo")
pytest.importorskip("pygame")  # PettingZoo's classic games import it

from xdoe.environment import ActuatorInformation, check_environment  # noqa: E402
from xdoe.components.environments import PettingZooEnvironment  # noqa: E402

sys.path.insert(0, str(Path(__file__).parents[2] / "execution"))  # pz_leaving


@pytest.mark.parametrize("params", [
    {"env": "pettingzoo.classic.tictactoe_v3"},
    {"env": "pettingzoo.classic.rps_v2"},
    {"env": "pettingzoo.classic.rps_v2", "api": "aec"},
    {"env": "pz_leaving"},
])
def test_check_environment(params):
    check_environment(PettingZooEnvironment(uid="g", seed=1, **params), params=params)


def test_tictactoe_ids_masks_and_own_rewards():
    env = PettingZooEnvironment(uid="ttt", seed=0, env="pettingzoo.classic.tictactoe_v3")
    assert env.api == "aec"
    base = env.start_environment()
    ids = [s.uid for s in base.sensors]
    assert ids == ["ttt.player_1.observation", "ttt.player_1.action_mask",
                   "ttt.player_2.observation", "ttt.player_2.action_mask"]
    assert [a.uid for a in base.actuators] == ["ttt.player_1.action", "ttt.player_2.action"]

    def move(player, cell):
        return env.update([ActuatorInformation(f"ttt.{player}.action", base.actuators[0].space, cell)])

    state = move("player_2", 4)  # not player_2's turn: nothing happens
    assert not state.done and all(r.value == 0 for r in state.rewards)
    for player, cell in [("player_1", 0), ("player_2", 3), ("player_1", 1), ("player_2", 4)]:
        state = move(player, cell)
        assert not state.done
    mask = {s.uid: s.value for s in state.sensors}["ttt.player_1.action_mask"]
    assert mask.tolist() == [0, 0, 1, 0, 0, 1, 1, 1, 1]
    state = move("player_1", 2)  # top row: player_1 wins
    assert state.terminated and not state.truncated
    assert {(r.uid, r.owner, r.value) for r in state.rewards} == {
        ("ttt.player_1.reward", "ttt.player_1.action", 1.0), ("ttt.player_2.reward", "ttt.player_2.action", -1.0)}
    assert state.left == {"ttt.player_1.action": False, "ttt.player_2.action": False}
