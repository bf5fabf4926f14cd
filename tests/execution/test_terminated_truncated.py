"""terminated/truncated and per-agent rewards through the executor's loop."""

from __future__ import annotations

import components
import pytest
from runbuilders import counting_phase, run_document

from xdoe.execution import run


@pytest.fixture(autouse=True)
def _clear_brains():
    components.BRAINS.clear()
    yield
    components.BRAINS.clear()


def _last_steps(brain):
    return [(done, trunc) for (_, _, _, _, done), trunc in zip(brain.experiences, brain.truncated) if done]


def test_environment_termination_reaches_the_brain_as_terminated(store, tmp_path):
    result = run(run_document(("training", counting_phase(episodes=2, length=3))),
                 store=store, results=tmp_path / "r")
    assert result.ok, result.traceback
    (brain,) = components.BRAINS
    assert _last_steps(brain) == [(True, False), (True, False)]
    assert not any(brain.truncated)


def test_episode_cut_by_a_condition_is_truncated(store, tmp_path):
    cut = [{"name": "xdoe.conditions:MaxStepsTerminationCondition", "params": {"episode_steps": 2}}]
    result = run(run_document(("training", counting_phase(episodes=2, length=10, conditions=cut))),
                 store=store, results=tmp_path / "r")
    assert result.ok, result.traceback
    (brain,) = components.BRAINS
    assert len(brain.experiences) == 4
    assert _last_steps(brain) == [(True, True), (True, True)]


def _ttt_phase(objective_params):
    def agent(name, move):
        return {"name": name, "brain": {"name": "xdoe.agents:DummyBrain"},
                "muscle": {"name": "xdoe.agents:DummyMuscle"},
                "objective": {"name": "xdoe.agents:RewardObjective", "params": objective_params(name)},
                "sensors": ["ttt.board"], "actuators": [move]}

    return {
        "environments": [{"environment": {"name": "xdoe.environments:TicTacToeEnvironment", "uid": "ttt"}}],
        "agents": [agent("x", "ttt.move_x"), agent("o", "ttt.move_o")],
        "simulation": {"name": "xdoe.simulation:TakingTurnsSimController"},
        "phase_config": {"mode": "train", "episodes": 40},
    }


def test_each_agent_receives_only_its_own_reward(store, tmp_path):
    result = run(run_document(("training", _ttt_phase(lambda name: {}))), store=store,
                 results=tmp_path / "r")
    assert result.ok, result.traceback
    games: dict[int, dict[str, tuple[float, float]]] = {}
    for r in store.runs.episodes("test-run"):
        games.setdefault(r["episode"], {})[r["agent"]] = (r["reward"], r["objective"])
    assert len(games) == 40
    outcomes = set()
    for g in games.values():
        # reward (own rewards summed) == objective (RewardObjective without ids: own only)
        assert all(reward == objective for reward, objective in g.values())
        outcomes.add((g["x"][0], g["o"][0]))
    # win/loss +1/-1, illegal move -1 for the mover and 0 for the other, draw 0/0
    assert outcomes <= {(1.0, -1.0), (-1.0, 1.0), (-1.0, 0.0), (0.0, -1.0), (0.0, 0.0)}
    assert {(1.0, -1.0), (-1.0, 1.0)} & outcomes


def test_reward_ids_may_name_another_agents_reward(store, tmp_path):
    # each agent scores the *other* player's reward: objective == -reward on decided games
    other = {"x": "ttt.reward_o", "o": "ttt.reward_x"}
    result = run(run_document(("training", _ttt_phase(lambda name: {"reward_ids": [other[name]]}))),
                 store=store, results=tmp_path / "r")
    assert result.ok, result.traceback
    rows = list(store.runs.episodes("test-run"))
    assert any(r["reward"] == 1.0 and r["objective"] == -1.0 for r in rows)
