"""Sensors and actuators <-> the one observation and one action of a
Stable-Baselines3 model (no torch here: importable without the extra)."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from xdoe.environment import ActuatorInformation, SensorInformation, action_mask, is_action_mask

__all__ = ["ObservationCodec", "ActionCodec", "mask_for"]

def mask_for(actuators: list[ActuatorInformation], sensors: list[SensorInformation]) -> np.ndarray | None:
    """The action mask of a single ``Discrete`` actuator (see
    :func:`xdoe.environment.action_mask`), else ``None``."""
    return action_mask(actuators[0], sensors) if len(actuators) == 1 else None


def _plain_space(space: spaces.Space, what: str) -> spaces.Space:
    """``space`` as Stable-Baselines3 takes it: ``Discrete`` shifted to start 0."""
    if isinstance(space, spaces.Discrete):
        return spaces.Discrete(int(space.n))
    if isinstance(space, (spaces.Box, spaces.MultiDiscrete, spaces.MultiBinary, spaces.Dict)):
        return space
    raise ValueError(f"{what}: Stable-Baselines3 takes Box, Discrete, MultiDiscrete, MultiBinary "
                     f"or Dict spaces, not {space}")


class ObservationCodec:
    """The agent's sensors (action masks left out) as one observation.

    One sensor: its space (``Discrete`` shifted to start at 0); several: a
    ``Dict`` keyed by the sensor ids with ``.`` replaced by ``_`` (use
    ``MultiInputPolicy``, chosen automatically for ``MlpPolicy``).

    Raises:
        ValueError: no sensor, or a space Stable-Baselines3 does not take.
    """

    def __init__(self, sensors: list[SensorInformation]) -> None:
        self.ids = [s.uid for s in sensors if not is_action_mask(s.uid)]
        if not self.ids:
            raise ValueError("SB3Brain needs at least one sensor (action masks do not count)")
        self.count = len(sensors)
        self.starts = {s.uid: int(s.space.start) for s in sensors
                       if s.uid in self.ids and isinstance(s.space, spaces.Discrete)}
        if len(self.ids) == 1:
            (sensor,) = [s for s in sensors if s.uid == self.ids[0]]
            self.space = _plain_space(sensor.space, f"sensor {sensor.uid!r}")
            self.keys: list[str] | None = None
        else:
            self.keys = [uid.replace(".", "_") for uid in self.ids]
            by_id = {s.uid: s for s in sensors}
            self.space = spaces.Dict({k: _plain_space(by_id[uid].space, f"sensor {uid!r}")
                                      for k, uid in zip(self.keys, self.ids)})

    def _value(self, s: SensorInformation) -> Any:
        return self.value(s.uid, s.value)

    def value(self, uid: str, value: Any) -> Any:
        """The observation array of sensor ``uid``'s ``value`` (``Discrete`` shifted to start at 0)."""
        start = self.starts.get(uid)
        return np.asarray(value if start is None else int(value) - start)

    def encode(self, sensors: list[SensorInformation]) -> Any:
        """One observation (an array, or a dict of arrays) from the sensors."""
        if self.keys is None:
            uid = self.ids[0]
            for s in sensors:
                if s.uid == uid:
                    return self._value(s)
            raise KeyError(uid)
        by_id = {s.uid: s for s in sensors}
        return {k: self._value(by_id[uid]) for k, uid in zip(self.keys, self.ids)}

    def encode_values(self, observation: Any) -> Any:
        """:meth:`encode` of the value form of the sensors (the only sensor's
        value, else a dict ``uid -> value``)."""
        if self.keys is None:
            uid = self.ids[0]
            return self.value(uid, observation if self.count == 1 else observation[uid])
        return {k: self.value(uid, observation[uid]) for k, uid in zip(self.keys, self.ids)}


