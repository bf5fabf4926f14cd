"""Components for executor tests: deterministic counters, recorders and
components that fail on purpose (referenced as ``components:Class`` in run
documents; tests/execution is put on ``sys.path`` by conftest.py)."""

from __future__ import annotations

from typing import Any

from gymnasium import spaces

from xdoe.agent import Brain, Experience, Mode, Muscle
from xdoe.agents import QLearningBrain
from xdoe.conditions import EnvironmentTerminationCondition, EpisodeProgress, TerminationCondition, Verdict
from xdoe.environment import (
    ActuatorInformation,
    Environment,
    EnvironmentBaseline,
    EnvironmentState,
    Reward,
    RewardInformation,
    SensorInformation,
)
from xdoe.simulation import VanillaSimController

#: Every RecordingBrain / CountingMuscle constructed, in order (tests clear them).
BRAINS: list["RecordingBrain"] = []
MUSCLES: list["CountingMuscle"] = []


class CountingEnvironment(Environment):
    """Sensor ``<uid>.count`` (Discrete(100)): the step number; sensor
    ``<uid>.noise`` (Discrete(1000)) drawn from rng; actuator ``<uid>.push``
    (Discrete(3)); reward ``<uid>.reward`` = the value pushed; done after
    ``length`` updates."""

    def __init__(self, uid: str, seed: int, length: int = 4) -> None:
        super().__init__(uid=uid, seed=seed)
        self.length = length
        self.count = 0
        self.pushed: list[Any] = []

    def _sensors(self) -> list[SensorInformation]:
        return [
            SensorInformation(self.full_id("count"), spaces.Discrete(100), self.count),
            SensorInformation(self.full_id("noise"), spaces.Discrete(1000), int(self.rng.integers(1000))),
        ]

    def start_environment(self) -> EnvironmentBaseline:
        self.count = 0
        return EnvironmentBaseline(self._sensors(),
                                   [ActuatorInformation(self.full_id("push"), spaces.Discrete(3))])

    def update(self, actuators: list[ActuatorInformation]) -> EnvironmentState:
        value = next((a.value for a in actuators if a.uid == self.full_id("push")), 0) or 0
        self.pushed.append(value)
        self.count += 1
        return EnvironmentState(self._sensors(), [RewardInformation(self.full_id("reward"), float(value))],
                                self.count >= self.length, {"count": self.count})


class RecordingBrain(Brain):
    """Records every experience (worker, episode, step, objective, done) and
    the modes it ran in; sends ``("update", n)`` to the muscles every step."""

    def __init__(self, seed: int = 0) -> None:
        super().__init__(seed=seed)
        self.experiences: list[tuple[int, int, int, float, bool]] = []
        self.truncated: list[bool] = []
        self.sensor_ids: list[str] = []
        self.actuator_ids: list[str] = []
        BRAINS.append(self)

    def setup(self, sensors: list[SensorInformation], actuators: list[ActuatorInformation]) -> None:
        super().setup(sensors, actuators)
        self.sensor_ids = [s.uid for s in sensors]
        self.actuator_ids = [a.uid for a in actuators]

    def thinking(self, experience: Experience) -> Any:
        self.experiences.append((experience.worker, experience.episode, experience.step,
                                 experience.objective, experience.done))
        self.truncated.append(experience.truncated)
        return ("update", len(self.experiences))

    def muscle_state(self) -> Any:
        return ("state", len(self.experiences))


class CountingMuscle(Muscle):
    """Pushes a seeded random value 0..2 (train) or always 1 (test); records
    what it saw and received."""

    def __init__(self, uid: str, seed: int = 0) -> None:
        super().__init__(uid=uid, seed=seed)
        self.updates: list[Any] = []
        self.seen: list[list[str]] = []
        self.resets = 0
        MUSCLES.append(self)

    def reset(self) -> None:
        self.resets += 1

    def update(self, update: Any) -> None:
        self.updates.append(update)

    def propose_actions(self, sensors: list[SensorInformation],
                        actuators: list[ActuatorInformation]) -> list[ActuatorInformation]:
        self.seen.append([s.uid for s in sensors])
        value = 1 if self.mode is Mode.TEST else int(self.rng.integers(3))
        return [ActuatorInformation(a.uid, a.space, value) for a in actuators]


class OutOfSpaceMuscle(Muscle):
    """Sets every actuator to 7, outside Discrete(3)."""

    def propose_actions(self, sensors, actuators):
        return [ActuatorInformation(a.uid, a.space, 7) for a in actuators]


