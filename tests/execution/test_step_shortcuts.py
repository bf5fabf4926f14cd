"""The executor's shortcuts of the common step (issue 16) keep the plugin
contract: actuator objects a muscle may change are fresh at every step unless
it declares ``keeps_actuators``; subclasses of the built-in controller and
episode condition are called as written."""

from __future__ import annotations

import components
import pytest
from runbuilders import counting_phase, run_document

from xdoe.execution import run


@pytest.fixture(autouse=True)
def _clear():
    components.MUSCLES.clear()
    components.BRAINS.clear()
    yield
    components.MUSCLES.clear()
    components.BRAINS.clear()


@pytest.mark.parametrize("muscle, keeps", [("components:MutatingMuscle", False),
                                           ("components:KeepingMuscle", True),
                                           ("components:OverridingMuscle", False)])
def test_actuators_handed_to_muscles(store, tmp_path, muscle, keeps):
    doc = run_document(("training", counting_phase(episodes=2, length=3, muscle={"name": muscle, "params": {}})))
    result = run(doc, store=store, results=tmp_path / "r")
    assert result.ok, result.traceback
    (m,) = components.MUSCLES
    assert len(m.given) == 6
    if keeps:  # the same unset object at every step
        assert all(a is m.given[0] for a in m.given) and m.given[0].value is None
    else:  # a fresh object each step: the values set earlier are kept as they were
        assert len({id(a) for a in m.given}) == 6
        assert all(a.value in (0, 1, 2) for a in m.given)
    assert [e["steps"] for e in store.episodes("test-run")] == [3, 3]


def test_a_muscle_that_declares_keeps_actuators_but_sets_values_fails_clearly(store, tmp_path):
    doc = run_document(("training", counting_phase(muscle={"name": "components:MisdeclaredMuscle", "params": {}})))
    result = run(doc, store=store, results=tmp_path / "r")
    assert result.status == "failed"
    assert result.error == (
        "agent 'agent': its muscle declares keeps_actuators but set a value on actuator 'env.push' it "
        "was given (return new ActuatorInformation objects, or do not declare keeps_actuators)")


def test_subclassed_controller_and_condition_are_called(store, tmp_path):
    components.CountingEnvCondition.calls = components.CountingVanilla.steps = 0
    phase = counting_phase(episodes=2, length=4, conditions=[{"name": "components:CountingEnvCondition"}])
    phase["simulation"]["name"] = "components:CountingVanilla"
    result = run(run_document(("training", phase)), store=store, results=tmp_path / "r")
    assert result.ok, result.traceback
    assert components.CountingVanilla.steps == components.CountingEnvCondition.calls == 8
    assert [e["steps"] for e in store.episodes("test-run")] == [4, 4]


def test_a_subclass_overriding_propose_actions_does_not_inherit_keeps_actuators():
    """QLearningMuscle declares keeps_actuators for its own propose_actions; a
    plugin subclass that overrides the method (and may set values on the
    actuators it is given) gets fresh copies unless it declares it again."""
    from xdoe.components.agents import QLearningMuscle
    from xdoe.execution._agent_runtime import keeps_actuators

    class Tweaked(QLearningMuscle):
        def propose_actions(self, sensors, actuators):
            for a in actuators:
                a.value = 0
            return actuators

    class TweakedAndDeclared(Tweaked):
        keeps_actuators = True

    class Inheriting(QLearningMuscle):
        epsilon_note = "no override"

    declared_on_instance = Tweaked(uid="m")
    declared_on_instance.keeps_actuators = True
    got = {m.__class__.__name__ if m is not declared_on_instance else "instance": keeps_actuators(m)
           for m in (QLearningMuscle(uid="m"), Tweaked(uid="m"), TweakedAndDeclared(uid="m"),
                     Inheriting(uid="m"), declared_on_instance)}
    assert got == {"QLearningMuscle": True, "Tweaked": False, "TweakedAndDeclared": True, "Inheriting": True,
                   "instance": True}
