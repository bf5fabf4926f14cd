"""Environments that :mod:`hold` can hold at an episode start, so that a kill
test SIGKILLs (or Ctrl-Cs) its process there whatever the machine's speed;
without ``XDOE_TEST_HOLD`` they are the plain environments (the same
episodes). Each calls ``hold_here(episode index in its environment)``.
Referenced as ``held_environments:Class``; a process running them needs
``tests`` (``hold``) and ``tests/execution`` on its path. Test components of
one test file hold in themselves (``prune_components.CurveEnvironment``,
``tree_components.LevelEnvironment``)."""

from __future__ import annotations

from typing import Any

from hold import hold_here
from scale_components import CountdownEnvironment

from xdoe.environments import DummyEnvironment, GymnasiumEnvironment


class HeldGymnasiumEnvironment(GymnasiumEnvironment):
    """:class:`xdoe.environments.GymnasiumEnvironment` that holds where asked."""

    def __init__(self, uid: str, seed: int, **params: Any) -> None:
        super().__init__(uid=uid, seed=seed, **params)
        self.started = 0

    def start_environment(self) -> Any:
        hold_here(self.started)
        self.started += 1
        return super().start_environment()


class HeldDummyEnvironment(DummyEnvironment):
    """:class:`xdoe.environments.DummyEnvironment` that holds where asked."""

    def __init__(self, uid: str, seed: int, **params: Any) -> None:
        super().__init__(uid=uid, seed=seed, **params)
        self.started = 0

    def start_environment(self) -> Any:
        hold_here(self.started)
        self.started += 1
        return super().start_environment()


class HeldCountdownEnvironment(CountdownEnvironment):
    """``scale_components.CountdownEnvironment`` that holds where asked."""

    def start_environment(self) -> Any:
        hold_here(self.episode + 1)
        return super().start_environment()