class ForeignActuatorMuscle(Muscle):
    """Sets an actuator that is not assigned to the agent."""

    def propose_actions(self, sensors, actuators):
        return [ActuatorInformation("env.elsewhere", spaces.Discrete(3), 0)]


class UpdateRaisingEnvironment(CountingEnvironment):
    """Raises in the third update."""

    def update(self, actuators):
        if self.count >= 2:
            raise ValueError("simulator diverged at step 3")
        return super().update(actuators)


class ThinkingRaisingBrain(RecordingBrain):
    """Raises in the second call of thinking."""

    def thinking(self, experience: Experience) -> Any:
        if self.experiences:
            raise ZeroDivisionError("bad gradient")
        return super().thinking(experience)


class ImportTimeConfused(Brain):  # constructed with a required parameter
    """Needs ``layers``."""

    def __init__(self, layers: int, seed: int = 0) -> None:
        super().__init__(seed=seed)
        self.layers = layers

    def thinking(self, experience):
        return None


class DoubleReward(Reward):
    """Replaces the rewards by twice their values under ``<uid>.double``."""

    def __init__(self, factor: float = 2.0) -> None:
        super().__init__()
        self.factor = factor

    def __call__(self, sensors, rewards):
        return [RewardInformation(r.uid.replace("reward", "double"), r.value * self.factor) for r in rewards]


class StopRunAfter(TerminationCondition):
    """Answers STOP_RUN after ``episodes`` episodes of the run."""

    def __init__(self, episodes: int = 1) -> None:
        super().__init__()
        self.limit = episodes
        self.seen = 0

    def episode_finished(self, episode: EpisodeProgress) -> Verdict:
        self.seen += 1
        return Verdict.STOP_RUN if self.seen >= self.limit else Verdict.CONTINUE


class MutatingMuscle(Muscle):
    """Sets the value on the actuator objects it is given and returns them
    (allowed by default); keeps every object it was given."""

    def __init__(self, uid: str, seed: int = 0) -> None:
        super().__init__(uid=uid, seed=seed)
        self.given: list[ActuatorInformation] = []
        MUSCLES.append(self)  # type: ignore[arg-type]

    def propose_actions(self, sensors, actuators):
        self.given.extend(actuators)
        for a in actuators:
            a.value = int(self.rng.integers(3))
        return actuators


class KeepingMuscle(MutatingMuscle):
    """Declares ``keeps_actuators``: returns new objects, records those given."""

    keeps_actuators = True

    def propose_actions(self, sensors, actuators):
        self.given.extend(actuators)
        return [ActuatorInformation(a.uid, a.space, int(self.rng.integers(3))) for a in actuators]


class MisdeclaredMuscle(MutatingMuscle):
    """Declares ``keeps_actuators`` but sets values on what it is given."""

    keeps_actuators = True


class OverridingMuscle(KeepingMuscle):
    """A subclass of a muscle that declares ``keeps_actuators`` which overrides
    ``propose_actions`` to set values on what it is given (as a plugin written
    before the declaration existed may): it must get fresh objects."""

    propose_actions = MutatingMuscle.propose_actions


class CountingEnvCondition(EnvironmentTerminationCondition):
    """The built-in episode condition, counting its calls (a subclass: the
    executor must call it, not shortcut it)."""

    calls = 0

    def step_finished(self, step):
        CountingEnvCondition.calls += 1
        return super().step_finished(step)


class CountingVanilla(VanillaSimController):
    """The vanilla controller, counting its steps."""

    steps = 0

    def step(self, worker):
        CountingVanilla.steps += 1
        super().step(worker)


#: every ``thinking_values`` call of a :class:`RecordingQLearningBrain`, its arguments as given
Q_CALLS: list[tuple[Any, ...]] = []


class RecordingQLearningBrain(QLearningBrain):
    """Q-learning that records the arguments of every ``thinking_values`` call
    (the rewards and extras copied) in :data:`Q_CALLS`."""

    def thinking_values(self, worker: int, episode: int, step: int, observation: Any, action: Any,
                        rewards: dict[str, float], objective: float, next_observation: Any, done: bool,
                        extras: dict[str, Any], truncated: bool) -> Any:
        Q_CALLS.append((worker, episode, step, observation, action, dict(rewards), objective, next_observation,
                        done, dict(extras), truncated))
        return super().thinking_values(worker, episode, step, observation, action, rewards, objective,
                                       next_observation, done, extras, truncated)
