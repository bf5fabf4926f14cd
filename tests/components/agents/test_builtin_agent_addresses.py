import importlib

import pytest

import xdoe.agents


@pytest.mark.parametrize(
    "name, module",
    [("DummyBrain", "xdoe.agents._dummy"), ("DummyMuscle", "xdoe.agents._dummy"),
     ("QLearningBrain", "xdoe.agents._qlearning"), ("QLearningMuscle", "xdoe.agents._qlearning"),
     ("RewardObjective", "xdoe.agents._objectives")],
)
def test_addressable_by_package_and_module(name, module):
    assert name in xdoe.agents.__all__
    assert getattr(xdoe.agents, name) is getattr(importlib.import_module(module), name)
    assert getattr(xdoe.agents, name).__doc__
