"""The executor's shortcuts of the common step (issue 16) keep the plugin
contract: a muscle that writes ``propose_actions`` gets fresh actuator objects
at every step (``keeps_actuators``, once a declaration that it returns new
ones, is accepted and no longer changes anything); subclasses of the built-in
controller and episode condition are called as written."""

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


@pytest.mark.parametrize("muscle", ["components:MutatingMuscle", "components:KeepingMuscle",
                                    "components:OverridingMuscle", "components:MisdeclaredMuscle"])
def test_actuators_handed_to_muscles_are_fresh_at_every_step(store, tmp_path, muscle):
    doc = run_document(("training", counting_phase(episodes=2, length=3, muscle={"name": muscle, "params": {}})))
    result = run(doc, store=store, results=tmp_path / "r")
    assert result.ok, result.traceback
    (m,) = components.MUSCLES
    assert len(m.given) == 6
    assert len({id(a) for a in m.given}) == 6  # a fresh object each step, whatever keeps_actuators says
    assert [e["steps"] for e in store.runs.episodes("test-run")] == [3, 3]


def test_subclassed_controller_and_condition_are_called(store, tmp_path):
    components.CountingEnvCondition.calls = components.CountingVanilla.steps = 0
    phase = counting_phase(episodes=2, length=4, conditions=[{"name": "components:CountingEnvCondition"}])
    phase["simulation"]["name"] = "components:CountingVanilla"
    result = run(run_document(("training", phase)), store=store, results=tmp_path / "r")
    assert result.ok, result.traceback
    assert components.CountingVanilla.steps == components.CountingEnvCondition.calls == 8
    assert [e["steps"] for e in store.runs.episodes("test-run")] == [4, 4]
