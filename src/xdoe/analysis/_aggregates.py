"""RL-grade aggregates (Agarwal et al., "Deep Reinforcement Learning at the
Edge of the Statistical Precipice", NeurIPS 2021): the interquartile mean with
stratified-bootstrap confidence intervals, and the probability of improvement.

Both resample with :func:`scipy.stats.bootstrap` seeded through
``numpy.random.SeedSequence(seed, spawn_key=(...))``: same data and seed, same
intervals.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

__all__ = ["iqm", "iqm_ci", "probability_of_improvement", "MIN_REPETITIONS"]

#: fewer repetitions than this and the intervals mean little (the paper's advice)
MIN_REPETITIONS = 5
CONFIDENCE = 0.95
RESAMPLES = 2000


def iqm(scores: np.ndarray, axis: int = -1) -> np.ndarray:
    """Interquartile mean: the mean of the middle 50 % of ``scores`` along
    ``axis`` (``scipy.stats.trim_mean(..., 0.25)``)."""
    return stats.trim_mean(scores, 0.25, axis=axis)


def _rng(seed: int, key: tuple[int, ...]) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=key))


def iqm_ci(scores: np.ndarray, *, seed: int = 0, key: tuple[int, ...] = (0,)) -> tuple[float, float, float]:
    """IQM of a ``(runs, episodes)`` score matrix with a 95 % stratified
    bootstrap interval: each episode index is a stratum whose runs are
    resampled independently (as rliable's ``StratifiedBootstrap`` does over
    tasks), percentile method, 2,000 resamples.

    Returns:
        ``(iqm, low, high)``; ``low``/``high`` are NaN with a single run.
    """
    scores = np.asarray(scores, dtype=float)
    if scores.ndim == 1:
        scores = scores[:, None]
    point = float(iqm(scores.ravel()))
    if scores.shape[0] < 2:
        return point, float("nan"), float("nan")
    if np.ptp(scores) == 0:
        return point, point, point

    def statistic(*columns: np.ndarray, axis: int = -1) -> np.ndarray:
        pooled = np.concatenate([np.moveaxis(c, axis, -1) for c in columns], axis=-1)
        return iqm(pooled, axis=-1)

    res = stats.bootstrap(tuple(scores.T), statistic, n_resamples=RESAMPLES, confidence_level=CONFIDENCE,
                          method="percentile", vectorized=True, paired=False, batch=200,
                          random_state=_rng(seed, key))
    return point, float(res.confidence_interval.low), float(res.confidence_interval.high)


def probability_of_improvement(x: np.ndarray, y: np.ndarray, *, seed: int = 0,
                               key: tuple[int, ...] = (1,)) -> tuple[float, float, float]:
    """P(X > Y): the probability that a run of X scores higher than a run of
    Y (ties count one half), i.e. the Mann-Whitney U statistic over
    ``len(x) * len(y)`` (Agarwal et al. 2021, section 4.3), with a 95 %
    percentile bootstrap interval resampling the runs of each side.

    Args:
        x, y: one score per run, shape ``(n,)`` and ``(m,)``.

    Returns:
        ``(p, low, high)``; bounds NaN when a side has one run.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)

    def statistic(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
        a = np.moveaxis(a, axis, -1)[..., :, None]
        b = np.moveaxis(b, axis, -1)[..., None, :]
        return ((a > b) + 0.5 * (a == b)).mean(axis=(-2, -1))

    p = float(stats.mannwhitneyu(x, y).statistic / (len(x) * len(y)))
    if len(x) < 2 or len(y) < 2:
        return p, float("nan"), float("nan")
    if np.ptp(np.concatenate([x, y])) == 0:
        return p, p, p
    res = stats.bootstrap((x, y), statistic, n_resamples=RESAMPLES, confidence_level=CONFIDENCE,
                          method="percentile", vectorized=True, random_state=_rng(seed, key))
    return p, float(res.confidence_interval.low), float(res.confidence_interval.high)
