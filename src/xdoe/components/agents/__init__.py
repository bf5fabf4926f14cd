"""Built-in agents: brains, muscles and objectives.

- :class:`DummyBrain` / :class:`DummyMuscle`: no learning, uniformly random
  actions (a baseline and a pipeline check);
- :class:`QLearningBrain` / :class:`QLearningMuscle`: tabular Q-learning on
  discrete sensors and actuators (Watkins & Dayan 1992);
- :class:`SB3Brain` / :class:`SB3Muscle`: any Stable-Baselines3 algorithm
  (PPO, A2C, DQN, SAC, TD3, DDPG, ``module:Class``); needs ``xdoe[sb3]``;
- :class:`RewardObjective`: the sum of the rewards an agent receives.

Each is addressable in documents as ``xdoe.components.agents:Name`` and by
its full module path (e.g. ``xdoe.components.agents._qlearning:QLearningBrain``);
the old addresses ``xdoe.agents:Name`` and ``xdoe.agents._qlearning:QLearningBrain``
load the same classes (:mod:`xdoe.agents` is an alias). The classes are
imported on first use (:mod:`xdoe._lazy`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xdoe._lazy import lazy_exports

if TYPE_CHECKING:
    from xdoe.components.agents._dummy import DummyBrain, DummyMuscle
    from xdoe.components.agents._objectives import RewardObjective
    from xdoe.components.agents._qlearning import DiscreteEncoder, QLearningBrain, QLearningMuscle, QTable
    from xdoe.components.agents._sb3 import SB3Brain
    from xdoe.components.agents._sb3_muscle import SB3Muscle

__all__ = [
    "DummyBrain",
    "DummyMuscle",
    "QLearningBrain",
    "QLearningMuscle",
    "QTable",
    "DiscreteEncoder",
    "RewardObjective",
    "SB3Brain",
    "SB3Muscle",
]

__getattr__, __dir__ = lazy_exports(__name__, globals(), {
    "xdoe.components.agents._dummy": ["DummyBrain", "DummyMuscle"],
    "xdoe.components.agents._objectives": ["RewardObjective"],
    "xdoe.components.agents._qlearning": ["DiscreteEncoder", "QLearningBrain", "QLearningMuscle", "QTable"],
    "xdoe.components.agents._sb3": ["SB3Brain"],
    "xdoe.components.agents._sb3_muscle": ["SB3Muscle"],
})