class ActionCodec:
    """The agent's actuators as one action space, and back.

    One actuator: its space (``Discrete`` shifted to 0). Several: all
    ``Discrete``/``MultiDiscrete`` -> one ``MultiDiscrete``; all ``Box`` -> one
    flat ``Box`` (bounds concatenated); all ``MultiBinary`` (1-D) -> one
    ``MultiBinary``.

    Raises:
        ValueError: no actuator, or actuators that form no single SB3 space.
    """

    def __init__(self, actuators: list[ActuatorInformation]) -> None:
        if not actuators:
            raise ValueError("SB3Brain needs at least one actuator")
        self.templates = list(actuators)
        self.ids = [a.uid for a in actuators]
        kinds = {type(a.space) for a in actuators}
        if len(actuators) == 1:
            self.kind = "single"
            self.space = _plain_space(actuators[0].space, f"actuator {self.ids[0]!r}")
        elif kinds <= {spaces.Discrete, spaces.MultiDiscrete}:
            self.kind = "multidiscrete"
            nvec: list[int] = []
            self.sizes = []
            for a in actuators:
                n = [int(a.space.n)] if isinstance(a.space, spaces.Discrete) else list(a.space.nvec.reshape(-1))
                nvec.extend(n)
                self.sizes.append(len(n))
            self.space = spaces.MultiDiscrete(nvec)
        elif kinds == {spaces.Box}:
            self.kind = "box"
            self.sizes = [int(np.prod(a.space.shape)) for a in actuators]
            low = np.concatenate([np.asarray(a.space.low, np.float32).reshape(-1) for a in actuators])
            high = np.concatenate([np.asarray(a.space.high, np.float32).reshape(-1) for a in actuators])
            self.space = spaces.Box(low, high, dtype=np.float32)
        elif kinds == {spaces.MultiBinary} and all(len(a.space.shape) == 1 for a in actuators):
            self.kind = "multibinary"
            self.sizes = [int(a.space.n) for a in actuators]
            self.space = spaces.MultiBinary(sum(self.sizes))
        else:
            raise ValueError(
                "SB3Brain: actuators " + ", ".join(f"{a.uid} ({a.space})" for a in actuators)
                + " form no single Stable-Baselines3 action space (all Discrete/MultiDiscrete, "
                "all Box or all 1-D MultiBinary)")

    def join(self, actuators: list[ActuatorInformation]) -> np.ndarray:
        """One action (a numpy array) from the actuators' values."""
        by_id = {a.uid: a.value for a in actuators}
        return self.join_values(by_id[self.ids[0]] if self.kind == "single" else by_id)

    def join_values(self, action: Any) -> np.ndarray:
        """:meth:`join` of the value form of the actuators (the only
        actuator's value, else a dict ``uid -> value``)."""
        if self.kind == "single":
            space = self.templates[0].space
            if isinstance(space, spaces.Discrete):
                return np.asarray(int(action) - int(space.start))
            return np.asarray(action)
        parts = []
        for a in self.templates:
            v = np.asarray(action[a.uid]).reshape(-1)
            if isinstance(a.space, spaces.Discrete):
                v = v - int(a.space.start)
            parts.append(v)
        return np.concatenate(parts)

    def split(self, action: Any) -> list[ActuatorInformation]:
        """The actuators with their values from one action of :attr:`space`."""
        value = self.values(action)
        if self.kind == "single":
            a = self.templates[0]
            return [ActuatorInformation(a.uid, a.space, value)]
        return [ActuatorInformation(a.uid, a.space, value[a.uid]) for a in self.templates]

    def values(self, action: Any) -> Any:
        """The value form of the actuators (``xdoe.environment``'s: the only
        actuator's value, else a dict ``uid -> value``) from one action of
        :attr:`space`."""
        if self.kind == "single":
            a = self.templates[0]
            if isinstance(a.space, spaces.Discrete):
                return int(np.asarray(action).item()) + int(a.space.start)
            return np.asarray(action, dtype=a.space.dtype).reshape(a.space.shape)
        flat = np.asarray(action).reshape(-1)
        out, i = {}, 0
        for a, size in zip(self.templates, self.sizes):
            part = flat[i:i + size]
            i += size
            if isinstance(a.space, spaces.Discrete):
                value: Any = int(part[0]) + int(a.space.start)
            else:
                value = part.astype(a.space.dtype).reshape(a.space.shape)
            out[a.uid] = value
        return out
