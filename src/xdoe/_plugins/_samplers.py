"""Environment-parameter randomisation, as ML-Agents' environment parameter samplers.

In an environment's ``params`` (anywhere, nested in mappings or lists) a
mapping with a ``sampler`` key is replaced by a value drawn afresh at every
episode reset::

    params:
      gravity: {sampler: uniform, min: 9.0, max: 10.5}
      noise:   {sampler: gaussian, mean: 0.0, std: 0.1}
      wind:    {sampler: multirange_uniform, intervals: [[-2, -1], [1, 2]]}

Source: Unity ML-Agents, "Training configuration file — Environment
Parameter Randomization" (samplers ``uniform``, ``gaussian``,
``multirange_uniform``; the latter picks an interval with probability
proportional to its length, then a value uniformly inside it).
"""

from __future__ import annotations

import copy
import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

__all__ = [
    "ParameterSampler",
    "UniformSampler",
    "GaussianSampler",
    "MultiRangeUniformSampler",
    "SampledParameters",
    "make_sampler",
    "find_samplers",
]

PathPart = str | int


class ParameterSampler(ABC):
    """Draws one float per episode from a numpy Generator."""

    @abstractmethod
    def sample(self, rng: np.random.Generator) -> float:
        """One draw (a Python float)."""


def _number(spec: Mapping[str, Any], key: str) -> float:
    if key not in spec:
        raise ValueError(f"sampler {spec.get('sampler')!r} needs {key!r}")
    value = spec[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"sampler {spec.get('sampler')!r}: {key!r} must be a finite number, got {value!r}")
    return float(value)


def _no_extra(spec: Mapping[str, Any], allowed: set[str]) -> None:
    extra = sorted(set(spec) - allowed - {"sampler"})
    if extra:
        raise ValueError(
            f"sampler {spec['sampler']!r}: unknown key(s) {', '.join(extra)}; accepted: {', '.join(sorted(allowed))}"
        )


@dataclass(frozen=True)
class UniformSampler(ParameterSampler):
    """Uniform on ``[min, max)``; ``{sampler: uniform, min: a, max: b}``."""

    low: float
    high: float

    def __post_init__(self) -> None:
        if self.low > self.high:
            raise ValueError(f"sampler 'uniform': min {self.low} is greater than max {self.high}")

    def sample(self, rng: np.random.Generator) -> float:
        return float(rng.uniform(self.low, self.high))


@dataclass(frozen=True)
class GaussianSampler(ParameterSampler):
    """Normal with ``mean`` and standard deviation ``std`` (>= 0)."""

    mean: float
    std: float

    def __post_init__(self) -> None:
        if self.std < 0:
            raise ValueError(f"sampler 'gaussian': std must be >= 0, got {self.std}")

    def sample(self, rng: np.random.Generator) -> float:
        return float(rng.normal(self.mean, self.std))


@dataclass(frozen=True)
class MultiRangeUniformSampler(ParameterSampler):
    """Uniform over the union of intervals ``[[a, b], [c, d], ...]``: an
    interval is chosen with probability proportional to its length (all
    equally likely when every interval is a single point)."""

    intervals: tuple[tuple[float, float], ...]

    def __post_init__(self) -> None:
        if not self.intervals:
            raise ValueError("sampler 'multirange_uniform': intervals must not be empty")
        for low, high in self.intervals:
            if low > high:
                raise ValueError(f"sampler 'multirange_uniform': interval [{low}, {high}] has min > max")

    def sample(self, rng: np.random.Generator) -> float:
        lengths = np.array([high - low for low, high in self.intervals], dtype=float)
        total = lengths.sum()
        weights = lengths / total if total > 0 else np.full(len(lengths), 1.0 / len(lengths))
        low, high = self.intervals[int(rng.choice(len(self.intervals), p=weights))]
        return float(rng.uniform(low, high))


def make_sampler(spec: Mapping[str, Any]) -> ParameterSampler:
    """Build a sampler from its document form.

    Raises:
        ValueError: unknown sampler name, missing or non-numeric keys,
            ``min > max``, negative ``std``, empty or malformed intervals.
    """
    kind = spec.get("sampler")
    if kind == "uniform":
        _no_extra(spec, {"min", "max"})
        return UniformSampler(_number(spec, "min"), _number(spec, "max"))
    if kind == "gaussian":
        _no_extra(spec, {"mean", "std"})
        return GaussianSampler(_number(spec, "mean"), _number(spec, "std"))
    if kind == "multirange_uniform":
        _no_extra(spec, {"intervals"})
        raw = spec.get("intervals")
        if not isinstance(raw, Sequence) or isinstance(raw, str):
            raise ValueError("sampler 'multirange_uniform' needs 'intervals': [[min, max], ...]")
        intervals = []
        for item in raw:
            if not isinstance(item, Sequence) or isinstance(item, str) or len(item) != 2:
                raise ValueError(f"sampler 'multirange_uniform': interval {item!r} is not [min, max]")
            pair = {"sampler": kind, "min": item[0], "max": item[1]}
            intervals.append((_number(pair, "min"), _number(pair, "max")))
        return MultiRangeUniformSampler(tuple(intervals))
    raise ValueError(f"unknown sampler {kind!r}; expected one of: gaussian, multirange_uniform, uniform")


def _dotted(path: Sequence[PathPart]) -> str:
    return ".".join(str(p) for p in path)


@dataclass(frozen=True)
class SampledParameters:
    """Parameters with sampler placeholders, ready to be drawn per episode.

    Attributes:
        template: the params with every sampler mapping left in place.
        samplers: ``(path, sampler)`` pairs in document order.
    """

    template: Mapping[str, Any]
    samplers: tuple[tuple[tuple[PathPart, ...], ParameterSampler], ...]

    def __bool__(self) -> bool:
        return bool(self.samplers)

    def draw(self, rng: np.random.Generator) -> tuple[dict[str, Any], dict[str, float]]:
        """Draw every sampler once, in document order.

        Returns:
            ``(params, drawn)``: the params with drawn values in place of the
            sampler mappings, and the drawn values keyed by dotted path
            (e.g. ``{"physics.gravity": 9.7}``) for storing with the episode.
        """
        params = copy.deepcopy(dict(self.template))
        drawn: dict[str, float] = {}
        for path, sampler in self.samplers:
            value = sampler.sample(rng)
            node: Any = params
            for part in path[:-1]:
                node = node[part]
            node[path[-1]] = value
            drawn[_dotted(path)] = value
        return params, drawn


def find_samplers(params: Mapping[str, Any]) -> SampledParameters:
    """Find and validate every sampler mapping inside ``params``.

    Raises:
        ValueError: a malformed sampler; the message starts with its dotted path.
    """
    found: list[tuple[tuple[PathPart, ...], ParameterSampler]] = []

    def walk(node: Any, path: tuple[PathPart, ...]) -> None:
        if isinstance(node, Mapping):
            if "sampler" in node:
                try:
                    found.append((path, make_sampler(node)))
                except ValueError as exc:
                    raise ValueError(f"params.{_dotted(path)}: {exc}") from None
                return
            for key, value in node.items():
                walk(value, path + (key,))
        elif isinstance(node, list):
            for index, value in enumerate(node):
                walk(value, path + (index,))

    walk(params, ())
    return SampledParameters(template=params, samplers=tuple(found))
