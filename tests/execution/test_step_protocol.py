"""One step protocol (issue 23): a plugin written against the documented,
palaestrAI-style API — an environment overriding ``start_environment`` and
``update``, a muscle overriding ``propose_actions`` (setting values on the
actuators it is given), a brain overriding ``thinking``, an objective
overriding ``internal_reward`` and a condition reading
``StepProgress.states`` — runs unchanged, and the executor stores exactly what
a hand-written loop over the same calls and seeds gives."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from gymnasium import spaces

from xdoe.agent import Brain, Experience, Mode, Muscle, Objective
from xdoe.conditions import StepProgress, TerminationCondition, Verdict
from xdoe.environment import (ActuatorInformation, Environment, EnvironmentBaseline, EnvironmentState,
                              RewardInformation, SensorInformation)
from xdoe.execution import run
from xdoe.execution._seeding import brain_seed, environment_seed, muscle_seed
from xdoe.store import Store

#: what the components saw, per run: ``calls[name]`` counts method calls
CALLS: dict[str, int] = {}


def _count(name: str) -> None:
    CALLS[name] = CALLS.get(name, 0) + 1


class Corridor(Environment):
    """Cells ``0 .. length-1``; the agent starts at a random cell below the
    goal, moves -1/0/+1 (``<uid>.move``, Discrete(3) numbered 0..2) and reads
    its cell (``<uid>.cell``) and a noisy compass (``<uid>.noise``, a Box).
    Reward ``<uid>.step`` -1 per move and ``<uid>.goal`` +5 at the last cell
    (terminated); truncated after ``limit`` moves."""

    def __init__(self, uid: str, seed: int, length: int = 6, limit: int = 15) -> None:
        super().__init__(uid=uid, seed=seed)
        self.length, self.limit = length, limit
        self.cell = self.moves = 0

    def _sensors(self) -> list[SensorInformation]:
        noise = self.rng.normal(size=1).astype("float32")
        return [SensorInformation(self.full_id("cell"), spaces.Discrete(self.length), self.cell),
                SensorInformation(self.full_id("noise"), spaces.Box(-10, 10, (1,), "float32"), noise)]

    def start_environment(self) -> EnvironmentBaseline:
        _count("start_environment")
        self.cell, self.moves = int(self.rng.integers(self.length - 1)), 0
        return EnvironmentBaseline(self._sensors(), [ActuatorInformation(self.full_id("move"), spaces.Discrete(3))],
                                   {"start": self.cell})

    def update(self, actuators: list[ActuatorInformation]) -> EnvironmentState:
        _count("update")
        move = next(a.value for a in actuators if a.uid == self.full_id("move"))
        self.cell = min(max(self.cell + move - 1, 0), self.length - 1)
        self.moves += 1
        at_goal = self.cell == self.length - 1
        rewards = [RewardInformation(self.full_id("step"), -1.0),
                   RewardInformation(self.full_id("goal"), 5.0 if at_goal else 0.0)]
        return EnvironmentState(self._sensors(), rewards, at_goal, {"moves": self.moves},
                                truncated=self.moves >= self.limit and not at_goal)


class Counting(Brain):
    """Keeps how often each (cell, move) was tried; returns the counts to the
    muscles at the end of each episode."""

    def setup(self, sensors: list[SensorInformation], actuators: list[ActuatorInformation]) -> None:
        super().setup(sensors, actuators)
        self.counts: dict[str, int] = {}
        self.seen: list[tuple[Any, ...]] = []

    def thinking(self, experience: Experience) -> Any:
        _count("thinking")
        cell = next(s.value for s in experience.sensors if s.uid.endswith(".cell"))
        after = next(s.value for s in experience.next_sensors if s.uid.endswith(".cell"))
        (move,) = experience.actuators
        key = f"{cell}:{move.value}"
        self.counts[key] = self.counts.get(key, 0) + 1
        self.seen.append((experience.episode, experience.step, cell, move.value,
                          [(r.uid, r.value) for r in experience.rewards], experience.objective, after,
                          experience.done, experience.truncated))
        return dict(self.counts) if experience.done else None


class Curious(Muscle):
    """Sets the value on the actuator it is given: the least-tried move of the
    cell in train mode (ties and a 20 % chance: at random), +1 in test mode."""

    def setup(self, sensors: list[SensorInformation], actuators: list[ActuatorInformation]) -> None:
        self.counts: dict[str, int] = {}

    def update(self, update: Any) -> None:
        self.counts = dict(update)

    def propose_actions(self, sensors: list[SensorInformation],
                        actuators: list[ActuatorInformation]) -> list[ActuatorInformation]:
        _count("propose_actions")
        cell = next(s.value for s in sensors if s.uid.endswith(".cell"))
        for a in actuators:
            if self.mode is Mode.TEST:
                a.value = 2
            elif self.rng.random() < 0.2:
                a.value = int(self.rng.integers(3))
            else:
                tried = [self.counts.get(f"{cell}:{m}", 0) for m in range(3)]
                a.value = int(self.rng.choice([m for m in range(3) if tried[m] == min(tried)]))
        return actuators


class HalfSum(Objective):
    def internal_reward(self, rewards: list[RewardInformation]) -> float:
        _count("internal_reward")
        return 0.5 * sum(r.value for r in rewards)


class StopAtCell(TerminationCondition):
    """Ends an episode when the environment's cell sensor reads ``cell``
    (read from ``StepProgress.states``)."""

    def __init__(self, cell: int = 4) -> None:
        super().__init__()
        self.cell = cell

    def step_finished(self, step: StepProgress) -> Verdict:
        _count("step_finished")
        cells = [s.value for s in step.states[0].sensors if s.uid.endswith(".cell")]
        return Verdict.RESET if step.done or cells == [self.cell] else Verdict.CONTINUE


SEED, TRAIN, TEST = 23, 7, 2


def _phase(mode: str, episodes: int) -> dict:
    return {"environments": [{"environment": {"name": "test_step_protocol:Corridor", "uid": "c",
                                              "params": {"length": 6, "limit": 15}}}],
            "agents": [{"name": "walker", "brain": {"name": "test_step_protocol:Counting"},
                        "muscle": {"name": "test_step_protocol:Curious"},
                        "objective": {"name": "test_step_protocol:HalfSum"}}],
            "simulation": {"name": "xdoe.simulation:VanillaSimController",
                           "conditions": [{"name": "test_step_protocol:StopAtCell", "params": {"cell": 4}}]},
            "phase_config": {"mode": mode, "worker": 1, "episodes": episodes}}


DOCUMENT = {"uid": "palaestrai-style", "experiment_uid": "protocol", "seed": SEED,
            "schedule": [{"training": _phase("train", TRAIN)}, {"testing": _phase("test", TEST)}]}


def hand_written_loop() -> list[tuple[Any, ...]]:
    """The documented protocol (``docs/plugins.md``, "A step"), written out:
    the step rows ``(phase, episode, step, sensors, actions, rewards,
    objective, done)`` it gives for ``DOCUMENT``'s seeds."""
    brain = Counting(seed=brain_seed(SEED, "walker"))
    rows: list[tuple[Any, ...]] = []
    for index, (name, mode, episodes) in enumerate((("training", Mode.TRAIN, TRAIN), ("testing", Mode.TEST, TEST))):
        env = Corridor("c", environment_seed(SEED, index, 0, "c"), length=6, limit=15)
        baseline = env.start_environment()
        if index == 0:
            brain.setup(baseline.sensors, baseline.actuators)
        brain.mode = mode
        muscle = Curious("walker", seed=muscle_seed(SEED, index, 0, "walker"))
        muscle.setup(baseline.sensors, baseline.actuators)
        muscle.mode = mode
        if brain.muscle_state() is not None:
            muscle.update(brain.muscle_state())
        objective, condition = HalfSum(), StopAtCell(cell=4)
        for episode in range(episodes):
            if episode:
                baseline = env.start_environment()
            muscle.reset()
            sensors, step = baseline.sensors, 0
            while True:
                actions = muscle.propose_actions(sensors, [ActuatorInformation(a.uid, a.space)
                                                           for a in baseline.actuators])
                state = env.update(actions)
                value = float(objective.internal_reward(state.rewards))
                ended = state.done or condition.cells_reached(state)
                rows.append((name, episode, step, {s.uid: _plain(s.value) for s in sensors},
                             {a.uid: a.value for a in actions}, {r.uid: r.value for r in state.rewards}, value,
                             bool(ended)))
                if mode is Mode.TRAIN:
                    update = brain.thinking(Experience(0, episode, step, sensors, actions, state.rewards, value,
                                                       state.sensors, ended, {}, ended and not state.terminated))
                    if update is not None:
                        muscle.update(update)
                sensors, step = state.sensors, step + 1
                if ended:
                    break
    return rows


