"""The executor's side of the plugin API: what xdoe does *with* plugin
objects, kept out of the contract users write against.

- :mod:`._forms`: the two forms of a plugin method (object and value) and
  how the form a class body does not define is derived from the one it does
  (called from the base classes' ``__init_subclass__``), the value form of
  sensor and actuator groups, and the former value-step API;
- :mod:`._observations`: ``phase_config.observation_check``, the check of
  the observations environments return against their sensors' spaces;
- :mod:`._samplers`: environment-parameter randomisation (``{sampler: ...}``
  mappings in an environment's ``params``, drawn afresh at every episode).

The base classes (:mod:`xdoe.environment`, :mod:`xdoe.agent`), the built-in
components and the executor (:mod:`xdoe.execution`) import these names from
here; a plugin never needs them.
"""

from xdoe._plugins._forms import (DERIVED, derive_forms, is_derived, is_derived_code, items_of,
                                  propose_through_objects, retire_value_steps, think_through_objects, values_of)
from xdoe._plugins._observations import (EVERY, FIRST, POLICIES, ObservationCheck, ObservationReport, inside,
                                         observation_check, observation_report, report_observation)
from xdoe._plugins._samplers import (GaussianSampler, MultiRangeUniformSampler, ParameterSampler,
                                     SampledParameters, UniformSampler, find_samplers, make_sampler)

__all__ = [
    "DERIVED",
    "derive_forms",
    "is_derived",
    "is_derived_code",
    "items_of",
    "propose_through_objects",
    "retire_value_steps",
    "think_through_objects",
    "values_of",
    "EVERY",
    "FIRST",
    "POLICIES",
    "ObservationCheck",
    "ObservationReport",
    "inside",
    "observation_check",
    "observation_report",
    "report_observation",
    "ParameterSampler",
    "UniformSampler",
    "GaussianSampler",
    "MultiRangeUniformSampler",
    "SampledParameters",
    "find_samplers",
    "make_sampler",
]
