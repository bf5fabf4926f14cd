"""Health criteria: is a session worth extending?

A criterion measures one number per session, the *metric*: the mean episode
objective of one agent over the last ``last`` episodes of one phase (all
workers, in episode order), and judges a session by it, given its parent's
metric. Built-ins:

- :class:`ImprovementCriterion` — healthy when the metric rose over the
  parent's by at least ``delta`` (and rose at all); a root is healthy;
- :class:`ThresholdCriterion` — healthy when the metric is at least
  ``threshold`` (``above: false``: at most); ``xrun grow``'s goal is one.

Defaults (``last: 100`` episodes, the last test-mode phase, else the last
phase, and the phase's first agent) follow the usual RL practice of judging
a policy by its mean return over the last 100 episodes (gymnasium's
``reward_threshold`` convention; ML-Agents' curriculum ``min_lesson_length``
plays the same role); evaluating on a test phase measures the learned policy
without exploration noise.

Write your own by subclassing :class:`HealthCriterion` and naming it
``module:Class`` in the session config.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping

from xdoe.errors import InputError

if TYPE_CHECKING:
    from xdoe.store import Store

__all__ = ["Assessment", "SessionEpisodes", "HealthCriterion", "ImprovementCriterion",
           "ThresholdCriterion", "make_criterion", "BUILTIN_CRITERIA"]


@dataclass(frozen=True)
class Assessment:
    """A health criterion's assessment of a session: ``healthy``, its ``metric`` and why."""

    healthy: bool
    metric: float | None
    reason: str


@dataclass
class SessionEpisodes:
    """The episode objectives of one run instance, per (phase, agent), in
    (episode, worker) order; ``phases`` is ``[(name, mode), ...]`` in schedule order."""

    phases: list[tuple[str, str]] = field(default_factory=list)
    objectives: dict[tuple[str, str], list[float]] = field(default_factory=dict)

    @classmethod
    def from_store(cls, store: "Store", instance_id: int) -> "SessionEpisodes":
        """Read them with :meth:`store.runs.episodes <xdoe.store.runs._runs.Runs.episodes>`."""
        rows: dict[tuple[str, str], list[tuple[int, int, float]]] = {}
        phases: dict[int, tuple[str, str]] = {}
        for r in store.runs.episodes(instance_id=instance_id):
            phases[r["phase_index"]] = (r["phase"], r["mode"])
            value = r["objective"]
            rows.setdefault((r["phase"], r["agent"]), []).append(
                (r["episode"], r["worker"], math.nan if value is None else float(value)))
        out = cls([phases[i] for i in sorted(phases)])
        for key, values in rows.items():
            out.objectives[key] = [v for _, _, v in sorted(values)]
        return out

    def default_phase(self) -> str | None:
        tests = [name for name, mode in self.phases if mode == "test"]
        if tests:
            return tests[-1]
        return self.phases[-1][0] if self.phases else None

    def series(self, phase: str | None, agent: str | None) -> tuple[str | None, str | None, list[float]]:
        """``(phase, agent, objectives)`` with the defaults filled in."""
        phase = phase or self.default_phase()
        if agent is None:
            agents = [a for (p, a) in self.objectives if p == phase]
            agent = agents[0] if agents else None
        return phase, agent, self.objectives.get((phase or "", agent or ""), [])


class HealthCriterion(ABC):
    """Base class: measure a session, judge it against its parent.

    Args:
        last: episodes the metric averages over (the last ones of the phase).
        phase: the phase measured (default: the last test-mode phase, else the last).
        agent: the agent measured (default: the first agent of that phase).

    Raises:
        InputError: ``last`` is not a positive integer.
    """

    def __init__(self, *, last: int = 100, phase: str | None = None, agent: str | None = None) -> None:
        if isinstance(last, bool) or not isinstance(last, int) or last < 1:
            raise InputError(f"last must be a positive integer, not {last!r}")
        self.last = last
        self.phase = phase
        self.agent = agent

    def measure(self, episodes: SessionEpisodes) -> float | None:
        """Mean objective over the last ``last`` episodes (``None``: no episodes)."""
        _, _, values = episodes.series(self.phase, self.agent)
        window = [v for v in values[-self.last:] if not math.isnan(v)]
        return sum(window) / len(window) if window else None

    def describe(self, episodes: SessionEpisodes) -> str:
        """What :meth:`measure` averages for ``episodes``, defaults resolved:
        ``mean objective of learner over the last 20 episodes of phase testing``
        (a game of several agents: one agent's objective, named)."""
        phase, agent, values = episodes.series(self.phase, self.agent)
        n = sum(1 for v in values[-self.last:] if not math.isnan(v))
        return f"mean objective of {agent} over the last {n} episode(s) of phase {phase}"

    def evaluate(self, episodes: SessionEpisodes, parent_metric: float | None) -> Assessment:
        """Measure and judge a session (``parent_metric`` ``None`` for a root);
        the reason ends with what the metric is (:meth:`describe`)."""
        metric = self.measure(episodes)
        if metric is None:
            phase, agent, _ = episodes.series(self.phase, self.agent)
            return Assessment(False, None, f"no episodes of agent {agent} in phase {phase}")
        healthy, reason = self.judge(metric, parent_metric)
        return Assessment(healthy, metric, f"{reason} · {self.describe(episodes)}")

    @abstractmethod
    def judge(self, metric: float, parent_metric: float | None) -> tuple[bool, str]:
        """``(healthy, reason)`` for a session measuring ``metric``."""

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in vars(self).items())
        return f"{type(self).__name__}({params})"


