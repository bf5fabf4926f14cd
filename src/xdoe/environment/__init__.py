"""The environment side of the plugin API: the contract, nothing else.

Subclass :class:`Environment` (and optionally :class:`Reward`); exchange
:class:`SensorInformation`, :class:`ActuatorInformation` and
:class:`RewardInformation` whose spaces are ``gymnasium.spaces``;
:class:`EnvironmentBaseline` and :class:`EnvironmentState` are what an
episode start and a step return. :func:`check_environment` checks a class
against the contract; :func:`action_mask` names the sensor that carries an
action mask.
"""

from xdoe.environment._check import EnvironmentCheckError, check_environment
from xdoe.environment._environment import Environment, Reward
from xdoe.environment._masks import action_mask, is_action_mask
from xdoe.environment._information import (
    ActuatorInformation,
    EnvironmentBaseline,
    EnvironmentState,
    RewardInformation,
    SensorInformation,
)

__all__ = [
    "Environment",
    "Reward",
    "SensorInformation",
    "ActuatorInformation",
    "RewardInformation",
    "EnvironmentBaseline",
    "EnvironmentState",
    "check_environment",
    "action_mask",
    "is_action_mask",
    "EnvironmentCheckError",
]
