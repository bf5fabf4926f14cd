"""Known-truth problems for adaptive designs (issue 37).

Its environment (:class:`~xdoe.components.environments.FunctionEnvironment`
of :func:`truth`) pays, at the one step of each episode,

    reward = 10 - (x1 - 2.6)^2 - 2 (x2 - 7.3)^2 - 0.5 (x3 - 1.5)^2 + N(0, 0.1^2)

over ``x1`` in [1, 5], ``x2`` in [5, 9], ``x3`` in [0, 4]: a maximum of 10 at
(2.6, 7.3, 1.5), off the points of small grids (the 3 x 3 x 3 grid's best is
9.535; within 0.25 of the maximum takes the 6 x 6 x 6 grid, 216 points).

:func:`branin` is Branin's function (Dixon & Szego 1978), to minimise over
``x1`` in [-5, 10], ``x2`` in [0, 15]: a minimum of 0.397887 at three points,
(-pi, 12.275), (pi, 2.275), (9.42478, 2.475). :func:`sampler_path` asks
xdoe's per-trial seeded samplers (:func:`xdoe.design._optuna._ask`, the ones
``xrun optimize`` asks) and tells them a formula plus noise, without running
anything: the runs a sampler needs, fast.
"""

from __future__ import annotations

import itertools
import math
from typing import Any, Callable

import numpy as np

from dummy_study import known_truth_study

OPTIMUM = {"x1": 2.6, "x2": 7.3, "x3": 1.5}
MAXIMUM = 10.0
RANGES = {"x1": (1.0, 5.0), "x2": (5.0, 9.0), "x3": (0.0, 4.0)}


def truth(x1: float = 2.6, x2: float = 7.3, x3: float = 1.5) -> float:
    """The mean reward at ``(x1, x2, x3)`` (a factor left out stays at its best)."""
    return MAXIMUM - (x1 - 2.6) ** 2 - 2.0 * (x2 - 7.3) ** 2 - 0.5 * (x3 - 1.5) ** 2



#: :func:`failing_truth` raises where x1 is above this
FAILS_ABOVE = 4.0


def failing_truth(x1: float = 2.6, x2: float = 7.3, x3: float = 1.5) -> float:
    """:func:`truth`, raising where ``x1 > FAILS_ABOVE`` (a setting whose runs fail, as a diverging learner's)."""
    if x1 > FAILS_ABOVE:
        raise FloatingPointError(f"diverged at x1 = {x1}")
    return truth(x1, x2, x3)


#: the calls of :func:`flaky_truth` so far (a test clears it)
FLAKY_CALLS: list[int] = []
#: the call of :func:`flaky_truth` that raises (1-based)
FLAKY_CALL = 4


def flaky_truth(x1: float = 2.6, x2: float = 7.3, x3: float = 1.5) -> float:
    """:func:`truth`, raising at its ``FLAKY_CALL``-th call in this process (a
    run that fails where another run of its setting did not: under
    ``--in-process`` runs go in file order, so the run is known)."""
    FLAKY_CALLS.append(1)
    if len(FLAKY_CALLS) == FLAKY_CALL:
        raise FloatingPointError("diverged (this seed)")
    return truth(x1, x2, x3)

BRANIN_RANGES = {"x1": (-5.0, 10.0), "x2": (0.0, 15.0)}
BRANIN_MINIMUM = 0.397887


def branin(x1: float, x2: float) -> float:
    b, c, t = 5.1 / (4 * math.pi ** 2), 5 / math.pi, 1 / (8 * math.pi)
    return (x2 - b * x1 ** 2 + c * x1 - 6) ** 2 + 10 * (1 - t) * math.cos(x1) + 10


def grid_runs(tolerance: float, f: Callable[..., float] = truth, ranges: dict = RANGES,
              best: float = MAXIMUM, direction: str = "maximize") -> int:
    """Points of the smallest n x ... x n grid (each range's ends included)
    holding a point within ``tolerance`` of ``best`` (default: the quadratic)."""
    sign = 1.0 if direction == "maximize" else -1.0
    for n in range(2, 100):
        axes = [[lo + (hi - lo) * i / (n - 1) for i in range(n)] for lo, hi in ranges.values()]
        if max(sign * f(*p) for p in itertools.product(*axes)) >= sign * best - tolerance:
            return n ** len(ranges)
    raise AssertionError("no grid up to 99 points a side")


