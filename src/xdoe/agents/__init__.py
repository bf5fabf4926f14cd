"""Built-in agents: brains, muscles and objectives.

- :class:`DummyBrain` / :class:`DummyMuscle`: no learning, uniformly random
  actions (a baseline and a pipeline check);
- :class:`QLearningBrain` / :class:`QLearningMuscle`: tabular Q-learning on
  discrete sensors and actuators (Watkins & Dayan 1992);
- :class:`RewardObjective`: the sum of the rewards an agent receives.

Each is addressable in documents as ``xdoe.agents:Name`` and by its full
module path (e.g. ``xdoe.agents._qlearning:QLearningBrain``).
"""

from xdoe.agents._dummy import DummyBrain, DummyMuscle
from xdoe.agents._objectives import RewardObjective
from xdoe.agents._qlearning import DiscreteEncoder, QLearningBrain, QLearningMuscle, QTable

__all__ = [
    "DummyBrain",
    "DummyMuscle",
    "QLearningBrain",
    "QLearningMuscle",
    "QTable",
    "DiscreteEncoder",
    "RewardObjective",
]
