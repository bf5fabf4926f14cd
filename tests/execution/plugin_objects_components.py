"""Plugins that remember every object the executor made of them (for
test_plugin_objects.py): each keeps itself in :data:`SEEN` at its first
contract call, with the names of its attributes then."""

from __future__ import annotations

from typing import Any

from xdoe.agent import Brain, Experience
from xdoe.components.agents import DummyMuscle, QLearningBrain, QLearningMuscle, RewardObjective
from xdoe.components.environments import GymnasiumEnvironment, TicTacToeEnvironment

#: ``(object, sorted names of vars(object) at its first contract call)`` in the order met
SEEN: list[tuple[Any, list[str]]] = []


def _seen(obj: Any) -> None:
    if not any(o is obj for o, _ in SEEN):
        SEEN.append((obj, sorted(vars(obj))))


class SeenQLearningBrain(QLearningBrain):
    def setup(self, sensors: Any, actuators: Any) -> None:
        super().setup(sensors, actuators)
        _seen(self)


class SeenQLearningMuscle(QLearningMuscle):
    def propose_values(self, observation: Any) -> Any:
        _seen(self)
        return super().propose_values(observation)


class SeenRewardObjective(RewardObjective):
    def internal_reward_values(self, rewards: dict[str, float]) -> float:
        _seen(self)
        return super().internal_reward_values(rewards)


class SeenGymnasiumEnvironment(GymnasiumEnvironment):
    def start_environment(self) -> Any:
        baseline = super().start_environment()
        _seen(self)
        return baseline


class SeenTicTacToe(TicTacToeEnvironment):
    """Writes the object form ``update`` (stepped through the executor's adapter)."""

    def start_environment(self) -> Any:
        baseline = super().start_environment()
        _seen(self)
        return baseline


class SeenDummyMuscle(DummyMuscle):
    """Writes the object form ``propose_actions``."""

    def propose_actions(self, sensors: Any, actuators: Any) -> Any:
        _seen(self)
        return super().propose_actions(sensors, actuators)


class ThinkingBrain(Brain):
    """Writes the object form ``thinking``; learns nothing."""

    def thinking(self, experience: Experience) -> None:
        _seen(self)
        return None
