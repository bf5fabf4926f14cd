"""Observations outside their sensor's space (issue 25).

An environment may report a sensor value its own space does not contain (a
bug: a position past the grid, a NaN in a ``Box``, a float for a
``Discrete``). ``phase_config.observation_check`` says what happens:

* ``warn`` (the default): the first such value of each sensor in a run is
  reported once — a :class:`~xdoe.errors.ObservationSpaceWarning` and a line
  ``run <uid> warning: ...`` in ``xrun``'s output (the run's
  ``RunResult.warnings``) naming the sensor, the value, the space, the phase,
  worker, episode and step; the run goes on;
* ``error``: the run fails with that one line;
* ``off``: nothing is checked.

What is checked, to keep the cost per step small (``gymnasium.Space.contains``
of a ``Box`` takes microseconds): the values environments return from their
updates at steps 1 to :data:`FIRST` of every episode and then at every
:data:`EVERY`-th step (32, 48, ...), every sensor of the worker each time. A
value of a ``Discrete`` space is compared as an integer; other spaces use
their ``contains``. The episode-start observations (``start_environment``)
are not checked; actions always are (an action outside its actuator's space
fails the run whatever the policy: the environment would receive it).

The step calls :meth:`ObservationCheck.due` (the sampling rule) and then
:meth:`ObservationCheck.sensors` (or :meth:`ObservationCheck.value` for a
single value; the executor first compares a Python ``int`` with its
``Discrete`` sensor's :func:`int_range` and hands only other values on);
the run's :class:`ObservationReport` (:func:`observation_report`) keeps
the messages, one per sensor.
"""

from __future__ import annotations

import contextlib
import reprlib
import threading
import warnings
from typing import Any, Callable, Iterable, Iterator

import numpy as np
from gymnasium import spaces

from xdoe.errors import ObservationSpaceWarning, RunError, printable

__all__ = ["POLICIES", "FIRST", "EVERY", "ObservationCheck", "ObservationReport", "observation_check",
           "observation_report", "inside", "int_range", "report_observation"]

#: the values of ``phase_config.observation_check``; the first is the default
POLICIES = ("warn", "error", "off")
#: every step up to this one of an episode is checked ...
FIRST = 16
#: ... then every ``EVERY``-th
EVERY = 16

_repr = reprlib.Repr()
_repr.maxstring, _repr.maxother, _repr.maxlist = 60, 60, 8


def int_range(space: spaces.Space) -> tuple[int, int]:
    """``(low, high)``: a Python ``int`` ``v`` lies in ``space`` exactly when
    ``low <= v < high`` — a ``Discrete`` space's range, worked out once
    (``Worker`` checks a step's integer observations against it and hands
    any other value to :meth:`ObservationCheck.value`); ``(1, 0)``, an empty
    range, for other spaces."""
    if type(space) is spaces.Discrete:
        start = int(space.start)
        return start, start + int(space.n)
    return 1, 0


def inside(space: spaces.Space, value: Any) -> bool:
    """Whether ``value`` lies in ``space``: an integer compared with a
    ``Discrete`` space's range, else ``space.contains(value)`` (which
    refuses NaN in a ``Box``)."""
    if type(space) is spaces.Discrete and (type(value) is int or isinstance(value, np.integer)):
        low, high = int_range(space)
        return low <= int(value) < high
    try:
        return bool(space.contains(value))
    except Exception:  # noqa: BLE001 - a value contains cannot even look at is outside
        return False


class ObservationReport:
    """The out-of-space observations of one run: the first message of each
    sensor (``messages``, in the order found); ``on_message`` is called with
    each new one (e.g. to send it from a worker process to the run's). The
    run's other warnings are noted here too (:meth:`note`: a non-finite
    reward, :class:`~xdoe.errors.NonFiniteWarning`)."""

    def __init__(self, on_message: Callable[[str, str], None] | None = None, label: str = "") -> None:
        self.label = label  # e.g. "run dummy-0001": starts each warning
        self.found: dict[str, str] = {}
        #: the messages in the order found (the same list all along)
        self.messages: list[str] = []
        self.on_message = on_message

    def add(self, uid: str, message: str) -> bool:
        """Note ``message`` for sensor ``uid``; ``False`` (nothing noted) when
        the sensor was reported already in this run."""
        if uid in self.found:
            return False
        self.found[uid] = message
        self.messages.append(message)
        if self.on_message is not None:
            self.on_message(uid, message)
        return True

    def warn(self, message: str, category: type[Warning] = ObservationSpaceWarning) -> None:
        """Warn ``message`` (default :class:`~xdoe.errors.ObservationSpaceWarning`), after the label."""
        warnings.warn(f"{self.label}: {message}" if self.label else message, category, stacklevel=4)

    def note(self, key: str, message: str, category: type[Warning] = ObservationSpaceWarning) -> bool:
        """:meth:`add` and, the first time for ``key``, :meth:`warn`: how every
        warning of a run is reported (the run's recorder notes a non-finite
        reward here too, :class:`~xdoe.errors.NonFiniteWarning`)."""
        if not self.add(key, message):
            return False
        self.warn(message, category)
        return True


