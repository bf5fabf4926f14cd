"""A known-truth problem for adaptive designs (issue 37).

:class:`QuadraticEnvironment` pays, at the one step of each episode,

    reward = 10 - (x1 - 2.6)^2 - 2 (x2 - 7.3)^2 - 0.5 (x3 - 1.5)^2 + N(0, 0.1^2)

over ``x1`` in [1, 5], ``x2`` in [5, 9], ``x3`` in [0, 4]: a maximum of 10 at
(2.6, 7.3, 1.5), off the points of small grids (the 3 x 3 x 3 grid's best is
9.535; within 0.25 of the maximum takes the 6 x 6 x 6 grid, 216 points).
"""

from __future__ import annotations

import itertools
from typing import Any

from synthetic import OneStepEnvironment

OPTIMUM = {"x1": 2.6, "x2": 7.3, "x3": 1.5}
MAXIMUM = 10.0
RANGES = {"x1": (1.0, 5.0), "x2": (5.0, 9.0), "x3": (0.0, 4.0)}


def truth(x1: float, x2: float, x3: float) -> float:
    return MAXIMUM - (x1 - 2.6) ** 2 - 2.0 * (x2 - 7.3) ** 2 - 0.5 * (x3 - 1.5) ** 2


def grid_runs(tolerance: float) -> int:
    """Points of the smallest n x n x n grid (each range's ends included) whose best point is within ``tolerance``."""
    for n in range(2, 50):
        axes = [[lo + (hi - lo) * i / (n - 1) for i in range(n)] for lo, hi in RANGES.values()]
        if max(truth(*p) for p in itertools.product(*axes)) >= MAXIMUM - tolerance:
            return n ** 3
    raise AssertionError("no grid up to 49^3")


class QuadraticEnvironment(OneStepEnvironment):
    """One-step episodes paying :func:`truth` plus N(0, 0.1^2)."""

    def __init__(self, uid: str, seed: int, x1: float = 2.6, x2: float = 7.3, x3: float = 1.5,
                 noise: float = 0.1) -> None:
        super().__init__(uid=uid, seed=seed)
        self.mean = truth(float(x1), float(x2), float(x3))
        self.noise = float(noise)


def document(design: Any, *, seed: int = 11, repetitions: int = 1, episodes: int = 2,
             factors: dict | None = None) -> dict[str, Any]:
    """The experiment document (plain data) over x1, x2, x3."""
    factors = factors or {name: {"range": list(r)} for name, r in RANGES.items()}
    params = {name: "${" + name + "}" for name in factors}
    return {
        "uid": "quad", "seed": seed, "repetitions": repetitions, "design": design, "factors": factors,
        "definitions": {
            "environments": {"f": {"environment": {"name": "optuna_truth:QuadraticEnvironment", "uid": "f",
                                                   "params": params}}},
            "agents": {"random": {"name": "random", "brain": {"name": "xdoe.agents:DummyBrain", "params": {}},
                                  "muscle": {"name": "xdoe.agents:DummyMuscle", "params": {}},
                                  "objective": {"name": "xdoe.agents:RewardObjective", "params": {}}}},
            "simulation": {"v": {"name": "xdoe.simulation:VanillaSimController",
                                 "conditions": [{"name": "xdoe.conditions:EnvironmentTerminationCondition"}]}},
            "phase_config": {"test": {"mode": "test", "worker": 1, "episodes": episodes}},
            "run_config": {"condition": {"name": "xdoe.conditions:MaxEpisodesTerminationCondition"}},
        },
        "schedule": [{"testing": {"environments": [["f"]], "agents": [["random"]], "simulation": ["v"],
                                  "phase_config": ["test"]}}],
    }
