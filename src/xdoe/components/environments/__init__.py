"""Built-in environments.

- :class:`DummyEnvironment`: random sensor readings, a reward computed from the
  actions, a fixed episode length (for testing pipelines);
- :class:`FunctionEnvironment`: one-step episodes whose reward is a known
  function of its parameters plus noise (a study with a known answer);
- :class:`GymnasiumEnvironment`: any ``gymnasium`` environment by id
  (``Taxi-v4``, ``CartPole-v1``...);
- :class:`PettingZooEnvironment`: any PettingZoo environment, AEC or
  parallel API (needs ``xdoe[pettingzoo]``);
- :class:`TicTacToeEnvironment`: two players taking turns (for
  ``xdoe.simulation:TakingTurnsSimController``) or one player against a
  built-in random opponent.

Each is addressable in documents as ``xdoe.components.environments:Name`` and by
its full module path (e.g. ``xdoe.components.environments._gymnasium:GymnasiumEnvironment``);
the old addresses ``xdoe.environments:Name`` and ``xdoe.environments._gymnasium:GymnasiumEnvironment``
load the same classes (:mod:`xdoe.environments` is an alias). The classes are
imported on first use (:mod:`xdoe._lazy`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xdoe._lazy import lazy_exports

if TYPE_CHECKING:
    from xdoe.components.environments._dummy import DummyEnvironment
    from xdoe.components.environments._function import FunctionEnvironment
    from xdoe.components.environments._gymnasium import GymnasiumEnvironment
    from xdoe.components.environments._pettingzoo import PettingZooEnvironment
    from xdoe.components.environments._tictactoe import TicTacToeEnvironment

__all__ = ["DummyEnvironment", "FunctionEnvironment", "GymnasiumEnvironment", "PettingZooEnvironment",
           "TicTacToeEnvironment"]

__getattr__, __dir__ = lazy_exports(__name__, globals(), {
    "xdoe.components.environments._dummy": ["DummyEnvironment"],
    "xdoe.components.environments._function": ["FunctionEnvironment"],
    "xdoe.components.environments._gymnasium": ["GymnasiumEnvironment"],
    "xdoe.components.environments._pettingzoo": ["PettingZooEnvironment"],
    "xdoe.components.environments._tictactoe": ["TicTacToeEnvironment"],
})