#: ``report``: the report of the run executed in this thread (:func:`observation_report`). A
#: thread's own attribute, not a ``contextvars.ContextVar``: numpy looks its context variables up
#: (the memory handler, the error state) for every array it makes, and a variable that is not
#: set is looked up in the context's variables every time, at a cost that grows with each one
#: set — ~550 instructions per Taxi step while a run held one set.
_LOCAL = threading.local()


def _current_report() -> ObservationReport | None:
    return getattr(_LOCAL, "report", None)


@contextlib.contextmanager
def observation_report(on_message: Callable[[str, str], None] | None = None,
                       label: str = "") -> Iterator[ObservationReport]:
    """The report of the run executed within the block (in this thread);
    ``label`` (e.g. ``run <uid>``) starts each warning."""
    report = ObservationReport(on_message, label)
    outer = _current_report()
    _LOCAL.report = report
    try:
        yield report
    finally:
        _LOCAL.report = outer


class ObservationCheck:
    """Checks the observations of one worker of one phase (see the module
    docstring).

    Args:
        policy: ``warn`` or ``error`` (``off`` makes no check:
            :func:`observation_check` returns ``None``).
        where: how messages name the place, e.g. ``"phase 'training' worker 0"``.
        report: the run's report (default: the one of
            :func:`observation_report` in effect, else a new one).
    """

    __slots__ = ("policy", "where", "report")

    def __init__(self, policy: str, where: str, report: ObservationReport | None = None) -> None:
        self.policy, self.where = policy, where
        self.report = report if report is not None else (_current_report() or ObservationReport())

    @staticmethod
    def due(step: int) -> bool:
        """Whether the values of step ``step`` (1 = the episode's first
        update) are checked: steps 1 to :data:`FIRST`, then every :data:`EVERY`-th."""
        return step <= FIRST or not step % EVERY

    @staticmethod
    def next_due(step: int) -> int:
        """The first step after ``step`` that :meth:`due` checks."""
        return step + 1 if step < FIRST else (step // EVERY + 1) * EVERY

    def sensors(self, sensors: Iterable[Iterable[Any]], episode: int, step: int) -> None:
        """Check every ``SensorInformation`` of ``sensors`` (one list per environment).

        Raises:
            RunError: a value outside its space under the ``error`` policy.
        """
        for group in sensors:
            for sensor in group:
                value = sensor.value
                if value is not None and not inside(sensor.space, value):
                    self.outside(sensor.uid, sensor.space, value, episode, step)

    def value(self, uid: str, space: spaces.Space, value: Any, episode: int, step: int) -> None:
        """Check one sensor's value (as :meth:`sensors`)."""
        if value is not None and not inside(space, value):
            self.outside(uid, space, value, episode, step)

    def outside(self, uid: str, space: spaces.Space, value: Any, episode: int, step: int) -> None:
        """Apply the policy to a value found outside its space."""
        what = (f"sensor {uid!r}: observation {printable(_repr.repr(value))} is outside its space "
                f"{printable(_repr.repr(space))} ({self.where}, episode {episode}, step {step}")
        if self.policy == "error":
            raise RunError(f"{what}; phase_config.observation_check: error)")
        message = f"{what}; later values of this sensor are not reported)"
        if self.report.add(uid, message):
            self.report.warn(message)


def report_observation(uid: str, message: str) -> None:
    """A message a worker process found (``--parallel-workers``), noted in
    the report of the run executed here and warned when it is its sensor's first."""
    report = _current_report() or ObservationReport()
    if report.add(uid, message):
        report.warn(message)


def observation_check(policy: str | None, where: str) -> ObservationCheck | None:
    """The check for ``phase_config.observation_check`` = ``policy``
    (``None``: the default, ``warn``); ``None`` for ``off``."""
    policy = policy or POLICIES[0]
    return None if policy == "off" else ObservationCheck(policy, where)
