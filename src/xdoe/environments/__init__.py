"""Built-in environments.

- :class:`DummyEnvironment`: random sensor readings, a reward computed from the
  actions, a fixed episode length (for testing pipelines);
- :class:`GymnasiumEnvironment`: any ``gymnasium`` environment by id
  (``Taxi-v4``, ``CartPole-v1``...);
- :class:`PettingZooEnvironment`: any PettingZoo environment, AEC or
  parallel API (needs ``xdoe[pettingzoo]``);
- :class:`TicTacToeEnvironment`: two players taking turns (for
  ``xdoe.simulation:TakingTurnsSimController``) or one player against a
  built-in random opponent.

Each is addressable in documents as ``xdoe.environments:Name`` and by its full
module path (e.g. ``xdoe.environments._gymnasium:GymnasiumEnvironment``).
The classes are imported on first use (:mod:`xdoe._lazy`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xdoe._lazy import lazy_exports

if TYPE_CHECKING:
    from xdoe.environments._dummy import DummyEnvironment
    from xdoe.environments._gymnasium import GymnasiumEnvironment
    from xdoe.environments._pettingzoo import PettingZooEnvironment
    from xdoe.environments._tictactoe import TicTacToeEnvironment

__all__ = ["DummyEnvironment", "GymnasiumEnvironment", "PettingZooEnvironment", "TicTacToeEnvironment"]

__getattr__, __dir__ = lazy_exports(__name__, globals(), {
    "xdoe.environments._dummy": ["DummyEnvironment"],
    "xdoe.environments._gymnasium": ["GymnasiumEnvironment"],
    "xdoe.environments._pettingzoo": ["PettingZooEnvironment"],
    "xdoe.environments._tictactoe": ["TicTacToeEnvironment"],
})
