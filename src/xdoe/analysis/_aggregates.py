"""RL-grade aggregates over runs (Agarwal et al., "Deep Reinforcement
Learning at the Edge of the Statistical Precipice", NeurIPS 2021, and their
package ``rliable``): a point estimate (mean, median or interquartile mean)
with a stratified-bootstrap percentile interval, and the probability of
improvement.

**The unit of replication is the run.** Every function takes a score matrix
of shape ``(runs, tasks)`` (a vector is one task): one number per run and
task, never one per episode. This is rliable's convention
(``rliable.metrics.aggregate_iqm``, ``rliable.library.get_interval_estimates``);
``tests/analysis/test_aggregates_rliable.py`` checks the figures against
rliable on the same scores.

Resampling is :func:`scipy.stats.bootstrap` (percentile method, so an
interval never leaves the range of the observed scores), seeded through
``numpy.random.SeedSequence(seed, spawn_key=key)``: same scores and seed,
same interval.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
from scipy import stats

__all__ = ["STATISTICS", "DEFAULT_STATISTIC", "MIN_REPETITIONS", "CONFIDENCE", "RESAMPLES", "iqm",
           "statistic_function", "aggregate", "interval_estimate",
           "probability_of_improvement"]

#: fewer repetitions than this and the intervals mean little (the paper's advice)
MIN_REPETITIONS = 5
CONFIDENCE = 0.95
RESAMPLES = 2000
#: the point estimates a design point can be ranked by (``--stat``)
STATISTICS = ("iqm", "mean", "median")
#: IQM: robust to a failed run, efficient with few runs (Agarwal et al. 2021, section 4.2)
DEFAULT_STATISTIC = "iqm"


def iqm(scores: np.ndarray, axis: int | None = -1) -> np.ndarray:
    """Interquartile mean: the mean of the middle 50 % of ``scores`` along
    ``axis`` (``scipy.stats.trim_mean(..., 0.25)``, as ``rliable.metrics.aggregate_iqm``).
    With fewer than 4 values nothing is trimmed: the IQM is the mean."""
    return stats.trim_mean(scores, 0.25, axis=axis)


def statistic_function(name: str) -> Callable[..., np.ndarray]:
    """The aggregate ``iqm``, ``mean`` or ``median`` as a numpy-style function
    taking ``axis`` (the design points' estimates and the curves' bands use it).

    Raises:
        ValueError: an unknown name.
    """
    funcs: dict[str, Callable[..., np.ndarray]] = {"iqm": iqm, "mean": np.mean, "median": np.median}
    if name not in funcs:
        raise ValueError(f"unknown statistic {name!r}; expected one of {', '.join(STATISTICS)}")
    return funcs[name]


def _matrix(scores: np.ndarray) -> np.ndarray:
    m = np.asarray(scores, dtype=float)
    if m.ndim == 1:
        m = m[:, None]
    if m.ndim != 2 or m.shape[0] == 0:
        raise ValueError(f"scores must be a non-empty (runs, tasks) matrix, got shape {m.shape}")
    return m


def aggregate(scores: np.ndarray, statistic: str = DEFAULT_STATISTIC) -> float:
    """The point estimate of a ``(runs, tasks)`` score matrix: ``statistic``
    over all its entries. ``iqm`` and ``mean`` are rliable's
    ``aggregate_iqm``/``aggregate_mean``; ``median`` is the median of the
    scores (rliable's ``aggregate_median`` is the median across tasks of the
    per-task means, which for one task is the mean of the runs)."""
    return float(statistic_function(statistic)(_matrix(scores).ravel()))


def _rng(seed: int, key: tuple[int, ...]) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=key))


def interval_estimate(scores: np.ndarray, statistic: str = DEFAULT_STATISTIC, *, seed: int = 0,
                      key: tuple[int, ...] = (0,)) -> tuple[float, float, float]:
    """Point estimate and 95 % stratified-bootstrap percentile interval of a
    ``(runs, tasks)`` score matrix: the runs of each task are resampled
    independently (rliable's ``StratifiedBootstrap``), 2,000 resamples.

    Returns:
        ``(estimate, low, high)``; ``low``/``high`` are NaN with a single run,
        equal to the estimate when every score is the same. ``low <= high``
        and both lie inside ``[scores.min(), scores.max()]``.
    """
    m = _matrix(scores)
    func = statistic_function(statistic)
    point = float(func(m.ravel()))
    if m.shape[0] < 2:
        return point, float("nan"), float("nan")
    if np.ptp(m) == 0:
        return point, point, point

    def pooled(*columns: np.ndarray, axis: int = -1) -> np.ndarray:
        return func(np.concatenate([np.moveaxis(c, axis, -1) for c in columns], axis=-1), axis=-1)

    res = stats.bootstrap(tuple(m.T), pooled, n_resamples=RESAMPLES, confidence_level=CONFIDENCE,
                          method="percentile", vectorized=True, paired=False, batch=500,
                          random_state=_rng(seed, key))
    # a mean of equal values can differ from them in the last bit: keep the promise exactly
    low, high = np.clip([res.confidence_interval.low, res.confidence_interval.high], m.min(), m.max())
    return point, float(low), float(high)


def probability_of_improvement(x: np.ndarray, y: np.ndarray, *, seed: int = 0,
                               key: tuple[int, ...] = (1,)) -> tuple[float, float, float]:
    """P(X > Y): the probability that a run of X scores higher than a run of
    Y on the same task (ties count one half), averaged over tasks: the
    Mann-Whitney U statistic over ``n * m`` (Agarwal et al. 2021, section 4.3;
    ``rliable.metrics.probability_of_improvement``), with a 95 % percentile
    interval resampling the runs of each side and task independently
    (rliable's ``StratifiedIndependentBootstrap``), 2,000 resamples.

    Args:
        x, y: ``(n, tasks)`` and ``(m, tasks)`` (vectors: one task).

    Returns:
        ``(p, low, high)``; bounds NaN when a side has one run.

    Raises:
        ValueError: ``x`` and ``y`` have different numbers of tasks.
    """
    x, y = _matrix(x), _matrix(y)
    tasks = x.shape[1]
    if y.shape[1] != tasks:
        raise ValueError(f"x and y need the same tasks, got {tasks} and {y.shape[1]}")

    def statistic(*columns: np.ndarray, axis: int = -1) -> np.ndarray:
        cols = [np.moveaxis(c, axis, -1) for c in columns]
        per_task = []
        for a, b in zip(cols[:tasks], cols[tasks:]):
            a, b = a[..., :, None], b[..., None, :]
            per_task.append(((a > b) + 0.5 * (a == b)).mean(axis=(-2, -1)))
        return np.mean(per_task, axis=0)

    p = float(np.mean([stats.mannwhitneyu(x[:, t], y[:, t]).statistic / (len(x) * len(y)) for t in range(tasks)]))
    if len(x) < 2 or len(y) < 2:
        return p, float("nan"), float("nan")
    if np.ptp(np.concatenate([x.ravel(), y.ravel()])) == 0:
        return p, p, p
    res = stats.bootstrap((*x.T, *y.T), statistic, n_resamples=RESAMPLES, confidence_level=CONFIDENCE,
                          method="percentile", vectorized=True, paired=False, batch=500,
                          random_state=_rng(seed, key))
    return p, float(res.confidence_interval.low), float(res.confidence_interval.high)
