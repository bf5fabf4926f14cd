"""PettingZooEnvironment through the executor: masks honoured by the
built-in muscles, per-agent rewards, agents leaving the game."""

from __future__ import annotations

import components
import pytest

pytest.importorskip("pettingzoo")
pytest.importorskip("pygame")  # PettingZoo's classic games import it

from xdoe.execution import run  # noqa: E402


def _agent(name, actuator, sensors, brain="components:RecordingBrain", muscle="xdoe.agents:DummyMuscle"):
    return {"name": name, "brain": {"name": brain}, "muscle": {"name": muscle},
            "objective": {"name": "xdoe.agents:RewardObjective"}, "sensors": sensors, "actuators": [actuator]}


def test_random_players_never_move_illegally_and_see_their_own_rewards(store, tmp_path):
    def player(p):
        return _agent(p, f"g.{p}.action", [f"g.{p}.observation", f"g.{p}.action_mask"],
                      brain="xdoe.agents:DummyBrain")

    phase = {"environments": [{"environment": {"name": "xdoe.environments:PettingZooEnvironment", "uid": "g",
                                               "params": {"env": "pettingzoo.classic.tictactoe_v3"}}}],
             "agents": [player("player_1"), player("player_2")],
             "simulation": {"name": "xdoe.simulation:TakingTurnsSimController"},
             "phase_config": {"mode": "train", "episodes": 30}}
    result = run({"uid": "ttt", "experiment_uid": "pz", "seed": 2, "schedule": [{"play": phase}]},
                 store=store, results=tmp_path / "r")
    assert result.ok, result.traceback
    games: dict[int, dict[str, float]] = {}
    for r in store.runs.episodes("ttt"):
        games.setdefault(r["episode"], {})[r["agent"]] = r["reward"]
        assert r["steps"] >= 5  # no illegal move ends a game early
    assert {(g["player_1"], g["player_2"]) for g in games.values()} <= {(1.0, -1.0), (-1.0, 1.0), (0.0, 0.0)}


def test_agents_leaving_stop_acting_with_their_own_flag(store, tmp_path):
    components.BRAINS.clear()
    phase = {"environments": [{"environment": {"name": "xdoe.environments:PettingZooEnvironment", "uid": "g",
                                               "params": {"env": "pz_leaving"}}}],
             "agents": [_agent("s", "g.short.action", ["g.short.observation"]),
                        _agent("l", "g.long.action", ["g.long.observation"])],
             "simulation": {"name": "xdoe.simulation:VanillaSimController"},
             "phase_config": {"mode": "train", "episodes": 2}}
    result = run({"uid": "leave", "experiment_uid": "pz", "seed": 2, "schedule": [{"play": phase}]},
                 store=store, results=tmp_path / "r")
    assert result.ok, result.traceback
    short, long = components.BRAINS
    assert [e[2] for e in short.experiences] == [0, 1, 0, 1]  # steps 0, 1 per episode; then it left
    assert [e[4] for e in short.experiences] == [False, True] * 2 and not any(short.truncated)
    assert [e[2] for e in long.experiences] == [0, 1, 2, 3] * 2
    assert [(e[4], t) for e, t in zip(long.experiences, long.truncated)][3] == (True, True)
    assert [r["steps"] for r in store.runs.episodes("leave")] == [4, 4, 4, 4]
    components.BRAINS.clear()
