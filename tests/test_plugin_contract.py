"""The plugin contract is documented as Gymnasium documents ``Env.step``
(issue 34): every method a plugin writes or overrides says what its
arguments are, what it returns (types and shapes), what it raises, and shows
an example, and every example runs."""

from __future__ import annotations

import doctest
import inspect
import sys
import tempfile
import typing
from pathlib import Path

import pytest

import xdoe.agent
import xdoe.environment
from xdoe.agent import Brain, Muscle, Objective
from xdoe.conditions import TerminationCondition
from xdoe.environment import Environment, Reward
from xdoe.simulation import SimulationController

#: every method of the plugin API a plugin writes or may override
CONTRACT: dict[type, tuple[str, ...]] = {
    Environment: ("start_environment", "update", "update_values", "last_state", "close"),
    Reward: ("__call__",),
    Brain: ("setup", "thinking", "thinking_values", "pretrain", "muscle_state", "store", "load"),
    Muscle: ("setup", "reset", "propose_actions", "propose_values", "update", "propose_batch"),
    Objective: ("internal_reward", "internal_reward_values"),
    SimulationController: ("start_episode", "step"),
    TerminationCondition: ("phase_started", "step_finished", "episode_finished"),
}
#: public methods the base classes give plugins to call, not to write
PROVIDED = {Environment: {"full_id"}}
METHODS = [(cls, name) for cls, names in CONTRACT.items() for name in names]


def test_the_contract_is_every_public_method_of_the_base_classes() -> None:
    assert len(METHODS) == 26
    for cls, names in CONTRACT.items():
        public = {name for name, value in vars(cls).items()
                  if (callable(value) or isinstance(value, classmethod))
                  and (not name.startswith("_") or name == "__call__")}
        assert public - PROVIDED.get(cls, set()) == set(names), cls


def test_the_plugin_packages_export_only_the_contract() -> None:
    """The executor's machinery (derived forms, observation checks,
    parameter samplers) is in ``xdoe._plugins``, not in the plugin API."""
    assert sorted(xdoe.environment.__all__) == sorted([
        "Environment", "Reward", "SensorInformation", "ActuatorInformation", "RewardInformation",
        "EnvironmentBaseline", "EnvironmentState", "check_environment", "action_mask", "is_action_mask",
        "EnvironmentCheckError"])
    assert sorted(xdoe.agent.__all__) == ["Brain", "Experience", "Mode", "Muscle", "Objective"]


@pytest.mark.parametrize(("cls", "name"), METHODS, ids=[f"{c.__name__}.{n}" for c, n in METHODS])
def test_every_contract_method_documents_arguments_returns_raises_and_an_example(cls: type, name: str) -> None:
    function = inspect.getattr_static(cls, name)
    function = getattr(function, "__func__", function)
    doc = inspect.getdoc(function) or ""
    parameters = list(inspect.signature(function).parameters)[1:]  # self or cls
    returns = typing.get_type_hints(function, vars(sys.modules[function.__module__])).get("return")
    assert len(doc.splitlines()) >= 12, f"{cls.__name__}.{name}: {len(doc.splitlines())} lines"
    for parameter in parameters:
        assert f"    {parameter} (" in doc, f"{cls.__name__}.{name}: argument {parameter!r} not described"
    if parameters:
        assert "\nArgs:\n" in doc, f"{cls.__name__}.{name}"
    if returns is not type(None):
        assert "\nReturns:\n" in doc, f"{cls.__name__}.{name}"
    assert "\nRaises:\n" in doc and "\nExamples:\n" in doc, f"{cls.__name__}.{name}"


@pytest.mark.parametrize(("cls", "name"), METHODS, ids=[f"{c.__name__}.{n}" for c, n in METHODS])
def test_every_contract_example_runs(cls: type, name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # examples that write files write here
    function = inspect.getattr_static(cls, name)
    function = getattr(function, "__func__", function)
    module = sys.modules[function.__module__]
    tests = doctest.DocTestFinder(recurse=False).find(function, f"{cls.__name__}.{name}", globs={})
    assert [len(t.examples) > 0 for t in tests] == [True]
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in tests:
        test.globs = {"__name__": module.__name__}  # only what the example imports itself
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0