def _cells_reached(self: StopAtCell, state: EnvironmentState) -> bool:
    return [s.value for s in state.sensors if s.uid.endswith(".cell")] == [self.cell]


StopAtCell.cells_reached = _cells_reached  # type: ignore[attr-defined]


def _plain(value: Any) -> Any:
    return value.tolist() if hasattr(value, "tolist") else value


def stored_steps(db: Path) -> list[tuple[Any, ...]]:
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT p.name, s.episode, s.step, s.sensors, s.actions, s.rewards, s.objective, "
                           "s.done FROM step s JOIN phase p ON p.id = s.phase_id ORDER BY s.id").fetchall()
    return [(p, e, s, json.loads(sen), json.loads(act), json.loads(rew), obj, bool(done))
            for p, e, s, sen, act, rew, obj, done in rows]


def test_a_palaestrai_style_plugin_runs_unchanged_and_stores_what_a_plain_loop_gives(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    CALLS.clear()
    with Store(f"sqlite:///{tmp_path / 's.sqlite'}") as store:
        result = run(DOCUMENT, store=store, results=tmp_path / "r", store_steps="all")
        assert result.ok, result.traceback
    calls = dict(CALLS)
    steps = stored_steps(tmp_path / "s.sqlite")
    expected = hand_written_loop()
    assert len(steps) > 40
    assert steps == expected
    # every step went through the documented methods, once each
    n = len(steps)
    train_steps = sum(1 for row in steps if row[0] == "training")
    assert calls["update"] == calls["propose_actions"] == calls["internal_reward"] == calls["step_finished"] == n
    assert calls["thinking"] == train_steps
    # the condition that reads states cut episodes, the environment ended others
    with sqlite3.connect(tmp_path / "s.sqlite") as con:
        causes = {row[0] for row in con.execute("SELECT cut_by FROM episode")}
    assert "StopAtCell" in causes and None in causes


def test_the_plugin_api_has_one_protocol():
    """No second, value-based contract is left on the plugin base classes."""
    removed = {Environment: ("value_ids", "update_values", "last_state"),
               Muscle: ("propose_action_value", "value_steps"), Brain: ("thinking_values", "value_steps"),
               Objective: ("internal_reward_value", "value_steps"), TerminationCondition: ("needs_states",)}
    for cls, names in removed.items():
        for name in names:
            assert not hasattr(cls, name), f"{cls.__name__}.{name}"
