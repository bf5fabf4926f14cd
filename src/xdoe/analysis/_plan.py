"""How many repetitions (``xrun plan``): from a pilot campaign's per-run
scores, the runs per design point needed to detect a difference ``delta``
between two points at power ``1 - beta`` and level ``alpha`` (Colas, Sigaud &
Oudeyer 2018, "How many random seeds?"; Agarwal et al. 2021).

Two answers per comparison:

* **Welch's t test, normal theory**: statsmodels' ``TTestIndPower.solve_power``
  (two-sided, equal runs per point) with the effect size ``delta / s_p``,
  ``s_p = sqrt((s_a^2 + s_b^2) / 2)`` the pooled standard deviation of the two
  pilots (:func:`welch_repetitions`; rounded up).
* **bootstrap**: each point's pilot scores resampled with replacement at a
  candidate ``n`` (the better point's shifted so that the difference of means
  is ``delta`` when ``delta`` is not the observed one), Welch's test on each
  of ``trials`` resamples, the power the share of rejections at ``alpha``;
  the smallest ``n`` (up to ``cap``) reaching the power, by bisection over
  ``n`` (:func:`bootstrap_repetitions`). Every ``n`` has its own random
  stream, ``SeedSequence(seed, spawn_key=(comparison, n))``, so the answer does
  not depend on the search path.

numpy, scipy and statsmodels are imported when a function runs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from xdoe.analysis._goal import Goal, resolve_goal

if TYPE_CHECKING:
    import pandas as pd

    from xdoe.analysis._response import Response

__all__ = ["Comparison", "Plan", "bootstrap_power", "bootstrap_repetitions", "pilot_plan", "plan_repetitions",
           "welch_power_test", "welch_repetitions"]

#: the largest number of runs per point the bootstrap search tries
CAP = 1000
#: resamples per candidate n of the bootstrap power estimate
TRIALS = 1000
WELCH_METHOD = ("Welch's t test, two-sided, equal runs per point: statsmodels TTestIndPower.solve_power with "
                "effect size delta / pooled SD, pooled SD = sqrt((sd_a^2 + sd_b^2) / 2)")


def welch_repetitions(delta: float, sd_a: float, sd_b: float, alpha: float = 0.05, power: float = 0.8) -> float | None:
    """Runs per point (not rounded) for a two-sided test of a difference
    ``delta`` between points with standard deviations ``sd_a``, ``sd_b``:
    ``TTestIndPower().solve_power(effect_size=|delta| / s_p, alpha, power,
    ratio=1)``; ``None`` when there is nothing to solve (``delta`` 0, no
    spread, or the solver fails)."""
    from statsmodels.stats.power import TTestIndPower

    sd = math.sqrt((sd_a ** 2 + sd_b ** 2) / 2)
    if not (sd > 0 and math.isfinite(sd) and delta and math.isfinite(delta)):
        return None
    import warnings

    # imported first: on its first import this module puts an "always" filter for its ConvergenceWarning
    # in front of the filters, which inside the block below would print the solver's give-up on stderr
    import statsmodels.tools.sm_exceptions  # noqa: F401

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            n = TTestIndPower().solve_power(effect_size=abs(delta) / sd, alpha=alpha, power=power, ratio=1.0,
                                            alternative="two-sided")
        except Exception:  # noqa: BLE001 -- the solver's failures are "no answer"
            return None
    n = float(np.asarray(n).reshape(-1)[0])
    if not (math.isfinite(n) and n > 0):  # the solver gives up on large effects (n below 2): the same power by hand
        n = _solve_power(abs(delta) / sd, alpha, power)
    return n if n is not None and math.isfinite(n) and n > 0 else None


def _power(d: float, n: float, alpha: float) -> float:
    """Two-sided power of the two-sample t test with ``n`` runs per point and
    effect size ``d`` (noncentral t, df ``2 n - 2``: statsmodels' formula)."""
    from scipy.stats import nct, t as student

    df, nc = 2 * n - 2, d * math.sqrt(n / 2)
    crit = student.isf(alpha / 2, df)
    return float(nct.sf(crit, df, nc) + nct.cdf(-crit, df, nc))


def _solve_power(d: float, alpha: float, power: float) -> float | None:
    """Runs per point reaching ``power`` (2 when 2 runs already do)."""
    from scipy.optimize import brentq

    if _power(d, 2.0, alpha) >= power:
        return 2.0
    try:
        return float(brentq(lambda n: _power(d, n, alpha) - power, 2.0, 1e9, xtol=1e-12))
    except ValueError:
        return None


def welch_power_test(a: np.ndarray, b: np.ndarray, alpha: float) -> np.ndarray:
    """Per row of ``a`` and ``b`` (``(trials, n)``), whether Welch's two-sided
    t test rejects equal means at ``alpha`` (zero spread in both: rejects when
    the means differ)."""
    from scipy.stats import t as student

    n_a, n_b = a.shape[1], b.shape[1]
    va, vb = a.var(axis=1, ddof=1) / n_a, b.var(axis=1, ddof=1) / n_b
    se2 = va + vb
    diff = a.mean(axis=1) - b.mean(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = diff / np.sqrt(se2)
        df = se2 ** 2 / (va ** 2 / (n_a - 1) + vb ** 2 / (n_b - 1))
        p = 2 * student.sf(np.abs(t), df)
    zero = se2 == 0
    p = np.where(zero, np.where(diff != 0, 0.0, 1.0), p)
    return np.nan_to_num(p, nan=1.0) < alpha


def bootstrap_power(a: np.ndarray, b: np.ndarray, n: int, alpha: float, rng: np.random.Generator,
                    trials: int = TRIALS) -> float:
    """The share of ``trials`` bootstrap resamples of ``n`` runs per point
    (with replacement from ``a`` and ``b``) in which Welch's test rejects."""
    ia = rng.integers(0, len(a), size=(trials, n))
    ib = rng.integers(0, len(b), size=(trials, n))
    return float(welch_power_test(a[ia], b[ib], alpha).mean())


def bootstrap_repetitions(a: np.ndarray, b: np.ndarray, delta: float | None = None, alpha: float = 0.05,
                          power: float = 0.8, *, seed: int = 0, key: int = 0, trials: int = TRIALS,
                          cap: int = CAP) -> tuple[int | None, bool]:
    """``(n, capped)``: the smallest runs per point (2..``cap``) whose
    bootstrap power reaches ``power`` (``a`` the better point; with
    ``delta``, ``a`` shifted so that mean(a) - mean(b) = delta), and whether
    the search hit ``cap`` without reaching it (``(None, True)``).
    ``(None, False)``: a pilot with fewer than 2 runs."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    if len(a) < 2 or len(b) < 2:
        return None, False
    if delta is not None:
        a = a - a.mean() + b.mean() + delta

    def reaches(n: int) -> bool:
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(37, key, n)))
        return bootstrap_power(a, b, n, alpha, rng, trials) >= power

    lo, hi = 2, 2
    while not reaches(hi):  # doubling, then bisection between the last failure and the first success
        if hi >= cap:
            return None, True
        lo, hi = hi + 1, min(2 * hi, cap)
    while lo < hi:
        mid = (lo + hi) // 2
        if reaches(mid):
            hi = mid
        else:
            lo = mid + 1
    return hi, False


@dataclass
class Comparison:
    """Two design points (``a`` the better of the two by its mean: the higher,
    the lower when the goal is ``minimize``), their pilots and the runs per
    point each method needs; ``observed`` the better's advantage (``|mean_a -
    mean_b|``); ``missing`` = the larger of the two answers minus the smaller
    pilot (``None``: no answer)."""

    a: int
    b: int
    levels_a: dict[str, Any]
    levels_b: dict[str, Any]
    n_a: int
    n_b: int
    mean_a: float
    mean_b: float
    sd_a: float
    sd_b: float
    observed: float
    delta: float
    welch_exact: float | None
    welch: int | None
    bootstrap: int | None
    bootstrap_capped: bool
    missing: int | None
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        def num(x: Any) -> Any:
            return None if x is None or (isinstance(x, float) and not math.isfinite(x)) else x

        return {"point_a": self.a, "point_b": self.b, "levels_a": self.levels_a, "levels_b": self.levels_b,
                "pilot_n_a": self.n_a, "pilot_n_b": self.n_b, "mean_a": num(self.mean_a), "mean_b": num(self.mean_b),
                "sd_a": num(self.sd_a), "sd_b": num(self.sd_b), "observed_delta": num(self.observed),
                "delta": num(self.delta), "n_welch_exact": num(self.welch_exact), "n_welch": self.welch,
                "n_bootstrap": self.bootstrap, "bootstrap_capped": self.bootstrap_capped,
                "missing": self.missing, "notes": list(self.notes)}


@dataclass
class Plan:
    """What ``xrun plan`` answers (``goal``: which point of a comparison is the better one)."""

    experiment: str | None
    response: str
    agent: str | None
    alpha: float
    power: float
    delta: float | None
    seed: int
    trials: int
    cap: int
    comparisons: list[Comparison]
    warnings: list[str] = field(default_factory=list)
    goal: Goal = field(default_factory=Goal)

    @property
    def methods(self) -> dict[str, str]:
        return {"welch": WELCH_METHOD,
                "bootstrap": (f"bootstrap (Colas et al. 2018): {self.trials} resamples with replacement of each "
                              f"point's pilot scores per candidate n, Welch's test on each, power = share of "
                              f"rejections; smallest n reaching the power, searched up to {self.cap} runs per point; "
                              f"seed {self.seed} (numpy SeedSequence)")}

    @property
    def recommended(self) -> int | None:
        """The largest answer over the comparisons that have one (runs per point)."""
        found = [max(x for x in (c.welch, c.bootstrap) if x is not None) for c in self.comparisons
                 if c.welch is not None or c.bootstrap is not None]
        return max(found) if found else None

    def to_dict(self) -> dict[str, Any]:
        return {"experiment": self.experiment, "response": self.response, "agent": self.agent,
                "alpha": self.alpha, "power": self.power,
                "delta": self.delta if self.delta is not None else "observed", "goal": self.goal.direction,
                "goal_from": self.goal.source, "seed": self.seed,
                "trials": self.trials, "cap": self.cap, "methods": self.methods,
                "comparisons": [c.to_dict() for c in self.comparisons], "recommended": self.recommended,
                "warnings": list(self.warnings)}


def _sd(x: np.ndarray) -> float:
    return float(np.std(x, ddof=1)) if len(x) > 1 else float("nan")


def plan_repetitions(points: Sequence[Any], *, alpha: float = 0.05, power: float = 0.8, delta: float | None = None,
                     compare: tuple[int, int] | None = None, seed: int = 0, trials: int = TRIALS,
                     cap: int = CAP, goal: "Goal | str | None" = None) -> list[Comparison]:
    """The comparisons of interest among ``points``
    (:class:`~xdoe.analysis.PointAggregate`, best first by ``goal``, as
    :func:`~xdoe.analysis.design_points` ranks them with it): the best
    against each other point, or with ``compare = (i, j)`` the points
    holding design points ``i`` and ``j``; each with the runs per point
    needed to detect ``delta`` (default: the observed difference of means)
    by :func:`welch_repetitions` and :func:`bootstrap_repetitions`. In each
    comparison ``a`` is the better point by its mean: the higher for
    ``maximize`` (``None``), the lower for ``minimize``; the bootstrap
    resamples the sign-adjusted scores (Welch's test does not care).

    Raises:
        ValueError: ``compare`` names no design point of ``points``, or one twice.
        InputError: a ``goal`` other than ``maximize`` or ``minimize``.
    """
    sign = resolve_goal(goal).sign

    def find(i: int) -> Any:
        for p in points:
            if i == p.index or i in (p.design_points or []):
                return p
        raise ValueError(f"--compare: no design point {i} in the pilot (points: "
                         f"{', '.join(str(p.index) for p in sorted(points, key=lambda p: p.index))})")

    if compare is not None:
        pa, pb = find(compare[0]), find(compare[1])
        if pa is pb:
            raise ValueError(f"--compare {compare[0]} {compare[1]}: the same setting twice")
        pairs = [(pa, pb)]
    else:
        pairs = [(points[0], p) for p in points[1:]] if points else []
    out = []
    for key, (pa, pb) in enumerate(pairs):
        a, b = sign * np.asarray(pa.values, float), sign * np.asarray(pb.values, float)  # higher is better
        if a.mean() < b.mean():  # a is the better of the two by its mean
            pa, pb, a, b = pb, pa, b, a
        observed = float(a.mean() - b.mean())
        d = observed if delta is None else abs(float(delta))
        sd_a, sd_b = _sd(a), _sd(b)
        notes = []
        exact = welch_repetitions(d, sd_a, sd_b, alpha, power) if len(a) > 1 and len(b) > 1 else None
        welch = None if exact is None else max(2, math.ceil(exact - 1e-9))
        if len(a) < 2 or len(b) < 2:
            notes.append("a pilot with fewer than 2 runs has no standard deviation")
        elif d == 0:
            notes.append("no difference to detect (delta 0)")
        elif not (sd_a > 0 or sd_b > 0):
            notes.append("no spread in either pilot: any difference is detected")
        boot, capped = (None, False)
        if d != 0 and len(a) > 1 and len(b) > 1:
            boot, capped = bootstrap_repetitions(a, b, None if delta is None else d, alpha, power, seed=seed,
                                                 key=key, trials=trials, cap=cap)
        if capped:
            notes.append(f"bootstrap: power not reached at {cap} runs per point")
        answers = [x for x in (welch, boot) if x is not None]
        missing = max(0, max(answers) - min(len(a), len(b))) if answers else None
        out.append(Comparison(pa.index, pb.index, dict(pa.levels), dict(pb.levels), len(a), len(b),
                              float(sign * a.mean()), float(sign * b.mean()), sd_a, sd_b, observed, d, exact, welch,
                              boot, capped, missing, notes))
    return out


def pilot_plan(frame: "pd.DataFrame", response: "Response | None" = None, *, agent: str | None = None,
               statistic: str | None = None, goal: "Goal | str | None" = None, alpha: float = 0.05, power: float = 0.8,
               delta: float | None = None, compare: tuple[int, int] | None = None, seed: int = 0,
               trials: int = TRIALS, cap: int = CAP) -> Plan:
    """``xrun plan`` of one agent: the pilot campaign's design points
    (:func:`~xdoe.analysis.design_points` of the design's runs in ``frame``,
    :func:`xdoe.results.load` or :func:`~xdoe.analysis.load_scores`;
    branches left out) ranked by ``statistic`` and the goal, and their
    comparisons (:func:`plan_repetitions`).

    Args:
        statistic: ``iqm``, ``mean`` or ``median``; ``None``: an optuna design's
            ``stat`` (the frame's design record), else ``iqm``
            (:func:`~xdoe.analysis.resolve_statistic`).
        goal: ``maximize`` or ``minimize``; ``None``: the direction the design
            declared for ``response`` (the frame's design record), else
            maximize (:func:`~xdoe.analysis.resolve_goal`).
        alpha, power, delta, compare, seed, trials, cap: as :func:`plan_repetitions`.

    Raises:
        InputError: no episodes, an unknown phase or agent, several agents
            and no ``agent``, a bad ``goal``, or ``compare`` naming no design
            point of the pilot (or one twice).
    """
    from xdoe.analysis._aggregates import resolve_statistic
    from xdoe.analysis._branches import split_branches
    from xdoe.analysis._effects import design_points
    from xdoe.analysis._response import Response, run_table
    from xdoe.errors import InputError
    from xdoe.results import experiment_label

    response = response or Response()
    goal = resolve_goal(goal, response=response, frame=frame)
    statistic = resolve_statistic(statistic, frame=frame)
    frame = split_branches(frame)[0]
    table, phase = run_table(frame, response, agent)
    points = design_points(table, statistic, seed=seed, goal=goal)
    try:
        comparisons = plan_repetitions(points, alpha=alpha, power=power, delta=delta, compare=compare, seed=seed,
                                       trials=trials, cap=cap, goal=goal)
    except ValueError as exc:
        raise InputError(str(exc)) from None
    plan = Plan(experiment_label(frame), response.label(phase), agent, alpha, power, delta, seed, trials, cap,
                comparisons, goal=goal)
    if len(points) < 2:
        plan.warnings.append("fewer than 2 design points: nothing to compare")
    return plan
