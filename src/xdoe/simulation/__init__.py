"""Simulation controllers: how the agents and environments of an episode take
their steps.

- :class:`VanillaSimController`: all agents act, then the environments step;
- :class:`TakingTurnsSimController`: one agent acts, the environments step,
  the next agent acts...

Subclass :class:`SimulationController` for other schemes; it drives a
:class:`SimulationWorker` given by the executor.
"""

from xdoe.simulation._base import SimulationController, SimulationWorker
from xdoe.simulation._controllers import TakingTurnsSimController, VanillaSimController

__all__ = [
    "SimulationController",
    "SimulationWorker",
    "VanillaSimController",
    "TakingTurnsSimController",
]
