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

from xdoe.components.environments import FunctionEnvironment
from xdoe.environments import DummyEnvironment, GymnasiumEnvironment


def _held(base: type) -> type:
    """``base`` (an environment taking ``uid``, ``seed`` and parameters) that holds where asked."""

    class Held(base):  # type: ignore[valid-type, misc]
        def __init__(self, uid: str, seed: int, **params: Any) -> None:
            super().__init__(uid=uid, seed=seed, **params)
            self.started = 0

        def start_environment(self) -> Any:
            hold_here(self.started)
            self.started += 1
            return super().start_environment()

    Held.__name__ = Held.__qualname__ = f"Held{base.__name__}"  # pickled by its name in this module
    Held.__doc__ = f":class:`{base.__module__}.{base.__name__}` that holds where asked."
    return Held


HeldGymnasiumEnvironment = _held(GymnasiumEnvironment)
HeldDummyEnvironment = _held(DummyEnvironment)
HeldFunctionEnvironment = _held(FunctionEnvironment)


class HeldCountdownEnvironment(CountdownEnvironment):
    """``scale_components.CountdownEnvironment`` that holds where asked."""

    def start_environment(self) -> Any:
        hold_here(self.episode + 1)
        return super().start_environment()


class DyingAtCloseDummyEnvironment(DummyEnvironment):
    """``DummyEnvironment`` whose process dies (``os._exit``, as a SIGKILL: no
    ``finally`` runs) when it is closed at the end of a phase, once: the file
    ``$XDOE_TEST_DIE_AT_CLOSE`` marks that it died. A kill after the phase's
    last episode and final checkpoint, before its end is recorded."""

    def close(self) -> None:
        import os
        from pathlib import Path

        mark = os.environ.get("XDOE_TEST_DIE_AT_CLOSE")
        if mark and not Path(mark).exists():
            Path(mark).write_text("died")
            os._exit(9)
        super().close()
