"""The typed result of :func:`xdoe.analysis.analyze` and its JSON shape."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from xdoe.analysis._goal import Goal

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
    """One factor's row of the factor table; every number comes from the one
    model named by ``method``.

    ``kind``: ``two-level`` (``effect`` = high - low, signed by the design's
    coding), ``categorical`` (``effect`` = the second level's mean minus
    the first's for two levels, in the design's level order; largest minus
    smallest level mean for more), ``continuous`` (response surface: ``effect`` = twice the coded
    linear coefficient, the first-order change from -1 to +1; a generic
    regressor: the standardised coefficient), ``nested`` (a conditional
    factor analysed within ``within``, e.g. ``agent=learner``) or
    ``sensitivity`` (``effect`` = Morris mu* or Sobol' ST).

    ``method``: ``lenth`` or ``pure error`` (two-level screening: ``t``,
    ``p``, ``active``, ``aliases``; pure error adds ``F = t^2`` and partial
    eta²), ``anova`` (type II ANOVA: ``F``, ``p``, partial eta²; a factor the
    runs confound with others has ``aliases``, them, and no F or p), ``second-order
    model`` (the joint F test of every term of the factor), ``morris`` or
    ``sobol``. ``df``: the test's degrees of freedom ``[numerator,
    denominator]`` (Lenth: ``[null, m/3]``). NaN where the model gives none.
    ``levels``: low to high."""

    name: str
    kind: str
    levels: list[LevelStat]
    effect: float
    F: float
    p: float
    eta_sq: float
    within: str = ""
    active: bool | None = None
    aliases: list[str] | None = None
    t: float = float("nan")
    df: list[float | None] | None = None
    method: str = "anova"

    def to_dict(self) -> dict[str, Any]:
        out = {"name": self.name, "kind": self.kind, "levels": [lv.to_dict() for lv in self.levels],
               "within": self.within, "method": self.method, "effect": _num(self.effect), "t": _num(self.t),
               "F": _num(self.F), "df": None if self.df is None else [_num(d) for d in self.df],
               "p": _num(self.p), "eta_sq": _num(self.eta_sq)}
        if self.active is not None:
            out.update(active=self.active, aliases=list(self.aliases or []))
        elif self.aliases:  # the ANOVA: the factors the runs confound it with (no F or p of its own)
            out["aliases"] = list(self.aliases)
        return out


@dataclass
class Interaction:
    """An estimable interaction of the one model named by ``method``.

    Screening: one alias chain (``name`` its first member, ``aliases`` the
    rest; ``factors`` the factors of the first two-factor interaction in it),
    ``effect`` (high - low of the product contrast), ``t``, ``p``,
    ``active``. ANOVA: the ``A x B`` term (``F``, ``p``, partial eta²).
    Second-order model: the ``b_ij x_i x_j`` term (``effect`` = its
    coefficient in coded units, ``t``, ``F = t^2``, ``p``)."""

    factors: tuple[str, ...]
    F: float
    p: float
    eta_sq: float
    name: str = ""
    effect: float = float("nan")
    t: float = float("nan")
    active: bool | None = None
    aliases: list[str] | None = None
    df: list[float | None] | None = None
    method: str = "anova"

    def to_dict(self) -> dict[str, Any]:
        out = {"name": self.name or " x ".join(self.factors), "factors": list(self.factors), "method": self.method,
               "effect": _num(self.effect), "t": _num(self.t), "F": _num(self.F),
               "df": None if self.df is None else [_num(d) for d in self.df], "p": _num(self.p),
               "eta_sq": _num(self.eta_sq)}
        if self.active is not None:
            out.update(active=self.active, aliases=list(self.aliases or []))
        elif self.aliases:  # the ANOVA: the factors the runs confound it with (no F or p of its own)
            out["aliases"] = list(self.aliases)
        return out


@dataclass
class PointAggregate:
    """One design point: ``n`` runs (repetitions), their scores ``values``
    (one per run, repetition order), the point ``estimate`` by
    ``statistic`` (``iqm``, ``mean`` or ``median`` over runs) with its 95 %
    stratified-bootstrap percentile interval, and ``improvement`` =
    (P(best better than this), low, high) by the analysis's goal: P(best >
    this), or P(best < this) when lower is better (``None`` for the best point)."""

    index: int
    levels: dict[str, Any]
    n: int
    statistic: str
    estimate: float
    ci_low: float
    ci_high: float
    values: np.ndarray = field(repr=False)
    improvement: tuple[float, float, float] | None = None
    #: the design points of the runs at this setting (centre points, replicates,
    #: copies in later blocks are one setting); ``index`` is the first of them
    design_points: list[int] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        imp = None if self.improvement is None else dict(zip(("p", "ci_low", "ci_high"), map(_num, self.improvement)))
        return {"design_point": self.index, "design_points": list(self.design_points or [self.index]),
                "levels": {k: _num(v) for k, v in self.levels.items()}, "n": self.n,
                "statistic": self.statistic, "estimate": _num(self.estimate), "ci_low": _num(self.ci_low),
                "ci_high": _num(self.ci_high), "scores": [_num(v) for v in self.values],
                "prob_improvement_of_best": imp}


@dataclass
class Analysis:
    """What :func:`xdoe.analysis.analyze` answers.

    ``experiment`` and ``agent`` (``None``: the runs' only agent) name what
    was analysed; ``response`` the number per run; ``statistic`` the point
    estimate over runs that ranks the design points (``points`` best
    first by ``goal``: the highest estimate first, the lowest when
    ``goal.direction`` is ``minimize``; ``best`` is ``points[0]``,
    :func:`xdoe.analysis.resolve_goal`); ``factors`` ranked strongest first
    (partial eta², or ``|effect|`` for a two-level design); ``runs`` analysed;
    ``warnings`` for people; ``methods`` the one model of each table;
    ``adaptive`` an optuna design's answer."""

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
    #: the one model each table's numbers come from, as its header names it:
    #: ``{"factors": ..., "interactions": ..., "points": ...}``
    methods: dict[str, str] = field(default_factory=dict)
    #: whether a higher or a lower score is better, and why (:func:`xdoe.analysis.resolve_goal`)
    goal: Goal = field(default_factory=Goal)
    #: an optuna design's answer, as ``xrun analyze`` states it (its JSON's ``"optuna"``):
    #: :func:`xdoe.analysis.adaptive_answer` (``best`` trial with its levels, value and runs'
    #: spread, ``history``, ``importances``, ``pareto`` of several responses, ``spent``, the
    #: pruned, failed and waiting trials); ``None`` for another design, or when
    #: :func:`xdoe.analysis.analyze` was not given the store the answer needs (a warning says so)
    adaptive: dict[str, Any] | None = None

    @property
    def best(self) -> PointAggregate | None:
        """The design point with the best estimate (by :attr:`statistic`):
        the highest, or the lowest when :attr:`goal` is ``minimize``."""
        return self.points[0] if self.points else None

    def title(self) -> str:
        """``taxi-study · response testing:objective:mean · agent learner · 6 runs``."""
        parts = [self.experiment or "(no experiment)", f"response {self.response}"]  # experiment_label's text
        if self.agent is not None:
            parts.append(f"agent {self.agent}")
        return " · ".join(parts + [f"{self.runs} runs"])

    def _repr_html_(self) -> str:
        """In a notebook: the sections the CLI prints (:func:`xdoe.analysis.sections`)
        as HTML tables, under the title naming the experiment and response;
        an optuna design's answer (:attr:`adaptive`) after them, in the lines
        ``xrun analyze`` prints (:func:`xdoe.analysis.optuna_text`)."""
        import importlib

        from xdoe._html import html_block, html_table

        # the package's sections (xdoe.analysis._format imports this module: no import cycle)
        package = importlib.import_module("xdoe.analysis")
        adaptive = [] if self.adaptive is None else package.optuna_text(self.adaptive).splitlines()
        return html_block(self.title(), [html_table(*section) for section in package.sections(self)],
                          adaptive + [f"warning: {w}" for w in self.warnings])

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of ``xrun analyze --format json``: ``{"experiment",
        "response", "agent", "statistic", "goal" (``maximize`` or
        ``minimize``), "goal_from" (``option``, ``design``, ``augment`` or ``default``),
        "runs", "factors": [{"name", "kind",
        "within", "levels": [{"level", "mean", "ci_low", "ci_high", "n"}],
        "effect", "F", "p", "eta_sq"}] (ranked), "interactions": [{"factors",
        "F", "p", "eta_sq"}], "points": [...] (:meth:`aggregates`, best
        first), "best": points[0], "warnings"}``; NaN is ``null``. A
        two-level design's factors also have ``active`` and ``aliases`` and
        the JSON a ``screening`` section; a response-surface design a
        ``surface`` section (``stationary_point`` by factor name in natural
        units, ``kind``, ``inside``, ``predicted``...); a Morris or Saltelli
        design ``sensitivity`` (one entry per factor); an optuna design
        ``optuna`` (:attr:`adaptive`, last)."""
        points = self.aggregates()
        out = {"experiment": self.experiment, "response": self.response, "agent": self.agent,
               "statistic": self.statistic, "goal": self.goal.direction, "goal_from": self.goal.source,
               "runs": self.runs,
               "factors": [f.to_dict() for f in self.factors],
               "interactions": [i.to_dict() for i in self.interactions],
               "points": points, "best": points[0] if points else None, "warnings": list(self.warnings),
               "methods": dict(self.methods)}
        if self.doe is not None:
            out.update(doe_json(self.doe))
        if self.adaptive is not None:
            out["optuna"] = self.adaptive
        return out

    def aggregates(self) -> list[dict[str, Any]]:
        """Per design point (best first): levels, runs, the estimate by
        :attr:`statistic` with its bootstrap interval, the run scores, and
        ``prob_improvement_of_best`` ``{p, ci_low, ci_high}`` (P(best better
        than the point) by :attr:`goal`; ``None`` for the best)."""
        return [p.to_dict() for p in self.points]


def _plain(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items() if not str(k).startswith("_")}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, (np.generic,)):
        x = x.item()
    if isinstance(x, float) and not np.isfinite(x):
        return None
    return x


def doe_json(doe: dict[str, Any]) -> dict[str, Any]:
    """The JSON keys of the analysis matched to the design: ``screening``
    (method, PSE, ME, SME, every contrast), ``surface`` (coefficients, lack of
    fit, ``stationary_point``, ``kind``, ``inside``, ``predicted``...) or
    ``sensitivity`` (a list, one entry per factor); after ``xgen augment
    --steepest-ascent`` / ``--confirm`` also ``steepest_ascent`` (the path,
    step by step) and ``confirmation`` (verdict, n, mean, predicted, pi)."""
    kind = doe["analysis"]
    apart = ("steepest_ascent", "confirmation", "confirmations")  # xgen augment's sequential blocks, answered apart from the model
    body = {k: v for k, v in doe.items() if k not in ("analysis", "coding", *apart)}
    if kind == "sensitivity":
        return {"sensitivity": _plain(body["indices"]), "sensitivity_method": body["method"]}
    return {kind: _plain(body), **{k: _plain(doe[k]) for k in apart if k in doe}}