def sampler_path(sampler: str, seed: int, trials: int, batch: int, *, f: Callable[..., float] = truth,
                 ranges: dict = RANGES, direction: str = "maximize", noise: float = 0.1,
                 startup_trials: int | None = None) -> list[float]:
    """The true values of the trials xdoe's seeded ``sampler`` asks, in
    order, each told ``f`` plus N(0, noise^2) (from ``default_rng([seed, 99])``),
    batch by batch (asked ``batch`` at a time, told in trial order)."""
    from xdoe.design import Factor
    from xdoe.design._optuna import OptunaSettings, _ask, distributions, import_optuna

    optuna = import_optuna()
    factors = [Factor(name, low=lo, high=hi) for name, (lo, hi) in ranges.items()]
    settings = OptunaSettings(sampler=sampler, trials=trials, batch=batch, directions=(direction,),
                              startup_trials=startup_trials)
    study = optuna.create_study(direction=direction)
    dists = distributions(factors)
    rng = np.random.default_rng([seed, 99])
    out: list[float] = []
    for _ in range(0, trials, batch):
        asked = [_ask(study, factors, settings, seed, dists) for _ in range(batch)]
        for trial in asked:
            value = f(**trial.params)
            out.append(value)
            study.tell(trial.number, value + float(rng.normal(0, noise)))
    return out


def document(design: Any, *, seed: int = 11, repetitions: int = 1, episodes: int = 2,
             factors: dict | None = None) -> dict[str, Any]:
    """The experiment document (plain data) over x1, x2, x3 (or ``factors``), noise N(0, 0.1^2)."""
    factors = factors or {name: {"range": list(r)} for name, r in RANGES.items()}
    return known_truth_study("quad", "optuna_truth:truth", factors, design, noise=0.1, seed=seed,
                             repetitions=repetitions, episodes=episodes)


#: the branching problem: on ``kind: flat`` the best is 8.72 (at x3 = 1.5, whatever x1: it has none);
#: on ``kind: peak`` it is 10 at (x1, x3) = (2.6, 1.5), and x1 applies only there (``when``)
BRANCH_MAXIMUM = 10.0
FLAT_MAXIMUM = 8.72


def branch_truth(kind: str, x3: float, x1: float | None = None) -> float:
    """The true mean of the branching problem's setting (``x1`` on ``peak`` only)."""
    if kind == "flat":
        return truth(2.6, 6.5, x3)  # 8.72 - 0.5 (x3 - 1.5)^2
    return truth(float(x1), 7.3, x3)  # type: ignore[arg-type]


def branch_document(design: Any, *, seed: int = 11, repetitions: int = 1, episodes: int = 2) -> dict[str, Any]:
    """The branching problem as an experiment document: the environment is
    the named schedule factor ``kind`` (``flat`` or ``peak``), ``x3`` is every
    run's, ``x1`` is conditional (``when: {kind: [peak]}``, the peak
    environment's only)."""
    doc = document(design, seed=seed, repetitions=repetitions, episodes=episodes,
                   factors={"x1": {"range": [1, 5], "when": {"kind": ["peak"]}}, "x3": {"range": [0, 4]}})
    environments = doc["definitions"]["environments"]
    base = environments.pop("f")["environment"]
    fixed = {"function": base["params"]["function"], "noise": base["params"]["noise"]}
    environments["flat"] = {"environment": {**base, "params": {**fixed, "x1": 2.6, "x2": 6.5, "x3": "${x3}"}}}
    environments["peak"] = {"environment": {**base, "params": {**fixed, "x1": "${x1}", "x3": "${x3}"}}}
    doc["schedule"][0]["testing"]["environments"] = {"name": "kind", "levels": [["flat"], ["peak"]]}
    return doc
