"""The environment side of the plugin API.

Subclass :class:`Environment` (and optionally :class:`Reward`); exchange
:class:`SensorInformation`, :class:`ActuatorInformation` and
:class:`RewardInformation` whose spaces are ``gymnasium.spaces``.
"""

from xdoe.environment._check import EnvironmentCheckError, check_environment
from xdoe.environment._environment import Environment, Reward
from xdoe.environment._forms import (derive_forms, is_derived, is_derived_code, items_of, retire_value_steps,
                                    values_of)
from xdoe.environment._masks import action_mask, is_action_mask
from xdoe.environment._spaces import (
    ObservationCheck,
    ObservationReport,
    observation_check,
    observation_report,
    report_observation,
)
from xdoe.environment._samplers import (
    GaussianSampler,
    MultiRangeUniformSampler,
    ParameterSampler,
    SampledParameters,
    UniformSampler,
    find_samplers,
    make_sampler,
)
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
    "ParameterSampler",
    "UniformSampler",
    "GaussianSampler",
    "MultiRangeUniformSampler",
    "SampledParameters",
    "find_samplers",
    "make_sampler",
    "check_environment",
    "action_mask",
    "is_action_mask",
    "EnvironmentCheckError",
    "ObservationCheck",
    "ObservationReport",
    "observation_check",
    "observation_report",
    "report_observation",
    "derive_forms",
    "is_derived",
    "is_derived_code",
    "items_of",
    "retire_value_steps",
    "values_of",
]
