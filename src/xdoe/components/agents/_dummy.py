"""An agent that learns nothing and acts at random."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import numpy as np
from gymnasium import spaces

from xdoe.agent import Brain, Muscle
from xdoe.environment import ActuatorInformation, SensorInformation, action_mask

__all__ = ["DummyBrain", "DummyMuscle"]


class DummyBrain(Brain):
    """A brain that learns nothing; it counts the experiences it was given.

    Parameters:
        seed: unused (accepted for the common constructor).

    :meth:`thinking_values` (and so ``thinking``) always returns ``None``. :meth:`store` writes a small JSON
    file ``{"brain": "DummyBrain", "experiences": n}``; :meth:`load` reads it
    back (``ValueError`` if the file is not such a file).
    """

    def __init__(self, seed: int = 0) -> None:
        super().__init__(seed=seed)
        self.experiences = 0

    def thinking_values(self, *step: Any) -> None:
        """Counts the step (``thinking``, on an :class:`~xdoe.agent.Experience`, is derived from this)."""
        self.experiences += 1
        return None

    def store(self, path: Path) -> None:
        Path(path).write_text(json.dumps({"brain": "DummyBrain", "experiences": self.experiences}))

    def load(self, path: Path) -> None:
        try:
            data = json.loads(Path(path).read_text())
            if data.get("brain") != "DummyBrain":
                raise ValueError("not written by DummyBrain.store")
            self.experiences = int(data["experiences"])
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"{path}: not a DummyBrain file ({exc})") from exc


class DummyMuscle(Muscle):
    """A muscle that sets every actuator to a uniformly random element of its
    space, in train and test mode alike.

    Parameters:
        uid: the agent name.
        seed: seeds :attr:`rng`. Each actuator gets its own copy of its space,
            seeded once with an integer drawn from :attr:`rng` (in the order
            actuators are first seen), and values are ``space.sample()`` of that
            copy, so any gymnasium space works and the same seed gives the same
            actions. (``Box``: uniform when bounded, see ``gymnasium.spaces.Box.sample``.)
            A ``Discrete`` actuator ``<prefix>.action`` with a sensor
            ``<prefix>.action_mask`` (PettingZoo's legal moves) is sampled among
            the allowed values only (``space.sample(mask=...)``).
    """

    def __init__(self, uid: str, seed: int = 0) -> None:
        super().__init__(uid=uid, seed=seed)
        self._spaces: dict[str, tuple[spaces.Space, spaces.Space]] = {}

    def _sampler(self, actuator: ActuatorInformation) -> spaces.Space:
        known = self._spaces.get(actuator.uid)
        if known is None or known[0] != actuator.space:
            own = copy.deepcopy(actuator.space)
            own.seed(int(self.rng.integers(2**63 - 1)))
            known = (actuator.space, own)
            self._spaces[actuator.uid] = known
        return known[1]

    def setup(self, sensors: list[SensorInformation], actuators: list[ActuatorInformation]) -> None:
        super().setup(sensors, actuators)
        for actuator in actuators:
            self._sampler(actuator)

    def propose_actions(
        self, sensors: list[SensorInformation], actuators: list[ActuatorInformation]
    ) -> list[ActuatorInformation]:
        out = []
        for actuator in actuators:
            mask = action_mask(actuator, sensors) if sensors else None
            if mask is not None:
                value: Any = self._sampler(actuator).sample(mask=mask.astype(np.int8))
            else:
                value = self._sampler(actuator).sample()
            if isinstance(actuator.space, spaces.Discrete):
                value = int(value)
            out.append(ActuatorInformation(actuator.uid, actuator.space, value))
        return out
