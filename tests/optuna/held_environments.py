"""Environments that :mod:`hold` can hold in the middle of a run, so that
a kill test SIGKILLs the study there whatever the machine's speed; without
``XDOE_TEST_HOLD`` they are the plain environments."""

from __future__ import annotations

from typing import Any

from hold import hold_here
from prune_components import CurveEnvironment

from xdoe.environments import GymnasiumEnvironment


class HeldTaxi(GymnasiumEnvironment):
    """:class:`xdoe.environments.GymnasiumEnvironment` that holds where asked."""

    def __init__(self, uid: str, seed: int, **params: Any) -> None:
        super().__init__(uid=uid, seed=seed, **params)
        self.started = 0

    def start_environment(self) -> Any:
        hold_here(self.started)
        self.started += 1
        return super().start_environment()


class HeldCurveEnvironment(CurveEnvironment):
    """``prune_components.CurveEnvironment`` that holds where asked."""

    def start_environment(self) -> Any:
        hold_here(self.episode + 1)
        return super().start_environment()
