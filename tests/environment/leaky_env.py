"""A gymnasium environment whose observations leave their space, for the
observation-check tests (issue 25): ``Box(0, 1, (2,))`` observations, the
``at``-th observation of each episode (1 = the first step's) is
``[2.0, nan]`` (``how="box"``) or ``[0.5, 0.5]`` everywhere and ``[-1, 0]``
at ``at``; ``length`` steps an episode; ``Discrete(2)`` actions, reward 1.
Registered as ``leaky_env:Leaky-v0`` (gymnasium imports this module);
``leaky_env:LeakyDiscrete-v0`` the same with ``Discrete(4)`` observations
(``t % 4``, ``bad`` at ``at``)."""

from __future__ import annotations

import gymnasium
import numpy as np
from gymnasium import spaces


class Leaky(gymnasium.Env):
    def __init__(self, at: int = 3, length: int = 40, bad: tuple = (2.0, float("nan"))) -> None:
        self.observation_space = spaces.Box(0.0, 1.0, (2,), np.float32)
        self.action_space = spaces.Discrete(2)
        self.at, self.length, self.bad = at, length, np.array(bad, dtype=np.float32)
        self.t = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.full(2, 0.5, np.float32), {}

    def step(self, action):
        self.t += 1
        obs = self.bad.copy() if self.t == self.at else np.full(2, 0.5, np.float32)
        return obs, 1.0, self.t >= self.length, False, {}


class LeakyDiscrete(gymnasium.Env):
    def __init__(self, at: int = 3, length: int = 40, bad: int = 7) -> None:
        self.observation_space = spaces.Discrete(4)
        self.action_space = spaces.Discrete(2)
        self.at, self.length, self.bad = at, length, bad
        self.t = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return 0, {}

    def step(self, action):
        self.t += 1
        return self.bad if self.t == self.at else self.t % 4, 1.0, self.t >= self.length, False, {}


gymnasium.register("Leaky-v0", entry_point=Leaky)
gymnasium.register("LeakyDiscrete-v0", entry_point=LeakyDiscrete)
