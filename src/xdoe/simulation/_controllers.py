"""The built-in simulation controllers."""

from __future__ import annotations

from xdoe.simulation._base import SimulationController, SimulationWorker

__all__ = ["VanillaSimController", "TakingTurnsSimController"]


class VanillaSimController(SimulationController):
    """All agents act (in document order) on the same readings, then the
    environments step once with all their actions."""

    def step(self, worker: SimulationWorker) -> None:
        act = worker.act
        for i in range(len(worker.agent_names)):
            act(i)
        worker.update()


class TakingTurnsSimController(SimulationController):
    """Agents act one after another in document order, the environments step
    after each action: agent 0 acts, update, agent 1 acts, update, ...; every
    episode starts with agent 0.

    An agent's transition runs from its action to its next turn (or the end
    of the episode): the rewards and objective it gets are summed over the
    updates in between, so a move's consequences include the other agents'
    replies (e.g. losing a board game on the opponent's move).
    """

    def __init__(self) -> None:
        super().__init__()
        self._turn: dict[int, int] = {}

    def start_episode(self, worker: SimulationWorker) -> None:
        self._turn[worker.index] = 0

    def step(self, worker: SimulationWorker) -> None:
        turn = self._turn.get(worker.index, 0)
        worker.act(turn)
        self._turn[worker.index] = (turn + 1) % len(worker.agent_names)
        worker.update()
