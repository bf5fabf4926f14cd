"""A plugin written against the value-step API that issue 23 replaced
(main before the one step: ``value_steps = True``, ``value_ids``,
``update_values(action)`` returning a float reward, ``last_state``,
``propose_action_value``, ``thinking_values(observation, action, ...)``,
``internal_reward_value``) still runs unchanged: through its object form,
which that API required to give the same results, with a
``DeprecationWarning`` naming the former methods. The former methods here
raise, so a test passes only if none is called."""

from __future__ import annotations

import sqlite3
import warnings
from pathlib import Path
from typing import Any

from gymnasium import spaces

from xdoe.agent import Brain, Experience, Muscle, Objective
from xdoe._plugins import is_derived
from xdoe.environment import (ActuatorInformation, Environment, EnvironmentBaseline, EnvironmentState,
                              RewardInformation, SensorInformation)
from xdoe.execution import run
from xdoe.store import Store

CELLS = 5


class PlainLine(Environment):
    """Cells 0..4 from a random start; move 0 (left) or 1 (right); reward +1
    at cell 4 (terminated), -0.1 otherwise; truncated after 12 moves."""

    def start_environment(self) -> EnvironmentBaseline:
        self.cell, self.moves = int(self.rng.integers(CELLS - 1)), 0
        return EnvironmentBaseline([self._sensor()], [ActuatorInformation(self.full_id("move"), spaces.Discrete(2))])

    def _sensor(self) -> SensorInformation:
        return SensorInformation(self.full_id("pos"), spaces.Discrete(CELLS), self.cell)

    def update(self, actuators: list[ActuatorInformation]) -> EnvironmentState:
        self.cell = max(0, self.cell + (1 if actuators[0].value == 1 else -1))
        self.moves += 1
        goal = self.cell == CELLS - 1
        return EnvironmentState([self._sensor()], [RewardInformation(self.full_id("r"), 1.0 if goal else -0.1)],
                                terminated=goal, truncated=not goal and self.moves >= 12)


class PlainWalker(Muscle):
    def propose_actions(self, sensors: list[SensorInformation],
                        actuators: list[ActuatorInformation]) -> list[ActuatorInformation]:
        right = self.rng.random() < 0.7 or sensors[0].value == 0
        return [ActuatorInformation(actuators[0].uid, actuators[0].space, int(right))]


class PlainTally(Brain):
    def thinking(self, experience: Experience) -> Any | None:
        self.total = getattr(self, "total", 0.0) + experience.objective
        return None


class PlainHalf(Objective):
    def internal_reward(self, rewards: list[RewardInformation]) -> float:
        return 0.5 * sum(r.value for r in rewards)


def _former(*_: Any) -> Any:
    raise AssertionError("a method of the former value-step API was called")


with warnings.catch_warnings(record=True) as CAUGHT:
    warnings.simplefilter("always")

    class FormerLine(PlainLine):
        """An environment of the former API: both forms in one class body."""

        def update(self, actuators: list[ActuatorInformation]) -> EnvironmentState:
            return super().update(actuators)

        def value_ids(self) -> tuple[str, str, str]:
            return self.full_id("pos"), self.full_id("move"), self.full_id("r")

        def update_values(self, action: Any) -> tuple[Any, float, bool, bool]:
            return _former()

        def last_state(self) -> EnvironmentState:
            return _former()

    class FormerWalker(PlainWalker):
        value_steps = True
        propose_action_value = _former

    class FormerTally(PlainTally):
        value_steps = True

        def thinking_values(self, observation: Any, action: Any, objective: float, next_observation: Any,
                            done: bool, truncated: bool) -> Any | None:
            return _former()

    class FormerHalf(PlainHalf):
        value_steps = True
        internal_reward_value = _former


def _document(prefix: str) -> dict:
    name = f"test_former_value_steps:{prefix}"
    phase = {"environments": [{"environment": {"name": f"{name}Line", "uid": "line"}}],
             "agents": [{"name": "walker", "brain": {"name": f"{name}Tally"}, "muscle": {"name": f"{name}Walker"},
                         "objective": {"name": f"{name}Half"}}],
             "simulation": {"name": "xdoe.simulation:VanillaSimController"},
             "phase_config": {"mode": "train", "worker": 1, "episodes": 6}}
    return {"uid": f"former-{prefix.lower()}", "experiment_uid": "former", "seed": 7, "schedule": [{"training": phase}]}


def _steps(db: Path) -> list[tuple[Any, ...]]:
    with sqlite3.connect(db) as con:
        return con.execute("SELECT episode, step, sensors, actions, rewards, objective, done FROM step "
                           "ORDER BY id").fetchall()


def test_each_former_class_warns_once_naming_its_former_methods():
    messages = [str(w.message) for w in CAUGHT if issubclass(w.category, DeprecationWarning)]
    assert len(messages) == 4, messages
    assert any(m.startswith("FormerLine defines last_state, update_values, value_ids") for m in messages)
    assert any(m.startswith("FormerTally defines thinking_values, value_steps") for m in messages)
    assert all("no longer called" in m for m in messages)
    # the value forms are derived from (or inherited with) the object forms
    for cls, value in ((FormerLine, "update_values"), (FormerWalker, "propose_values"),
                       (FormerTally, "thinking_values"), (FormerHalf, "internal_reward_values")):
        assert is_derived(cls, value), cls
    # plugins of today's API do not warn, whatever their parameters are called
    with warnings.catch_warnings():
        warnings.simplefilter("error")

        class Today(PlainTally):
            def thinking(self, experience: Experience) -> Any | None:
                return None

        class TodayLine(Environment):
            def start_environment(self) -> EnvironmentBaseline:
                return EnvironmentBaseline([], [])

            def update_values(self, action: Any) -> tuple[Any, dict[str, float], bool, bool]:
                return None, {}, True, False

            def last_state(self) -> EnvironmentState:
                return EnvironmentState([], [])

    assert not is_derived(TodayLine, "update_values") and is_derived(TodayLine, "update")
    # below a class of the former API, a former value method is retired too
    with warnings.catch_warnings(record=True) as below:
        warnings.simplefilter("always")

        class FormerLineAgain(FormerLine):
            def update_values(self, action: Any) -> tuple[Any, float, bool, bool]:
                return _former()

    assert [str(w.message).split(" of ")[0].split(".")[-1] for w in below] == ["FormerLineAgain defines update_values"]
    assert is_derived(FormerLineAgain, "update_values")


def test_a_former_value_step_plugin_runs_unchanged_through_its_object_form(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    stored = {}
    for prefix in ("Plain", "Former"):
        db = tmp_path / f"{prefix}.sqlite"
        with Store(f"sqlite:///{db}") as store:
            result = run(_document(prefix), store=store, results=tmp_path / prefix, store_steps="all")
        assert result.ok, result.traceback
        stored[prefix] = _steps(db)
    assert len(stored["Plain"]) > 10
    assert stored["Former"] == stored["Plain"]
