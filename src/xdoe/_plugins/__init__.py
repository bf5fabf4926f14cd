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

Each module is imported when one of its names is first used
(:mod:`xdoe._lazy`): a run without samplers never imports :mod:`._samplers`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xdoe._lazy import lazy_exports, public_names

if TYPE_CHECKING:  # the same names for type checkers (`Name as Name`: a re-export)
    from xdoe._plugins._forms import (DERIVED as DERIVED, derive_forms as derive_forms, is_derived as is_derived,
                                      is_derived_code as is_derived_code, items_of as items_of,
                                      propose_through_objects as propose_through_objects,
                                      think_through_objects as think_through_objects,
                                      retire_value_steps as retire_value_steps, values_of as values_of)
    from xdoe._plugins._observations import (EVERY as EVERY, FIRST as FIRST, POLICIES as POLICIES,
                                             ObservationCheck as ObservationCheck,
                                             ObservationReport as ObservationReport, inside as inside,
                                             int_range as int_range, observation_check as observation_check,
                                             observation_report as observation_report,
                                             report_observation as report_observation)
    from xdoe._plugins._samplers import (GaussianSampler as GaussianSampler,
                                         MultiRangeUniformSampler as MultiRangeUniformSampler,
                                         ParameterSampler as ParameterSampler,
                                         SampledParameters as SampledParameters, UniformSampler as UniformSampler,
                                         find_samplers as find_samplers, make_sampler as make_sampler)

_EXPORTS = {
    "xdoe._plugins._forms": ["DERIVED", "derive_forms", "is_derived", "is_derived_code", "items_of",
                             "propose_through_objects", "retire_value_steps", "think_through_objects", "values_of"],
    "xdoe._plugins._observations": ["EVERY", "FIRST", "POLICIES", "ObservationCheck", "ObservationReport", "inside",
                                    "int_range", "observation_check", "observation_report", "report_observation"],
    "xdoe._plugins._samplers": ["ParameterSampler", "UniformSampler", "GaussianSampler", "MultiRangeUniformSampler",
                                "SampledParameters", "find_samplers", "make_sampler"],
}

__all__ = public_names(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)
