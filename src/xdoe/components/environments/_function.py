"""An environment whose reward is a known function of its parameters: a
study with a known answer."""

from __future__ import annotations

import math
from typing import Any

from gymnasium import spaces

from xdoe._names import import_name
from xdoe.environment import (
    ActuatorInformation,
    Environment,
    EnvironmentBaseline,
    EnvironmentState,
    RewardInformation,
    SensorInformation,
)

__all__ = ["FunctionEnvironment"]


class FunctionEnvironment(Environment):
    """One-step episodes whose reward is a function of the environment's
    parameters plus Gaussian noise: a study whose true answer is known (a
    test function such as a quadratic peak or Branin's, or the effects a
    screening design should find), for checking a design and its analysis
    before spending the budget on a real environment, and for tests.

    Parameters:
        uid: the environment uid (prefix of every id).
        seed: seeds :attr:`rng`, from which the noise is drawn: the same run
            document gives the same episodes.
        function: the mean reward, ``"pkg.module:name"`` of a callable that
            takes the other parameters (``values``) as keyword arguments and
            returns a number; called once, when the environment is made.
        noise: the standard deviation of an episode's reward (>= 0, default 1).
        **values: the function's arguments, typically the factors
            (``x1: "${x1}"``).

    Each episode is one step: the agent sees one sensor ``<uid>.s``
    (``Discrete(2)``, always 0) and sets one actuator ``<uid>.a``
    (``Discrete(2)``, ignored); the update pays ``<uid>.reward`` =
    ``function(**values) + noise * z``, ``z`` a standard normal draw of
    :attr:`rng`, and ends the episode (``terminated``).

    Example, the walk-through's peak (``docs/how-to/adaptive-vs-designed.md``)::

        environment:
          name: xdoe.components.environments:FunctionEnvironment
          uid: peak
          params: {function: "peak:truth", x1: "${x1}", x2: "${x2}", noise: 1.0}

    Raises:
        ComponentError: ``function`` is not a name ``pkg.module:name``, its
            module cannot be imported or lacks it (:func:`xdoe._names.import_name`).
        TypeError: ``function`` is not callable.
        ValueError: ``noise`` is negative or not finite, the function
            raised (e.g. on an argument it does not take; the message names
            the call), or its value is not a finite number.
    """

    def __init__(self, uid: str, seed: int, function: str, noise: float = 1.0, **values: Any) -> None:
        super().__init__(uid=uid, seed=seed)
        noise = float(noise)
        if not math.isfinite(noise) or noise < 0:
            raise ValueError(f"noise must be a finite number >= 0, got {noise!r}")
        fn = import_name(function, "function", what="function")
        if not callable(fn):
            raise TypeError(f"function: {function!r} is not callable but {type(fn).__name__}")
        try:
            value = fn(**values)
        except Exception as exc:
            args = ", ".join(f"{k}={v!r}" for k, v in values.items())
            raise ValueError(f"function: {function}({args}) raised {type(exc).__name__}: {exc}") from exc
        try:
            mean = float(value)
        except (TypeError, ValueError):
            raise ValueError(f"function: {function}(...) returned {value!r}, not a number") from None
        if not math.isfinite(mean):
            raise ValueError(f"function: {function}(...) returned {mean!r}, not a finite number")
        #: the mean reward, ``function(**values)``
        self.mean = mean
        #: the standard deviation of an episode's reward
        self.noise = noise

    def _sensors(self) -> list[SensorInformation]:
        return [SensorInformation(self.full_id("s"), spaces.Discrete(2), 0)]

    def start_environment(self) -> EnvironmentBaseline:
        """One sensor (always 0) and one actuator (ignored)."""
        return EnvironmentBaseline(sensors=self._sensors(),
                                   actuators=[ActuatorInformation(self.full_id("a"), spaces.Discrete(2))])

    def update(self, actuators: list[ActuatorInformation]) -> EnvironmentState:
        """The episode's one step: the mean plus ``noise`` times a standard normal draw; ``done``."""
        reward = self.mean + self.noise * float(self.rng.standard_normal())
        return EnvironmentState(sensors=self._sensors(),
                                rewards=[RewardInformation(self.full_id("reward"), reward)], done=True)
