"""docs/plugins.md: its Python blocks run, its run document names real classes."""

import re
import sys
import types
from pathlib import Path

import pytest

from xdoe.agent import Brain, Experience, Mode, Muscle, Objective
from xdoe.components.agents import QLearningBrain, QLearningMuscle
from xdoe.documents import load_yaml
from xdoe.environment import ActuatorInformation, Environment

DOC = Path(__file__).resolve().parents[3] / "docs" / "plugins.md"
MODULE = "mypkg.walk"


def blocks(language):
    return re.findall(rf"^```{language}\n(.*?)^```", DOC.read_text(), flags=re.S | re.M)


@pytest.fixture()
def walk(monkeypatch, capsys):
    """The doc's Python blocks executed in order as the module ``mypkg.walk``."""
    package, module = types.ModuleType("mypkg"), types.ModuleType(MODULE)
    package.__path__ = []
    package.walk = module
    monkeypatch.setitem(sys.modules, "mypkg", package)
    monkeypatch.setitem(sys.modules, MODULE, module)
    code = blocks("python")
    assert len(code) >= 3
    for block in code:
        exec(compile(block, str(DOC), "exec"), module.__dict__)
    module.printed = capsys.readouterr().out
    return module


def test_python_blocks_run_and_the_walker_learns(walk):
    assert issubclass(walk.WalkEnvironment, Environment)
    assert issubclass(walk.ActionValueBrain, Brain)
    assert issubclass(walk.EpsilonGreedyMuscle, Muscle)
    assert issubclass(walk.StepCostObjective, Objective)
    assert "action values" in walk.printed
    # the doc's claims: moving right is worth more, every test episode goes straight to the goal
    assert walk.brain.values[1] > walk.brain.values[0]
    assert len(walk.returns) == 5 and all(r > 10 for r in walk.returns)


def test_drive_one_episode_by_hand(walk):
    env = walk.WalkEnvironment(uid="w", seed=4, size=5, max_steps=8)
    baseline = env.start_environment()
    assert [s.uid for s in baseline.sensors] == ["w.position"]
    assert [a.uid for a in baseline.actuators] == ["w.move"]
    brain, muscle = walk.ActionValueBrain(seed=0), walk.EpsilonGreedyMuscle(uid="m", seed=0, epsilon=1.0)
    objective = walk.StepCostObjective(step_cost=0.5)
    brain.setup(baseline.sensors, baseline.actuators)
    muscle.setup(baseline.sensors, baseline.actuators)
    muscle.reset()
    sensors, steps = baseline.sensors, 0
    while True:
        actions = muscle.propose_actions(sensors, baseline.actuators)
        assert all(a.space.contains(a.value) for a in actions)
        state = env.update(actions)
        value = objective.internal_reward(state.rewards)
        assert value == pytest.approx(state.rewards[0].value - 0.5)
        update = brain.thinking(Experience(0, 0, steps, sensors, actions, state.rewards, value, state.sensors,
                                           state.done))
        muscle.update(update)
        sensors, steps = state.sensors, steps + 1
        if state.done:
            break
    assert 1 <= steps <= 8 and brain.counts.sum() == steps
    assert state.sensors[0].value == 4 or steps == 8
    with pytest.raises(ValueError, match="w.move"):
        env.update([ActuatorInformation("w.move", baseline.actuators[0].space, None)])


def test_walk_environment_is_deterministic_and_works_with_q_learning(walk):
    def episode_starts(seed):
        env = walk.WalkEnvironment(uid="w", seed=seed)
        return [env.start_environment().sensors[0].value for _ in range(10)]

    assert episode_starts(1) == episode_starts(1) != episode_starts(2)
    env = walk.WalkEnvironment(uid="w", seed=1)
    baseline = env.start_environment()
    brain, muscle = QLearningBrain(alpha=0.5), QLearningMuscle(uid="q", epsilon=0.2)
    brain.setup(baseline.sensors, baseline.actuators)
    muscle.setup(baseline.sensors, baseline.actuators)
    muscle.update(brain.muscle_state())
    for mode, n in [(Mode.TRAIN, 40), (Mode.TEST, 5)]:
        brain.mode = muscle.mode = mode
        returns = [walk.run_episode(env, brain, muscle, walk.StepCostObjective(), e) for e in range(n)]
    assert all(r > 10 for r in returns)


def test_run_document_names_the_doc_classes_with_valid_params(walk):
    (text,) = blocks("yaml")
    doc = load_yaml("plugins.md", text=text).data
    (training,) = doc["schedule"][0].values()
    env_spec = training["environments"][0]["environment"]
    (agent,) = training["agents"]
    specs = [(env_spec, {"uid": env_spec["uid"], "seed": 1})] + [
        (agent[part], extra) for part, extra in
        [("brain", {"seed": 1}), ("muscle", {"uid": agent["name"], "seed": 1}), ("objective", {})]
    ]
    for spec, fixed in specs:
        module, _, name = spec["name"].partition(":")
        assert module == MODULE
        getattr(walk, name)(**fixed, **spec["params"])
    env = walk.WalkEnvironment(uid=env_spec["uid"], seed=1, **env_spec["params"])
    baseline = env.start_environment()
    assert agent["sensors"] == [s.uid for s in baseline.sensors]
    assert agent["actuators"] == [a.uid for a in baseline.actuators]
    assert training["phase_config"]["mode"] == "train"
    assert doc["schedule"][1]["testing"]["phase_config"]["mode"] == "test"


def test_the_batched_muscle_acts_as_each_muscle_alone(walk):
    """docs/plugins.md, "Batched acting": the example's one product for the batch
    gives every muscle what it gives alone, with its own draws."""
    import numpy as np

    together = [walk.BatchedMuscle(uid="m", seed=s) for s in range(5)]
    alone = [walk.BatchedMuscle(uid="m", seed=s) for s in range(5)]
    rng = np.random.default_rng(0)
    for _ in range(50):
        observations = [rng.normal(size=2) for _ in together]
        assert walk.BatchedMuscle.propose_batch(together, observations) == [
            m.propose_values(o) for m, o in zip(alone, observations)]
