"""Simulation controllers drive a worker: who acts when, when the environments step."""

from __future__ import annotations

import pytest

from xdoe.simulation import SimulationController, TakingTurnsSimController, VanillaSimController


class TraceWorker:
    """A SimulationWorker that writes down the calls it gets."""

    def __init__(self, index: int, agents: list[str]) -> None:
        self.index = index
        self.agent_names = agents
        self.calls: list[str] = []

    def act(self, agent: int) -> None:
        self.calls.append(self.agent_names[agent])

    def update(self) -> bool:
        self.calls.append("update")
        return False


def test_vanilla_all_agents_then_one_update():
    worker = TraceWorker(0, ["a", "b", "c"])
    controller = VanillaSimController()
    controller.start_episode(worker)
    controller.step(worker)
    controller.step(worker)
    assert worker.calls == ["a", "b", "c", "update"] * 2


def test_taking_turns_one_agent_per_update_per_worker():
    w0, w1 = TraceWorker(0, ["x", "o"]), TraceWorker(1, ["x", "o"])
    controller = TakingTurnsSimController()
    for w in (w0, w1):
        controller.start_episode(w)
    for _ in range(3):
        controller.step(w0)
    controller.step(w1)
    assert w0.calls == ["x", "update", "o", "update", "x", "update"]
    assert w1.calls == ["x", "update"]
    controller.start_episode(w0)  # every episode starts with agent 0
    controller.step(w0)
    assert w0.calls[-2:] == ["x", "update"]


def test_controllers_take_no_parameters():
    with pytest.raises(TypeError, match="unexpected parameters: speed"):
        VanillaSimController(speed=2)
    with pytest.raises(TypeError):
        SimulationController()  # abstract
