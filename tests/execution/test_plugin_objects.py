"""The executor writes nothing into plugin objects (issue 34, item 4): what
it needs to call a plugin (the ids and spaces of an agent's sensors and
actuators, an environment's actuators, the state of an environment that
writes ``update``) is held by its adapters (``AgentRuntime``,
``EnvironmentRuntime``). A Taxi Q-learning run (two workers, in-process and
in worker processes) and a two-agent tic-tac-toe run with object-form
plugins leave no attribute whose name starts with ``_xdoe`` on any brain,
muscle, objective or environment, at their first contract call or after
the run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from xdoe.agent import Brain, Muscle, Objective
from xdoe.environment import Environment
from xdoe.execution import parallel_workers, run

import plugin_objects_components as seen
from runbuilders import run_document

VANILLA = "xdoe.simulation:VanillaSimController"
DONE = [{"name": "xdoe.conditions:EnvironmentTerminationCondition"}]
TAXI = {"name": "plugin_objects_components:SeenGymnasiumEnvironment", "uid": "taxi",
        "params": {"env_id": "Taxi-v4", "max_episode_steps": 30}}
LEARNER = {"name": "learner",
           "brain": {"name": "plugin_objects_components:SeenQLearningBrain", "params": {"alpha": 0.5}},
           "muscle": {"name": "plugin_objects_components:SeenQLearningMuscle", "params": {"epsilon": 0.2}},
           "objective": {"name": "plugin_objects_components:SeenRewardObjective", "params": {}}}


def _phase(env: dict, agents: list, mode: str, episodes: int, worker: int = 1,
           simulation: str = VANILLA) -> dict:
    return {"environments": [{"environment": env}], "agents": agents,
            "simulation": {"name": simulation, "conditions": DONE},
            "phase_config": {"mode": mode, "worker": worker, "episodes": episodes}}


TAXI_RUN = run_document(("training", _phase(TAXI, [LEARNER], "train", 3, worker=2)),
                        ("testing", _phase(TAXI, [LEARNER], "test", 2)), uid="taxi-objects")
TICTACTOE_RUN = run_document(("training", _phase(
    {"name": "plugin_objects_components:SeenTicTacToe", "uid": "ttt"},
    [{**LEARNER, "name": "x", "objective": {"name": "plugin_objects_components:SeenRewardObjective",
                                            "params": {"reward_ids": ["ttt.reward_x"]}},
      "sensors": ["ttt.board", "ttt.turn"], "actuators": ["ttt.move_x"]},
     {"name": "o", "brain": {"name": "plugin_objects_components:ThinkingBrain", "params": {}},
      "muscle": {"name": "plugin_objects_components:SeenDummyMuscle", "params": {}},
      "objective": {"name": "plugin_objects_components:SeenRewardObjective",
                    "params": {"reward_ids": ["ttt.reward_o"]}},
      "sensors": ["ttt.board", "ttt.turn"], "actuators": ["ttt.move_o"]}],
    "train", 4, simulation="xdoe.simulation:TakingTurnsSimController")), uid="ttt-objects")


def _xdoe_names(names: Any) -> list[str]:
    return [name for name in names if name.startswith("_xdoe")]


def _run_and_check(document: dict, tmp_path: Path, kinds: tuple[type, ...]) -> None:
    seen.SEEN.clear()
    result = run(document, store=f"sqlite:///{tmp_path / 'store.sqlite'}", results=tmp_path / "results",
                 store_steps="all")
    assert result.ok, result.traceback
    met = {kind for obj, _ in seen.SEEN for kind in kinds if isinstance(obj, kind)}
    assert met == set(kinds)  # every kind of plugin object was met
    for obj, first in seen.SEEN:
        assert _xdoe_names(first) == [], type(obj).__name__  # at its first contract call
        assert _xdoe_names(vars(obj)) == [], type(obj).__name__  # after the run
        assert _xdoe_names(dir(obj)) == [], type(obj).__name__  # nor on its class


def test_a_taxi_q_learning_run_writes_nothing_into_its_plugins(tmp_path: Path) -> None:
    _run_and_check(TAXI_RUN, tmp_path, (Brain, Muscle, Objective, Environment))


def test_parallel_workers_write_nothing_into_the_brain(tmp_path: Path) -> None:
    """Under ``--parallel-workers`` the run process keeps the brain (the
    muscles, objectives and environments live in the worker processes)."""
    with parallel_workers():
        _run_and_check(TAXI_RUN, tmp_path, (Brain,))


def test_a_two_agent_run_with_object_form_plugins_writes_nothing_into_them(tmp_path: Path) -> None:
    """Tic-tac-toe writes ``update``, agent ``o``'s brain ``thinking`` and its
    muscle ``propose_actions``: the executor's adapters call those forms."""
    _run_and_check(TICTACTOE_RUN, tmp_path, (Brain, Muscle, Objective, Environment))
    kinds = {type(obj).__name__ for obj, _ in seen.SEEN}
    assert {"SeenTicTacToe", "ThinkingBrain", "SeenDummyMuscle"} <= kinds


def test_the_base_classes_declare_no_xdoe_attribute() -> None:
    for base in (Brain, Muscle, Objective, Environment):
        assert _xdoe_names(dir(base)) == []
