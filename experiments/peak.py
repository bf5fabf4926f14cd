"""A question with a known answer, for the walk-through "Adaptive or
designed?" (docs/how-to/adaptive-vs-designed.md): the studies'
environment, :class:`xdoe.components.environments.FunctionEnvironment`
with ``function: "peak:truth"``, pays at the one step of each episode

    reward = 10 - 12 (x1 - 0.3)^2 - 8 (x2 - 0.65)^2 - 6 (x1 - 0.3)(x2 - 0.65) + N(0, 1)

so the best setting is x1 = 0.3, x2 = 0.65, where the mean reward is 10.
The noise comes from the environment's seeded rng: the same run document
gives the same episodes. Import it with ``PYTHONPATH=experiments``.
"""

from __future__ import annotations

#: the best setting and its mean reward
OPTIMUM = {"x1": 0.3, "x2": 0.65}
MAXIMUM = 10.0


def truth(x1: float, x2: float) -> float:
    """The mean reward at ``(x1, x2)`` (any floats; the maximum is inside [0, 1]^2)."""
    dx, dy = float(x1) - OPTIMUM["x1"], float(x2) - OPTIMUM["x2"]
    return MAXIMUM - 12.0 * dx * dx - 8.0 * dy * dy - 6.0 * dx * dy