class ImprovementCriterion(HealthCriterion):
    """Healthy when the metric rose over the parent's by at least ``delta``
    (``metric > parent`` and ``metric - parent >= delta``); a root (no parent)
    is healthy. ``delta`` is in objective units (default 0: any rise)."""

    def __init__(self, *, delta: float = 0.0, last: int = 100, phase: str | None = None,
                 agent: str | None = None) -> None:
        super().__init__(last=last, phase=phase, agent=agent)
        if isinstance(delta, bool) or not isinstance(delta, (int, float)) or delta < 0:
            raise InputError(f"delta must be a number >= 0, not {delta!r}")
        self.delta = float(delta)

    def judge(self, metric: float, parent_metric: float | None) -> tuple[bool, str]:
        if parent_metric is None:
            return True, "root"
        rise = metric - parent_metric
        if rise > 0 and rise >= self.delta:
            return True, f"rose {rise:+.3g} over the parent (needs {self.delta:+.3g})"
        return False, f"changed {rise:+.3g} over the parent (needs a rise of {self.delta:.3g})"


class ThresholdCriterion(HealthCriterion):
    """Healthy when the metric is at least ``threshold`` (``above=False``: at most)."""

    def __init__(self, *, threshold: float, above: bool = True, last: int = 100,
                 phase: str | None = None, agent: str | None = None) -> None:
        super().__init__(last=last, phase=phase, agent=agent)
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
            raise InputError(f"threshold must be a number, not {threshold!r}")
        self.threshold = float(threshold)
        self.above = bool(above)

    def judge(self, metric: float, parent_metric: float | None) -> tuple[bool, str]:
        ok = metric >= self.threshold if self.above else metric <= self.threshold
        sign = ">=" if self.above else "<="
        return ok, f"{metric:.4g} {sign} {self.threshold:g}" if ok else f"{metric:.4g} not {sign} {self.threshold:g}"


BUILTIN_CRITERIA: dict[str, type[HealthCriterion]] = {
    "ImprovementCriterion": ImprovementCriterion,
    "ThresholdCriterion": ThresholdCriterion,
}


def make_criterion(spec: Mapping[str, Any] | HealthCriterion, key: str = "criterion") -> HealthCriterion:
    """A criterion from ``{name, params}`` (``name`` a built-in's class name,
    optionally ``xdoe.tree:``-prefixed, or ``module:Class``) or an instance.

    Raises:
        InputError: unknown name, not a :class:`HealthCriterion`, or bad params
            (the message names ``key``).
    """
    if isinstance(spec, HealthCriterion):
        return spec
    if not isinstance(spec, Mapping) or not isinstance(spec.get("name"), str):
        raise InputError(f"{key}: expected {{name: Class, params: {{...}}}}, got {spec!r}")
    name = spec["name"]
    params = spec.get("params") or {}
    if not isinstance(params, Mapping):
        raise InputError(f"{key}.params: expected a mapping, got {params!r}")
    short = name.split(":")[-1] if name.startswith(("xdoe.tree:", "xdoe.tree._criteria:")) else name
    cls: Any = BUILTIN_CRITERIA.get(short)
    if cls is None:
        if ":" not in name and "." not in name:
            import difflib

            close = difflib.get_close_matches(name, list(BUILTIN_CRITERIA), n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise InputError(f"{key}.name: unknown criterion {name!r}; {hint}built-ins: "
                             f"{', '.join(BUILTIN_CRITERIA)}, or give module:Class")
        from xdoe.execution import load_class

        cls = load_class(name, f"{key}.name", base=HealthCriterion)
    try:
        return cls(**dict(params))
    except TypeError as exc:
        raise InputError(f"{key}.params: {exc}") from None
