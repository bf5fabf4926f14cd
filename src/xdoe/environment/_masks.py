"""Action masks: PettingZoo's convention of legal moves, as sensors."""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from xdoe.environment._information import ActuatorInformation, SensorInformation

__all__ = ["MASK_SUFFIX", "is_action_mask", "action_mask"]

#: A sensor ``<prefix>.action_mask`` masks the actuator ``<prefix>.action``.
MASK_SUFFIX = ".action_mask"


def is_action_mask(uid: str) -> bool:
    """Whether a sensor id names an action mask (``<prefix>.action_mask``)."""
    return uid.endswith(MASK_SUFFIX)


def action_mask(actuator: ActuatorInformation, sensors: list[SensorInformation]) -> np.ndarray | None:
    """The legal moves of a ``Discrete`` actuator ``<prefix>.action``: the
    value of the sensor ``<prefix>.action_mask`` among ``sensors`` as a bool
    array of length ``n`` (``True`` = allowed; index ``i`` is the action
    ``start + i``), or ``None`` when there is no such sensor, the actuator is
    not ``Discrete``, or the mask allows nothing or has the wrong length."""
    if not isinstance(actuator.space, spaces.Discrete):
        return None
    uid = actuator.uid.rsplit(".", 1)[0] + MASK_SUFFIX
    for s in sensors:
        if s.uid == uid and s.value is not None:
            mask = np.asarray(s.value).astype(bool).reshape(-1)
            return mask if mask.any() and mask.size == actuator.space.n else None
    return None
