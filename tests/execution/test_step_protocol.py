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
from xdoe._plugins import is_derived
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


def run_and_read(tmp_path: Path, document: dict) -> tuple[dict[str, int], list[tuple[Any, ...]]]:
    """Run ``document`` with every step stored: (the plugin methods called and how often, the stored steps)."""
    CALLS.clear()
    with Store(f"sqlite:///{tmp_path / 's.sqlite'}") as store:
        result = run(document, store=store, results=tmp_path / "r", store_steps="all")
        assert result.ok, result.traceback
    return dict(CALLS), stored_steps(tmp_path / "s.sqlite")


def test_a_palaestrai_style_plugin_runs_unchanged_and_stores_what_a_plain_loop_gives(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    calls, steps = run_and_read(tmp_path, DOCUMENT)
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
    """No second contract with declarations is left on the plugin base
    classes: the value forms are the executor's, derived from the object forms."""
    removed = {Environment: ("value_ids",), Muscle: ("propose_action_value", "value_steps"),
               Brain: ("value_steps",), Objective: ("internal_reward_value", "value_steps"),
               TerminationCondition: ("needs_states",)}
    for cls, names in removed.items():
        for name in names:
            assert not hasattr(cls, name), f"{cls.__name__}.{name}"
    pairs = {Corridor: ("update", "update_values"), Curious: ("propose_actions", "propose_values"),
             Counting: ("thinking", "thinking_values"), HalfSum: ("internal_reward", "internal_reward_values")}
    for cls, (general, value) in pairs.items():
        assert is_derived(cls, value) and not is_derived(cls, general), cls
    for cls, (general, value) in {ValueCorridor: ("update", "update_values"),
                                  ValueCurious: ("propose_actions", "propose_values"),
                                  ValueCounting: ("thinking", "thinking_values"),
                                  ValueHalfSum: ("internal_reward", "internal_reward_values")}.items():
        assert is_derived(cls, general) and not is_derived(cls, value), cls


# -- the same plugin written value-first: the executor stores the same rows ----

class ValueCorridor(Corridor):
    """:class:`Corridor` with its step written as values (gymnasium's ``Env.step``)."""

    def update_values(self, actions: Any) -> tuple[Any, dict[str, float], bool, bool]:
        _count("update_values")
        self.cell = min(max(self.cell + actions - 1, 0), self.length - 1)
        self.moves += 1
        at_goal = self.cell == self.length - 1
        rewards = [RewardInformation(self.full_id("step"), -1.0),
                   RewardInformation(self.full_id("goal"), 5.0 if at_goal else 0.0)]
        self._last = EnvironmentState(self._sensors(), rewards, at_goal, {"moves": self.moves},
                                      truncated=self.moves >= self.limit and not at_goal)
        return ({s.uid: s.value for s in self._last.sensors}, {r.uid: r.value for r in rewards},
                self._last.terminated, self._last.truncated)

    def last_state(self) -> EnvironmentState:
        return self._last


class ValueCurious(Curious):
    def propose_values(self, observation: Any) -> Any:
        _count("propose_values")
        cell = observation["c.cell"]
        if self.mode is Mode.TEST:
            return 2
        if self.rng.random() < 0.2:
            return int(self.rng.integers(3))
        tried = [self.counts.get(f"{cell}:{m}", 0) for m in range(3)]
        return int(self.rng.choice([m for m in range(3) if tried[m] == min(tried)]))


class ValueCounting(Counting):
    def thinking_values(self, worker: int, episode: int, step: int, observation: Any, action: Any,
                        rewards: dict[str, float], objective: float, next_observation: Any, done: bool,
                        extras: dict[str, Any], truncated: bool) -> Any:
        _count("thinking_values")
        key = f"{observation['c.cell']}:{action}"
        self.counts[key] = self.counts.get(key, 0) + 1
        return dict(self.counts) if done else None


class ValueHalfSum(HalfSum):
    def internal_reward_values(self, rewards: dict[str, float]) -> float:
        _count("internal_reward_values")
        return 0.5 * sum(rewards.values())


class CuriousAgain(ValueCurious):
    """Writes the object form again below a value-form class: the executor
    goes through this ``propose_actions`` (the value form is derived from it)."""

    def propose_actions(self, sensors: list[SensorInformation],
                        actuators: list[ActuatorInformation]) -> list[ActuatorInformation]:
        _count("again")
        return super().propose_actions(sensors, actuators)


def _with_classes(names: dict[str, str]) -> dict:
    """:data:`DOCUMENT` with its environment, brain, muscle and objective
    classes renamed by ``names`` (class name -> class name in this module)."""
    document = json.loads(json.dumps(DOCUMENT))
    for phase in document["schedule"]:
        (body,) = phase.values()
        for item in (body["environments"][0]["environment"], body["agents"][0]["brain"],
                     body["agents"][0]["muscle"], body["agents"][0]["objective"]):
            module, name = item["name"].split(":")
            item["name"] = f"{module}:{names[name]}"
    return document


def test_a_value_first_plugin_stores_what_the_object_form_loop_gives(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    calls, steps = run_and_read(tmp_path, _with_classes({"Corridor": "ValueCorridor", "Counting": "ValueCounting",
                                                          "Curious": "ValueCurious", "HalfSum": "ValueHalfSum"}))
    assert steps == hand_written_loop()
    n = len(steps)
    assert calls["update_values"] == calls["propose_values"] == calls["internal_reward_values"] == n
    assert calls["thinking_values"] == sum(1 for row in steps if row[0] == "training")
    assert "update" not in calls and "propose_actions" not in calls and "thinking" not in calls


def test_each_class_is_used_through_the_form_its_body_defines():
    """A subclass writing the object form below a value-form class is used
    through it; ``super()`` between the forms does not recurse; an environment
    with ``update_values`` and no ``last_state`` is refused."""
    muscle = CuriousAgain("walker", seed=3)
    muscle.setup([], [])
    # Curious.setup (palaestrAI's style) does not call super(): the base's keeps the ids and spaces a
    # derived propose_values reads (the executor's AgentRuntime holds its own)
    Muscle.setup(muscle, [SensorInformation("c.cell", spaces.Discrete(6)),
                          SensorInformation("c.noise", spaces.Box(-10, 10, (1,), "float32"))],
                 [ActuatorInformation("c.move", spaces.Discrete(3))])
    twin = ValueCurious("walker", seed=3)
    twin.setup([], [])
    CALLS.clear()
    observation = {"c.cell": 2, "c.noise": None}
    assert [muscle.propose_values(observation) for _ in range(20)] == [twin.propose_values(observation)
                                                                       for _ in range(20)]
    assert CALLS["again"] == 20
    with pytest.raises(TypeError, match="defines update_values but not last_state"):
        class NoState(Environment):
            def start_environment(self) -> EnvironmentBaseline:
                raise NotImplementedError

            def update_values(self, actions: Any) -> tuple[Any, dict[str, float], bool, bool]:
                return 0, {}, False, False


def test_the_step_progress_is_written_when_a_step_condition_reads_it():
    """A worker writes each update's ``step``, ``done`` and ``objectives``
    into its StepProgress only when some ``step_finished`` is asked: not for
    no step condition, nor for the built-in EnvironmentTerminationCondition
    alone (the step answers it from ``done``)."""
    from xdoe.conditions import (EnvironmentTerminationCondition, MaxEpisodesTerminationCondition,
                                 MaxStepsTerminationCondition)
    from xdoe.execution._stepping import reads_progress

    assert not reads_progress([])
    assert not reads_progress([EnvironmentTerminationCondition(), MaxEpisodesTerminationCondition()])
    assert reads_progress([MaxStepsTerminationCondition(episode_steps=5)])
    assert reads_progress([EnvironmentTerminationCondition(), StopAtCell()])


class PropertyExtras(ValueCurious):
    """A muscle whose extras are a read-only property (computed from its last
    proposal): the executor reads it and never writes to it."""

    @property
    def extras(self) -> dict[str, Any]:
        return {"proposals": self.proposals}

    def propose_values(self, observation: Any) -> Any:
        self.proposals = getattr(self, "proposals", 0) + 1
        return super().propose_values(observation)


class ExtrasSeen(ValueCounting):
    SEEN: list[dict[str, Any]] = []

    def thinking_values(self, worker: int, episode: int, step: int, observation: Any, action: Any,
                        rewards: dict[str, float], objective: float, next_observation: Any, done: bool,
                        extras: dict[str, Any], truncated: bool) -> Any:
        ExtrasSeen.SEEN.append(dict(extras))
        return super().thinking_values(worker, episode, step, observation, action, rewards, objective,
                                       next_observation, done, extras, truncated)


def test_a_muscles_extras_may_be_a_read_only_property(tmp_path, monkeypatch):
    """The plugin API lets ``extras`` be a property: the base class sets no
    instance attribute of that name, and each transition carries the value
    the property had when the muscle proposed its action."""
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    ExtrasSeen.SEEN.clear()
    _, steps = run_and_read(tmp_path, _with_classes({"Corridor": "ValueCorridor", "Counting": "ExtrasSeen",
                                                      "Curious": "PropertyExtras", "HalfSum": "ValueHalfSum"}))
    train = sum(1 for row in steps if row[0] == "training")
    assert [e["proposals"] for e in ExtrasSeen.SEEN] == list(range(1, train + 1))
