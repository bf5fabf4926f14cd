"""Components for the scale tests (``scale_components:Class`` in run
documents; tests/execution is on ``sys.path`` via conftest.py, and child
processes inherit it)."""

from __future__ import annotations

import os
import signal
import time
from typing import Any

from gymnasium import spaces

from xdoe.agent import Brain, Experience, Muscle
from xdoe.environment import (
    ActuatorInformation,
    Environment,
    EnvironmentBaseline,
    EnvironmentState,
    RewardInformation,
    SensorInformation,
)


class CountdownEnvironment(Environment):
    """Sensor ``<uid>.left`` (Discrete(1000)): updates left in the episode;
    actuator ``<uid>.push`` (Discrete(3)); reward = value pushed plus a seeded
    random 0..9; done after ``length`` updates. ``kill_at_episode``: in that
    episode's first update the environment SIGKILLs its own process.
    ``work``: busy-loop iterations per update (CPU-bound); ``sleep``: seconds
    slept per update."""

    def __init__(self, uid: str, seed: int, length: int = 5, kill_at_episode: int = -1,
                 work: int = 0, sleep: float = 0.0) -> None:
        super().__init__(uid=uid, seed=seed)
        self.length, self.kill_at, self.work, self.sleep = length, kill_at_episode, work, sleep
        self.left = length
        self.episode = -1
        self.space = spaces.Discrete(1000)

    def start_environment(self) -> EnvironmentBaseline:
        self.left = self.length
        self.episode += 1
        return EnvironmentBaseline([SensorInformation(self.full_id("left"), self.space, self.left)],
                                   [ActuatorInformation(self.full_id("push"), spaces.Discrete(3))])

    def update(self, actuators: list[ActuatorInformation]) -> EnvironmentState:
        if self.episode == self.kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
        x = 0
        for i in range(self.work):
            x += i * i
        if self.sleep:
            time.sleep(self.sleep)
        pushed = next((a.value for a in actuators if a.value is not None), 0)
        self.left -= 1
        reward = float(pushed) + float(self.rng.integers(10))
        return EnvironmentState([SensorInformation(self.full_id("left"), self.space, self.left)],
                                [RewardInformation(self.full_id("reward"), reward)], self.left <= 0)


class TallyBrain(Brain):
    """Counts experiences; sends the count as an update every ``every``
    experiences (and its muscle_state)."""

    def __init__(self, seed: int = 0, every: int = 1) -> None:
        super().__init__(seed=seed)
        self.count = 0
        self.every = every
        self.seen: list[tuple[int, int, int]] = []

    def thinking(self, experience: Experience) -> Any:
        self.count += 1
        self.seen.append((experience.worker, experience.episode, experience.step))
        return self.count if self.count % self.every == 0 else None

    def muscle_state(self) -> Any:
        return self.count


class TallyMuscle(Muscle):
    """Pushes a seeded random value; keeps every update it received."""

    def __init__(self, uid: str, seed: int = 0) -> None:
        super().__init__(uid=uid, seed=seed)
        self.updates: list[Any] = []

    def update(self, update: Any) -> None:
        self.updates.append(update)

    def propose_actions(self, sensors: list[SensorInformation],
                        actuators: list[ActuatorInformation]) -> list[ActuatorInformation]:
        return [ActuatorInformation(a.uid, a.space, int(self.rng.integers(3))) for a in actuators]


class EchoMuscle(TallyMuscle):
    """Pushes 2 once it has received a brain update with a count above 0, else 0."""

    def propose_actions(self, sensors, actuators):
        value = 2 if any(u for u in self.updates) else 0
        return [ActuatorInformation(a.uid, a.space, value) for a in actuators]


def countdown_run(uid: str, *, seed: int = 5, episodes: int = 3, length: int = 5, worker: int = 1,
                  kill_at_episode: int = -1, work: int = 0, sleep: float = 0.0,
                  test_episodes: int = 1, conditions: list | None = None, held: bool = False) -> dict:
    """A run document: training (TallyBrain) then testing on CountdownEnvironment
    (``held``: ``held_environments.HeldCountdownEnvironment``, which a kill test holds where it asks)."""
    name = "held_environments:HeldCountdownEnvironment" if held else "scale_components:CountdownEnvironment"
    return {
        "uid": uid,
        "experiment_uid": "scale-tests",
        "seed": seed,
        "schedule": [
            {"training": {
                "environments": [{"environment": {
                    "name": name, "uid": "cd",
                    "params": {"length": length, "kill_at_episode": kill_at_episode, "work": work,
                               "sleep": sleep}}}],
                "agents": [{"name": "agent", "brain": {"name": "scale_components:TallyBrain"},
                            "muscle": {"name": "scale_components:TallyMuscle"},
                            "objective": {"name": "xdoe.agents:RewardObjective"}}],
                "simulation": {"name": "xdoe.simulation:VanillaSimController",
                               "conditions": conditions or []},
                "phase_config": {"mode": "train", "worker": worker, "episodes": episodes}}},
            {"testing": {"phase_config": {"mode": "test", "worker": 1, "episodes": test_episodes}}},
        ],
    }


def write_runs(directory, docs: list[dict]) -> list[str]:
    """Write the documents as ``run-<uid>.yaml`` files; their paths."""
    from ruamel.yaml import YAML

    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for doc in docs:
        path = directory / f"run-{doc['uid']}.yaml"
        with open(path, "w") as fh:
            YAML().dump(doc, fh)
        paths.append(str(path))
    return paths
