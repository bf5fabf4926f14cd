import importlib

import pytest

import xdoe.environments


@pytest.mark.parametrize(
    "name, module",
    [("DummyEnvironment", "xdoe.environments._dummy"),
     ("GymnasiumEnvironment", "xdoe.environments._gymnasium"),
     ("TicTacToeEnvironment", "xdoe.environments._tictactoe")],
)
def test_addressable_by_package_and_module(name, module):
    assert name in xdoe.environments.__all__
    assert getattr(xdoe.environments, name) is getattr(importlib.import_module(module), name)
    assert getattr(xdoe.environments, name).__doc__
