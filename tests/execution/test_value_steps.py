"""Value steps (issue 16): a phase whose components all support them is
stepped with plain values; everything stored is identical to the general
path (``XDOE_VALUE_STEPS=0``), and components that do not (or that override
a general method below the declaration) are stepped the general way."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import lineage_components
import numpy as np
import pytest

from xdoe.agents import QLearningBrain, QLearningMuscle, RewardObjective
from xdoe.components.environments import DummyEnvironment, GymnasiumEnvironment
from xdoe.conditions import EnvironmentTerminationCondition, StepProgress, Verdict
from xdoe.environment import ActuatorInformation, RewardInformation, SensorInformation
from xdoe.execution import run
from xdoe.execution._stepping import declares
from xdoe.store import Store

QL = {"brain": {"name": "xdoe.agents:QLearningBrain", "params": {"alpha": 0.5, "gamma": 0.95}},
      "muscle": {"name": "xdoe.agents:QLearningMuscle", "params": {"epsilon": 0.2, "epsilon_decay": 0.97}},
      "objective": {"name": "xdoe.agents:RewardObjective"}}


def taxi_phase(mode="train", episodes=12, worker=1, conditions=None, env_params=None, agent=None, **config):
    return {
        "environments": [{"environment": {"name": "xdoe.environments:GymnasiumEnvironment", "uid": "taxi",
                                          "params": {"env_id": "Taxi-v4", "max_episode_steps": 40,
                                                     **(env_params or {})}}}],
        "agents": [{"name": "learner", **QL, **(agent or {})}],
        "simulation": {"name": "xdoe.simulation:VanillaSimController", "conditions": conditions or []},
        "phase_config": {"mode": mode, "worker": worker, "episodes": episodes, **config},
    }


def document(*phases, seed=5):
    return {"uid": "value-steps", "experiment_uid": "vs", "seed": seed,
            "schedule": [{name: body} for name, body in phases]}


@pytest.fixture
def counted(monkeypatch):
    """Counts GymnasiumEnvironment.update / update_values calls (wrapped on
    the class, so the declarations stay where they are)."""
    calls = {"update": 0, "update_values": 0}
    for name in calls:
        original = getattr(GymnasiumEnvironment, name)

        def wrapper(self, *args, _original=original, _name=name):
            calls[_name] += 1
            return _original(self, *args)

        monkeypatch.setattr(GymnasiumEnvironment, name, wrapper)
    return calls


def stored(tmp_path: Path, doc: dict, monkeypatch, value_steps: bool, store_steps="all", name="s"):
    """Everything a run stores, without wall times and ids: episode and step
    rows, results files, checkpoint hashes."""
    monkeypatch.setenv("XDOE_VALUE_STEPS", "1" if value_steps else "0")
    url = f"sqlite:///{tmp_path / f'{name}.sqlite'}"
    with Store(url) as store:
        result = run(doc, store=store, results=tmp_path / name, store_steps=store_steps)
        assert result.ok, result.traceback
        checkpoints = sorted((c.agent, c.step, c.episode, c.sha256)
                             for c in store.checkpoints(result.instance_id))
    return result, collect(tmp_path / f"{name}.sqlite", Path(result.results_dir)), checkpoints


def collect(db: Path, folder: Path) -> dict:
    with sqlite3.connect(db) as con:
        episodes = con.execute("SELECT p.name, e.worker, e.episode, e.agent, e.steps, e.reward, e.objective, "
                               "e.extras FROM episode e JOIN phase p ON p.id = e.phase_id ORDER BY e.id").fetchall()
        steps = con.execute("SELECT p.name, s.worker, s.episode, s.step, s.agent, s.sensors, s.actions, "
                            "s.rewards, s.objective, s.done FROM step s JOIN phase p ON p.id = s.phase_id "
                            "ORDER BY s.id").fetchall()
    lines = [json.loads(x) for x in (folder / "episodes.jsonl").read_text().splitlines()]
    for line in lines:
        line.pop("wall_time")
    files = {p.name: p.read_bytes() for p in sorted(folder.glob("*.csv"))}
    return {"episodes": episodes, "steps": steps, "jsonl": lines, "files": files}


def test_same_seed_same_everything_through_both_paths(tmp_path, monkeypatch, counted):
    """Training with checkpoints, time-limit truncation (max_episode_steps),
    a termination condition that checks steps (MaxSteps) and a test phase."""
    doc = document(
        ("training", taxi_phase(episodes=25, checkpoint_every=150, conditions=[
            {"name": "xdoe.conditions:EnvironmentTerminationCondition"},
            {"name": "xdoe.conditions:MaxStepsTerminationCondition", "params": {"phase_steps": 700}}])),
        ("testing", taxi_phase(mode="test", episodes=4)))
    lean_result, lean, lean_ckpt = stored(tmp_path, doc, monkeypatch, True, name="lean")
    assert counted["update_values"] > 700 and counted["update"] == 0
    counted["update_values"] = 0
    general_result, general, general_ckpt = stored(tmp_path, doc, monkeypatch, False, name="general")
    assert counted["update_values"] == 0 and counted["update"] > 700
    assert lean == general
    assert lean_ckpt == general_ckpt and len(lean_ckpt) >= 3
    truncated = [json.loads(e[7]) for e in lean["episodes"] if e[7] and "truncated" in e[7]]
    assert truncated, "the phase_steps limit truncates an episode"
    assert any(e[4] == 40 for e in lean["episodes"])  # max_episode_steps reached at least once
    assert [(p.episodes, p.steps, p.rewards) for p in lean_result.phases] == \
        [(p.episodes, p.steps, p.rewards) for p in general_result.phases]


@pytest.mark.parametrize("store_steps", ["none", "every:3"])
def test_two_workers_and_other_step_policies_are_identical(tmp_path, monkeypatch, counted, store_steps):
    doc = document(("training", taxi_phase(episodes=6, worker=2, conditions=[
        {"name": "xdoe.conditions:AgentObjectiveTerminationCondition",
         "params": {"learner": {"brain_avg5": -0.5, "phase_avg3": 5.0}}},
        {"name": "xdoe.conditions:EnvironmentTerminationCondition"}])))
    _, lean, _ = stored(tmp_path, doc, monkeypatch, True, store_steps, name="lean")
    assert counted["update"] == 0
    _, general, _ = stored(tmp_path, doc, monkeypatch, False, store_steps, name="general")
    assert lean == general and len(lean["episodes"]) == 12


def test_interrupted_and_resumed_run_is_identical(tmp_path, monkeypatch, counted):
    """Ctrl-C after 9 episodes (a checkpoint after 6), resumed: the same rows
    and checkpoints through both paths, and as the uninterrupted run."""
    interruptible = [{"name": "xdoe.conditions:EnvironmentTerminationCondition"},
                     {"name": "lineage_components:InterruptAfter"}]
    doc = document(("training", taxi_phase(episodes=14, checkpoint_every=120, conditions=interruptible,
                                           env_params={"max_episode_steps": 25})))
    out = {}
    for lean in (True, False):
        monkeypatch.setenv("XDOE_VALUE_STEPS", "1" if lean else "0")
        name = "lean" if lean else "general"
        db = tmp_path / f"{name}.sqlite"
        lineage_components.ARMED["at"] = 9
        try:
            with Store(f"sqlite:///{db}") as store, pytest.raises(KeyboardInterrupt):
                run(doc, store=store, results=tmp_path / name, store_steps="all")
        finally:
            lineage_components.ARMED.clear()
        with Store(f"sqlite:///{db}") as store:
            resumed = run(doc, store=store, results=tmp_path / name, store_steps="all")
            assert resumed.ok and resumed.resumed, resumed.traceback
            checkpoints = sorted((c.step, c.episode, c.sha256) for c in store.checkpoints(resumed.instance_id))
        out[name] = (collect(db, Path(resumed.results_dir)), checkpoints)
    assert counted["update_values"] > 0
    assert out["lean"] == out["general"]
    assert [e[2] for e in out["lean"][0]["episodes"]] == list(range(14))


def test_dummy_components_take_value_steps_identically(tmp_path, monkeypatch):
    agent = {"brain": {"name": "xdoe.agents:DummyBrain"}, "muscle": {"name": "xdoe.agents:DummyMuscle"}}
    phase = taxi_phase(episodes=5, agent=agent)
    phase["environments"] = [{"environment": {"name": "xdoe.environments:DummyEnvironment", "uid": "d",
                                              "params": {"length": 7, "sensors": 1, "actuators": 1}}}]
    calls = []
    monkeypatch.setattr(DummyEnvironment, "last_state",
                        lambda self, _f=DummyEnvironment.last_state: calls.append(1) or _f(self))
    _, lean, _ = stored(tmp_path, document(("training", phase)), monkeypatch, True, name="lean")
    assert len(calls) == 5  # once per episode end
    _, general, _ = stored(tmp_path, document(("training", phase)), monkeypatch, False, name="general")
    assert lean == general and len(lean["steps"]) == 35


# -- who gets value steps --------------------------------------------------------

class OwnProposal(QLearningMuscle):
    def propose_actions(self, sensors, actuators):
        return super().propose_actions(sensors, actuators)


class OwnThinking(QLearningBrain):
    def thinking(self, experience):
        return super().thinking(experience)


class OwnObjective(RewardObjective):
    def internal_reward(self, rewards):
        return super().internal_reward(rewards)


class OwnUpdate(GymnasiumEnvironment):
    def update(self, actuators):
        return super().update(actuators)


class RedeclaredBoth(OwnProposal):
    value_steps = True

    def propose_action_value(self, observation):
        return super().propose_action_value(observation)


class ReadsStates(EnvironmentTerminationCondition):
    def step_finished(self, step: StepProgress) -> Verdict:
        return Verdict.RESET if step.states[0].done else Verdict.CONTINUE


class DeclaresNoStates(ReadsStates):
    needs_states = False

    def step_finished(self, step: StepProgress) -> Verdict:
        return Verdict.RESET if step.done else Verdict.CONTINUE


def test_declarations_count_only_at_or_below_the_general_method():
    assert declares(QLearningMuscle("m"), "propose_actions", "propose_action_value")
    assert not declares(OwnProposal("m"), "propose_actions", "propose_action_value")
    assert declares(RedeclaredBoth("m"), "propose_actions", "propose_action_value")
    assert declares(QLearningBrain(), "thinking", "thinking_values")
    assert not declares(OwnThinking(), "thinking", "thinking_values")
    assert declares(RewardObjective(), "internal_reward", "internal_reward_value")
    assert not declares(RewardObjective(reward_ids=["taxi.reward"]), "internal_reward", "internal_reward_value")
    assert not declares(OwnObjective(), "internal_reward", "internal_reward_value")
    off = QLearningMuscle("m")
    off.value_steps = False
    assert not declares(off, "propose_actions", "propose_action_value")
    patched = QLearningMuscle("m")
    patched.propose_actions = lambda sensors, actuators: []  # set on the instance: general
    assert not declares(patched, "propose_actions", "propose_action_value")


@pytest.mark.parametrize("change", [
    {"agent": {"muscle": {"name": "test_value_steps:OwnProposal"}}},
    {"agent": {"brain": {"name": "test_value_steps:OwnThinking"}}},
    {"agent": {"objective": {"name": "test_value_steps:OwnObjective"}}},
    {"agent": {"objective": {"name": "xdoe.agents:RewardObjective", "params": {"reward_ids": ["taxi.reward"]}}}},
    {"env": "test_value_steps:OwnUpdate"},
    {"conditions": [{"name": "test_value_steps:ReadsStates"}]},
    {"controller": "xdoe.simulation:TakingTurnsSimController"},
])
def test_phases_with_a_component_that_does_not_opt_in_take_the_general_path(
        tmp_path, monkeypatch, counted, change):
    phase = taxi_phase(episodes=2, agent=change.get("agent"), conditions=change.get("conditions"))
    if "env" in change:
        phase["environments"][0]["environment"]["name"] = change["env"]
    if "controller" in change:
        phase["simulation"]["name"] = change["controller"]
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    _, lean, _ = stored(tmp_path, document(("training", phase)), monkeypatch, True, name="lean")
    assert counted["update_values"] == 0 and counted["update"] > 0


def test_a_condition_declaring_no_states_keeps_value_steps(tmp_path, monkeypatch, counted):
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    phase = taxi_phase(episodes=3, conditions=[{"name": "test_value_steps:DeclaresNoStates"}])
    _, lean, _ = stored(tmp_path, document(("training", phase)), monkeypatch, True, name="lean")
    assert counted["update"] == 0 and counted["update_values"] > 0
    _, general, _ = stored(tmp_path, document(("training", phase)), monkeypatch, False, name="general")
    assert lean == general


# -- the built-in components: value methods == general methods -------------------

def test_qlearning_value_methods_match_the_general_ones():
    obs_space_env = GymnasiumEnvironment("taxi", 3, "Taxi-v4")
    base = obs_space_env.start_environment()
    (sensor,), (actuator,) = base.sensors, base.actuators
    a, b = QLearningBrain(seed=1, alpha=0.3), QLearningBrain(seed=1, alpha=0.3)
    ma, mb = QLearningMuscle("m", seed=4, epsilon=0.3), QLearningMuscle("m", seed=4, epsilon=0.3)
    for brain, muscle in ((a, ma), (b, mb)):
        brain.setup([sensor], [actuator])
        muscle.setup([sensor], [actuator])
        muscle.update(brain.muscle_state())
    rng = np.random.default_rng(0)
    for i in range(3000):
        s, s2 = int(rng.integers(500)), int(rng.integers(500))
        act = ma.propose_action_value(s)
        (given,) = mb.propose_actions([SensorInformation(sensor.uid, sensor.space, s)],
                                      [ActuatorInformation(actuator.uid, actuator.space)])
        assert act == given.value and type(act) is int
        objective, done, truncated = float(rng.normal()), bool(i % 7 == 0), bool(i % 21 == 0)
        ua = a.thinking_values(s, act, objective, s2, done, truncated)
        from xdoe.agent import Experience
        ub = b.thinking(Experience(0, 0, i, [SensorInformation(sensor.uid, sensor.space, s)], [given], [],
                                   objective, [SensorInformation(sensor.uid, sensor.space, s2)], done, {},
                                   truncated))
        assert (ua is None) == (ub is None)
    assert hashlib.sha256(a.table.q.tobytes()).digest() == hashlib.sha256(b.table.q.tobytes()).digest()
    # values the fast path does not take (numpy ints, out of range) go the general way, same errors
    assert a.thinking_values(np.int64(3), 1, 1.0, 4, False, False) is None
    with pytest.raises(ValueError) as lean_error:
        a.thinking_values(900, 1, 1.0, 4, False, False)
    with pytest.raises(ValueError) as general_error:
        b.thinking(Experience(0, 0, 0, [SensorInformation(sensor.uid, sensor.space, 900)],
                              [ActuatorInformation(actuator.uid, actuator.space, 1)], [], 1.0,
                              [SensorInformation(sensor.uid, sensor.space, 4)], False))
    assert str(lean_error.value) == str(general_error.value)


def test_reward_objective_value_is_the_same_float():
    objective = RewardObjective()
    for value in (-0.0, 0.0, -1.0, 20.0, 1e-300, float("nan")):
        lean = objective.internal_reward_value(value)
        general = objective.internal_reward([RewardInformation("e.reward", value)])
        assert np.float64(lean).tobytes() == np.float64(general).tobytes()


@pytest.mark.parametrize("env_id, actions", [("Taxi-v4", [0, 1, 2, 3, 4, 5] * 30),
                                              ("CartPole-v1", [0, 1, 1, 0] * 30)])
def test_gymnasium_update_values_and_last_state_match_update(env_id, actions):
    lean, general = GymnasiumEnvironment("e", 11, env_id), GymnasiumEnvironment("e", 11, env_id)
    assert lean.value_ids() == ("e.observation", "e.action", "e.reward")
    base_l, base_g = lean.start_environment(), general.start_environment()
    assert np.array_equal(base_l.sensors[0].value, base_g.sensors[0].value)
    with pytest.raises(RuntimeError):
        lean.last_state()
    for action in actions:
        obs, reward, terminated, truncated = lean.update_values(action)
        state = general.update([ActuatorInformation("e.action", base_g.actuators[0].space, action)])
        last = lean.last_state()
        assert np.array_equal(obs, state.sensors[0].value) and type(obs) is type(state.sensors[0].value)
        assert (reward, terminated, truncated) == (state.rewards[0].value, state.terminated, state.truncated)
        assert type(reward) is float and type(terminated) is bool and type(truncated) is bool
        assert last.info == state.info and last.rewards == state.rewards
        assert [(s.uid, s.space) for s in last.sensors] == [(s.uid, s.space) for s in state.sensors]
        if state.done:
            lean.start_environment()
            general.start_environment()
    with pytest.raises(ValueError, match="no value set"):
        lean.update_values(None)


def test_check_environment_checks_value_steps():
    from xdoe.environment import check_environment

    check_environment(GymnasiumEnvironment("taxi", 2, "Taxi-v4"), steps=60)
    check_environment(DummyEnvironment("d", 2, length=5, sensors=1, actuators=1, discrete=True))

    class Drifting(DummyEnvironment):  # value steps that do not match update
        def update_values(self, action):
            observation, reward, terminated, truncated = super().update_values(action)
            return observation, reward + 1.0, terminated, truncated

    with pytest.raises(AssertionError, match="value steps: update_values"):
        check_environment(Drifting("d", 2, length=5, sensors=1, actuators=1, discrete=True))


def test_step_values_cells_are_the_step_cells():
    from xdoe.store._recorder_rows import _json_cell, _one_key_cell

    for value in (3, -0.0, 1.5e300, float("nan"), float("inf"), np.int64(4), np.float32(0.25),
                  np.array([1.0, 2.0], dtype=np.float32), True, None, "x\u00e9\"", [1, 2]):
        for key in ("taxi.observation", 'we"ird\u00e9'):
            assert _one_key_cell(key, value) == _json_cell({key: value}), (key, value)


def test_parallel_worker_processes_take_value_steps_in_test_phases(tmp_path, monkeypatch):
    """In a worker process the brain is a stand-in (train phases: general
    path); a test phase needs no brain, so its workers take value steps, with
    the rows of the general path."""
    from xdoe.execution._parallel_workers import parallel_workers

    doc = document(("testing", taxi_phase(mode="test", episodes=3, worker=2)))
    out = {}
    for lean in (True, False):
        with parallel_workers():
            _, got, _ = stored(tmp_path, doc, monkeypatch, lean, name="lean" if lean else "general")
        out[lean] = {k: sorted(v, key=repr) for k, v in got.items() if k != "files"}
    assert out[True] == out[False] and len(out[True]["episodes"]) == 6
