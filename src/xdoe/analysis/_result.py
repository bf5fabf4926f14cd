"""The typed result of :func:`xdoe.analysis.analyze` and its JSON shape."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["LevelStat", "FactorEffect", "Interaction", "PointAggregate", "Analysis"]


def _num(x: Any) -> Any:
    """JSON-safe number: NaN/inf -> ``None``, numpy scalars -> Python."""
    if isinstance(x, np.generic):
        x = x.item()
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


@dataclass
class LevelStat:
    """One level of a factor: mean response over its ``n`` runs with a 95 %
    bootstrap percentile interval over runs (inside the observed range)."""

    level: Any
    mean: float
    ci_low: float
    ci_high: float
    n: int

    def to_dict(self) -> dict[str, Any]:
        return {"level": _num(self.level), "mean": _num(self.mean), "ci_low": _num(self.ci_low),
                "ci_high": _num(self.ci_high), "n": self.n}


@dataclass
class FactorEffect:
    """One factor's effect.

    ``kind``: ``categorical``, ``continuous`` (``effect`` is the standardised
    regression coefficient, ``levels`` empty) or ``nested`` (a conditional
    factor analysed within ``within``, e.g. ``agent=learner``). ``effect`` of a
    categorical factor: largest minus smallest level mean. ``F``, ``p``
    (type II ANOVA), ``eta_sq`` (partial eta²); NaN without residual
    degrees of freedom."""

    name: str
    kind: str
    levels: list[LevelStat]
    effect: float
    F: float
    p: float
    eta_sq: float
    within: str = ""
    #: two-level designs (issue 24): ``effect`` is then signed (high - low),
    #: ``p`` Lenth's or the pure-error t test's, ``active`` ``p < 0.05``, and
    #: ``aliases`` the two-factor interactions aliased with it
    active: bool | None = None
    aliases: list[str] | None = None

    def to_dict(self) -> dict[str, Any]:
        out = {"name": self.name, "kind": self.kind, "levels": [lv.to_dict() for lv in self.levels],
               "within": self.within, "effect": _num(self.effect), "F": _num(self.F), "p": _num(self.p),
               "eta_sq": _num(self.eta_sq)}
        if self.active is not None:
            out.update(active=self.active, aliases=list(self.aliases or []))
        return out


@dataclass
class Interaction:
    """A two-way interaction term of the ANOVA."""

    factors: tuple[str, ...]
    F: float
    p: float
    eta_sq: float

    def to_dict(self) -> dict[str, Any]:
        return {"factors": list(self.factors), "F": _num(self.F), "p": _num(self.p), "eta_sq": _num(self.eta_sq)}


@dataclass
class PointAggregate:
    """One design point: ``n`` runs (repetitions), their scores ``values``
    (one per run, repetition order), the point ``estimate`` by
    ``statistic`` (``iqm``, ``mean`` or ``median`` over runs) with its 95 %
    stratified-bootstrap percentile interval, and ``improvement`` =
    (P(best > this), low, high) (``None`` for the best point)."""

    index: int
    levels: dict[str, Any]
    n: int
    statistic: str
    estimate: float
    ci_low: float
    ci_high: float
    values: np.ndarray = field(repr=False)
    improvement: tuple[float, float, float] | None = None

    def to_dict(self) -> dict[str, Any]:
        imp = None if self.improvement is None else dict(zip(("p", "ci_low", "ci_high"), map(_num, self.improvement)))
        return {"design_point": self.index, "levels": {k: _num(v) for k, v in self.levels.items()}, "n": self.n,
                "statistic": self.statistic, "estimate": _num(self.estimate), "ci_low": _num(self.ci_low),
                "ci_high": _num(self.ci_high), "scores": [_num(v) for v in self.values],
                "prob_improvement_of_best": imp}


@dataclass
class Analysis:
    """What :func:`xdoe.analysis.analyze` answers.

    ``experiment`` and ``agent`` (``None``: the runs' only agent) name what
    was analysed; ``response`` the number per run; ``statistic`` the point
    estimate over runs that ranks the design points (``points`` best
    first; ``best`` is ``points[0]``); ``factors`` ranked strongest first
    (partial eta²); ``runs`` analysed; ``warnings`` for people."""

    response: str
    factors: list[FactorEffect]
    interactions: list[Interaction]
    points: list[PointAggregate]
    runs: int
    warnings: list[str]
    statistic: str = "iqm"
    experiment: str | None = None
    agent: str | None = None
    #: the analysis matched to the design (:func:`xdoe.analysis._doe.doe_analysis`), or ``None``
    doe: dict[str, Any] | None = None

    @property
    def best(self) -> PointAggregate | None:
        """The design point with the highest estimate (by :attr:`statistic`)."""
        return self.points[0] if self.points else None

    def title(self) -> str:
        """``taxi-study · response testing:objective:mean · agent learner · 6 runs``."""
        parts = [self.experiment or "(no experiment)", f"response {self.response}"]  # experiment_label's text
        if self.agent is not None:
            parts.append(f"agent {self.agent}")
        return " · ".join(parts + [f"{self.runs} runs"])

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of ``xrun analyze --format json``: ``{"experiment",
        "response", "agent", "statistic", "runs", "factors": [{"name", "kind",
        "within", "levels": [{"level", "mean", "ci_low", "ci_high", "n"}],
        "effect", "F", "p", "eta_sq"}] (ranked), "interactions": [{"factors",
        "F", "p", "eta_sq"}], "points": [...] (:meth:`aggregates`, best
        first), "best": points[0], "warnings"}``; NaN is ``null``. A
        two-level design's factors also have ``active`` and ``aliases`` and
        the JSON a ``screening`` section; a response-surface design a
        ``surface`` section (``stationary_point`` by factor name in natural
        units, ``kind``, ``inside``, ``predicted``...); a Morris or Saltelli
        design ``sensitivity`` (one entry per factor)."""
        points = self.aggregates()
        out = {"experiment": self.experiment, "response": self.response, "agent": self.agent,
               "statistic": self.statistic, "runs": self.runs,
               "factors": [f.to_dict() for f in self.factors],
               "interactions": [i.to_dict() for i in self.interactions],
               "points": points, "best": points[0] if points else None, "warnings": list(self.warnings)}
        if self.doe is not None:
            from xdoe.analysis._doe import doe_json

            out.update(doe_json(self.doe))
        return out

    def aggregates(self) -> list[dict[str, Any]]:
        """Per design point (best first): levels, runs, the estimate by
        :attr:`statistic` with its bootstrap interval, the run scores, and
        ``prob_improvement_of_best`` ``{p, ci_low, ci_high}`` (``None`` for the best)."""
        return [p.to_dict() for p in self.points]
