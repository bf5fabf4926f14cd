"""A gymnasium environment that gives a run two warnings, for the stored
run warnings tests (issue 23): the 3rd observation of each episode,
``[2.0, nan]``, is outside its ``Box(0, 1, (2,))`` space
(:class:`~xdoe.errors.ObservationSpaceWarning`), and the 2nd episode's
rewards are NaN (:class:`~xdoe.errors.NonFiniteWarning`); 5 steps an
episode, ``Discrete(2)`` actions. Registered as ``warny_env:Warny-v0``."""

from __future__ import annotations

import gymnasium
import numpy as np
from gymnasium import spaces


class Warny(gymnasium.Env):
    def __init__(self) -> None:
        self.observation_space = spaces.Box(0.0, 1.0, (2,), np.float32)
        self.action_space = spaces.Discrete(2)
        self.t = 0
        self.episode = -1

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        self.episode += 1
        return np.full(2, 0.5, np.float32), {}

    def step(self, action):
        self.t += 1
        obs = np.array([2.0, np.nan], np.float32) if self.t == 3 else np.full(2, 0.5, np.float32)
        return obs, float("nan") if self.episode == 1 else 1.0, self.t >= 5, False, {}


gymnasium.register("Warny-v0", entry_point=Warny)
