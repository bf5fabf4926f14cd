"""The episode loop (``Worker.run_episode``: one agent, the vanilla
controller, the environment's ``done`` the only step check) makes the calls
``Worker.act`` and ``Worker.update`` make: the same brain updates with the
same arguments, the same episodes, the same errors. The reference is the same
run under ``TakingTurnsSimController``, whose step for one agent is
``act(0)`` then ``update()`` (the loop is not used for it)."""

from __future__ import annotations

import sqlite3

import components
import pytest
from runbuilders import counting_phase, run_document, taxi_phase

from xdoe.execution import run
from xdoe.execution._worker import Worker
from xdoe.store import Store

TAXI_CONDITIONS = [{"name": "xdoe.conditions:EnvironmentTerminationCondition"}]


@pytest.fixture()
def loops(monkeypatch):
    """The episodes that ran in the loop (``run_episode`` answered True)."""
    ran: list[int] = []
    original = Worker.run_episode

    def counted(self: Worker) -> bool:
        looped = original(self)
        if looped:
            ran.append(self.episode)
        return looped

    monkeypatch.setattr(Worker, "run_episode", counted)
    components.Q_CALLS.clear()
    yield ran
    components.Q_CALLS.clear()


def _taxi(controller: str, tmp_path, name: str, rows: bool = False, **options) -> tuple[list, ...]:
    """The ``thinking_values`` calls and the episode rows of a Taxi Q-learning run (60 training
    episodes, 3 test episodes) under ``controller``; with ``rows``, also its step rows and the bytes
    of its ``all_transactions.csv``."""
    train = taxi_phase(episodes=60, brain={"name": "components:RecordingQLearningBrain", "params": {"alpha": 0.5}})
    test = taxi_phase(mode="test", episodes=3)
    for phase in (train, test):
        phase["environments"][0]["environment"]["params"]["max_episode_steps"] = 100
        phase["simulation"] = {"name": controller, "conditions": TAXI_CONDITIONS}
    test["agents"] = train["agents"]
    components.Q_CALLS.clear()
    with Store(f"sqlite:///{tmp_path / f'{name}.sqlite'}") as store:
        result = run(run_document(("training", train), ("testing", test)), store=store,
                     results=tmp_path / name, **options)
        assert result.ok, result.traceback
        episodes = [(e["phase"], e["episode"], e["steps"], e["reward"], e["objective"], e["extras"])
                    for e in store.runs.episodes("test-run")]
        if not rows:
            return list(components.Q_CALLS), episodes
    with sqlite3.connect(tmp_path / f"{name}.sqlite") as con:  # every column of every step row
        steps = con.execute("SELECT * FROM step ORDER BY id").fetchall()
    (transactions,) = (tmp_path / name).rglob("all_transactions.csv")
    return list(components.Q_CALLS), episodes, steps, transactions.read_bytes()


def test_loop_makes_the_calls_of_act_and_update(tmp_path, loops):
    calls, episodes = _taxi("xdoe.simulation:VanillaSimController", tmp_path, "loop")
    assert len(loops) == 63  # every episode of both phases ran in the loop
    loops.clear()
    turn_calls, turn_episodes = _taxi("xdoe.simulation:TakingTurnsSimController", tmp_path, "turns")
    assert loops == []
    assert len(calls) == sum(e[2] for e in episodes[:60]) > 1000  # one update per step of the training phase
    assert calls == turn_calls
    assert episodes == turn_episodes
    assert {e[2] for e in episodes} >= {100} and min(e[2] for e in episodes) < 100  # time-limited and terminated ends


def test_steps_stored_in_the_loop_are_those_act_and_update_store(tmp_path, loops):
    calls, episodes = _taxi("xdoe.simulation:VanillaSimController", tmp_path, "plain")
    loops.clear()
    stored = _taxi("xdoe.simulation:VanillaSimController", tmp_path, "loop", store_steps="all", rows=True)
    assert len(loops) == 63
    loops.clear()
    turns = _taxi("xdoe.simulation:TakingTurnsSimController", tmp_path, "turns", store_steps="all", rows=True)
    assert loops == []
    assert stored == turns
    assert (stored[0], stored[1]) == (calls, episodes)  # storing steps changes nothing else
    assert len(stored[2]) == sum(e[2] for e in episodes) and stored[3] == turns[3]


@pytest.mark.parametrize("controller", ["xdoe.simulation:VanillaSimController",
                                        "xdoe.simulation:TakingTurnsSimController"])
def test_an_action_outside_its_space_fails_the_run_with_one_message(store, tmp_path, controller, loops):
    phase = counting_phase(episodes=2, length=3, conditions=TAXI_CONDITIONS,
                           muscle={"name": "components:OutOfSpaceMuscle", "params": {}})
    phase["simulation"]["name"] = controller
    result = run(run_document(("training", phase)), store=store, results=tmp_path / "r")
    assert not result.ok
    assert "agent 'agent': value 7 for actuator 'env.push' is outside its space Discrete(3)" in result.error
