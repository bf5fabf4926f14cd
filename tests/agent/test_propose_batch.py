"""``Muscle.propose_batch`` (issue 26.2, batched acting): the default is the
muscles' own ``propose_values``, one after another, whichever form the
class wrote."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from xdoe.agent import Muscle
from xdoe.environment import ActuatorInformation, SensorInformation

SENSORS = (("env.x", spaces.Box(-1.0, 1.0, (3,), np.float32)),)
ACTUATORS = (("env.a", spaces.Discrete(5)),)


class ValueMuscle(Muscle):
    """Writes the value form: an action drawn from its rng, shifted by the observation."""

    def propose_values(self, observation: Any) -> Any:
        self.extras = {"drawn": float(self.rng.random()), "seen": float(np.sum(observation))}
        return int(self.rng.integers(5))

    def propose_actions(self, sensors: list[SensorInformation],
                        actuators: list[ActuatorInformation]) -> list[ActuatorInformation]:
        raise AssertionError("derived, never called")


class ObjectMuscle(Muscle):
    """Writes the object form only (its value form is derived)."""

    def propose_actions(self, sensors: list[SensorInformation],
                        actuators: list[ActuatorInformation]) -> list[ActuatorInformation]:
        self.extras = {"seen": float(np.sum(sensors[0].value))}
        return [ActuatorInformation(actuators[0].uid, actuators[0].space, int(self.rng.integers(5)))]


def _muscles(cls: type[Muscle], n: int) -> list[Muscle]:
    out = []
    for i in range(n):
        muscle = cls(uid="agent", seed=40 + i)
        muscle.setup([SensorInformation(uid, space) for uid, space in SENSORS],
                     [ActuatorInformation(uid, space) for uid, space in ACTUATORS])
        out.append(muscle)
    return out


def test_the_default_is_each_muscles_own_proposal() -> None:
    observations = [np.full(3, 0.1 * i, np.float32) for i in range(4)]
    for cls in (ValueMuscle, ObjectMuscle):
        together, alone = _muscles(cls, 4), _muscles(cls, 4)
        for _ in range(5):
            actions = cls.propose_batch(together, observations)
            assert actions == [m.propose_values(o) for m, o in zip(alone, observations)]
            assert [m.extras for m in together] == [m.extras for m in alone]
        # the same draws from each muscle's own generator, in each muscle's own order
        assert [m.rng.bit_generator.state for m in together] == [m.rng.bit_generator.state for m in alone]


def test_an_override_is_called_on_the_class_with_all_muscles() -> None:
    calls: list[int] = []

    class Batching(ValueMuscle):
        @classmethod
        def propose_batch(cls, muscles, observations):
            calls.append(len(muscles))
            return super().propose_batch(muscles, observations)

    muscles = _muscles(Batching, 3)
    actions = Batching.propose_batch(muscles, [np.zeros(3, np.float32)] * 3)
    assert calls == [3] and len(actions) == 3
    assert Batching.propose_batch.__func__ is not Muscle.propose_batch.__func__
    assert ValueMuscle.propose_batch.__func__ is Muscle.propose_batch.__func__
