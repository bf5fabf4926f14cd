"""A tiny PettingZoo parallel environment whose agents leave at different
times: ``short`` terminates after 2 steps, ``long`` is truncated after 4
(used as ``env: pz_leaving`` by tests/components/environments/test_pettingzoo_environment.py)."""

from __future__ import annotations

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv


class _Leaving(ParallelEnv):
    metadata = {"name": "leaving_v0"}

    def __init__(self, short: int = 2, long: int = 4) -> None:
        self.possible_agents = ["short", "long"]
        self.limits = {"short": short, "long": long}

    def observation_space(self, agent):
        return spaces.Discrete(10)

    def action_space(self, agent):
        return spaces.Discrete(2)

    def reset(self, seed=None, options=None):
        self.agents = list(self.possible_agents)
        self.t = 0
        self.rng = np.random.default_rng(seed)
        return {a: 0 for a in self.agents}, {a: {} for a in self.agents}

    def step(self, actions):
        assert set(actions) == set(self.agents), (actions, self.agents)
        self.t += 1
        obs = {a: self.t for a in self.agents}
        rewards = {a: float(actions[a]) + float(self.rng.random() < 0.5) for a in self.agents}
        terminations = {a: a == "short" and self.t >= self.limits[a] for a in self.agents}
        truncations = {a: a == "long" and self.t >= self.limits[a] for a in self.agents}
        self.agents = [a for a in self.agents if not (terminations[a] or truncations[a])]
        return obs, rewards, terminations, truncations, {a: {} for a in obs}


def parallel_env(**kwargs):
    return _Leaving(**kwargs)
