"""The batched bootstraps (:mod:`xdoe.analysis._bootstrap`) give, group by
group, exactly the interval :func:`scipy.stats.bootstrap` gives with the same
generator, and the pair-counted probability of improvement is
:func:`scipy.stats.mannwhitneyu`'s U over ``n * m`` (issue 26: one scipy
call per design point took minutes at 5,000 points)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from xdoe.analysis._aggregates import (
    CONFIDENCE,
    RESAMPLES,
    interval_estimate,
    interval_estimates,
    probabilities_of_improvement,
    probability_of_improvement,
    statistic_function,
)
from xdoe.analysis._bootstrap import BATCH, generator


def _scipy_interval(m: np.ndarray, statistic: str, seed: int, key: tuple[int, ...]) -> tuple[float, float]:
    """The stratified percentile interval as scipy computes it (the call the
    batched code replaces), clipped to the scores' range as interval_estimate promises."""
    func = statistic_function(statistic)

    def pooled(*columns: np.ndarray, axis: int = -1) -> np.ndarray:
        return func(np.concatenate([np.moveaxis(c, axis, -1) for c in columns], axis=-1), axis=-1)

    res = stats.bootstrap(tuple(m.T), pooled, n_resamples=RESAMPLES, confidence_level=CONFIDENCE,
                          method="percentile", vectorized=True, paired=False, batch=BATCH,
                          random_state=generator(seed, key))
    low, high = np.clip([res.confidence_interval.low, res.confidence_interval.high], m.min(), m.max())
    return float(low), float(high)


def _scipy_improvement(x: np.ndarray, y: np.ndarray, seed: int, key: tuple[int, ...]) -> tuple[float, float, float]:
    tasks = x.shape[1]

    def statistic(*columns: np.ndarray, axis: int = -1) -> np.ndarray:
        cols = [np.moveaxis(c, axis, -1) for c in columns]
        per_task = []
        for a, b in zip(cols[:tasks], cols[tasks:]):
            a, b = a[..., :, None], b[..., None, :]
            per_task.append(((a > b) + 0.5 * (a == b)).mean(axis=(-2, -1)))
        return np.mean(per_task, axis=0)

    p = float(np.mean([stats.mannwhitneyu(x[:, t], y[:, t]).statistic / (len(x) * len(y)) for t in range(tasks)]))
    res = stats.bootstrap((*x.T, *y.T), statistic, n_resamples=RESAMPLES, confidence_level=CONFIDENCE,
                          method="percentile", vectorized=True, paired=False, batch=BATCH,
                          random_state=generator(seed, key))
    return p, float(res.confidence_interval.low), float(res.confidence_interval.high)


def _groups(seed: int) -> list[np.ndarray]:
    """Score matrices of many sizes (2 to 60 runs, 1 to 3 tasks), with ties and rounding."""
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    out = []
    for runs in (2, 3, 4, 5, 7, 8, 9, 16, 17, 33, 60):
        for tasks in (1, 1, 3):
            out.append(rng.normal(rng.uniform(-5, 5), rng.uniform(0.1, 3), (runs, tasks)))
    out.append(np.round(rng.normal(0, 2, (12, 1))))  # ties
    out.append(rng.integers(0, 3, (6, 1)).astype(float))
    return out


@pytest.mark.parametrize("statistic", ["iqm", "mean", "median"])
def test_every_interval_is_scipys(statistic: str) -> None:
    groups = _groups(1)
    keys = [(0, 7 * g + 3) for g in range(len(groups))]
    batched = interval_estimates(groups, statistic, seed=11, keys=keys)
    for m, key, (point, low, high) in zip(groups, keys, batched):
        assert point == float(statistic_function(statistic)(m.ravel()))
        assert (low, high) == _scipy_interval(m, statistic, 11, key)
        assert (point, low, high) == interval_estimate(m, statistic, seed=11, key=key)


def test_intervals_of_many_groups_in_chunks_are_each_groups_own(monkeypatch) -> None:
    """Chunks of a few groups (a small memory bound) change no number."""
    import xdoe.analysis._bootstrap as bootstrap

    rng = np.random.default_rng(np.random.SeedSequence(5))
    groups = [rng.normal(0, 1, 2) for _ in range(30)] + [rng.normal(0, 1, 5) for _ in range(30)]
    keys = [(0, g) for g in range(len(groups))]
    whole = interval_estimates(groups, "iqm", seed=3, keys=keys)
    monkeypatch.setattr(bootstrap, "ELEMENTS", 3 * RESAMPLES * 5)
    assert interval_estimates(groups, "iqm", seed=3, keys=keys) == whole
    for m, key, (_, low, high) in zip(groups[::7], keys[::7], whole[::7]):
        assert (low, high) == _scipy_interval(m[:, None], "iqm", 3, key)


def test_a_group_larger_than_a_chunk_is_resampled_batch_by_batch_as_scipy_does(monkeypatch) -> None:
    """A level of a factor holds thousands of runs: its 2,000 resamples at
    once would take hundreds of MB; batch by batch, the same numbers."""
    import xdoe.analysis._bootstrap as bootstrap

    rng = np.random.default_rng(np.random.SeedSequence(8))
    groups = [rng.normal(0, 1, 40), rng.normal(2, 1, 33)]
    monkeypatch.setattr(bootstrap, "ELEMENTS", 1000)
    for statistic in ("mean", "iqm"):
        for m, key, (_, low, high) in zip(groups, [(2, 0), (2, 1)],
                                          interval_estimates(groups, statistic, seed=1, keys=[(2, 0), (2, 1)])):
            assert (low, high) == _scipy_interval(m[:, None], statistic, 1, key)
    x = np.round(rng.normal(0.5, 1, (30, 1)), 1)
    y = np.round(rng.normal(0, 1, (20, 1)), 1)
    assert probabilities_of_improvement(x, [y], seed=2, keys=[(1, 4)])[0] == _scipy_improvement(x, y, 2, (1, 4))


def test_special_groups_keep_their_promises() -> None:
    one, same, gap = np.array([4.0]), np.full(5, 2.5), np.array([1.0, np.nan, 3.0])
    (p1, l1, h1), (p2, l2, h2), (p3, l3, h3) = interval_estimates([one, same, gap], "mean", seed=0,
                                                                   keys=[(0, 0), (0, 1), (0, 2)])
    assert p1 == 4.0 and np.isnan(l1) and np.isnan(h1)
    assert (p2, l2, h2) == (2.5, 2.5, 2.5)
    assert np.isnan(p3)
    with pytest.raises(ValueError, match="keys"):
        interval_estimates([same], "mean", keys=[])


@pytest.mark.parametrize("sizes", [(2, 2), (3, 5), (8, 2), (10, 10), (25, 30)])
@pytest.mark.parametrize("tasks", [1, 2])
def test_every_probability_of_improvement_is_scipys(sizes: tuple[int, int], tasks: int) -> None:
    rng = np.random.default_rng(np.random.SeedSequence([*sizes, tasks]))
    x = np.round(rng.normal(0.5, 1, (sizes[0], tasks)), 1)
    ys = [np.round(rng.normal(0, 1, (sizes[1], tasks)), 1) for _ in range(4)]
    keys = [(1, k) for k in range(len(ys))]
    batched = probabilities_of_improvement(x, ys, seed=9, keys=keys)
    for y, key, result in zip(ys, keys, batched):
        assert result == _scipy_improvement(x, y, 9, key)
        assert result == probability_of_improvement(x, y, seed=9, key=key)


def test_probability_of_improvement_of_a_missing_score_is_nan_as_scipys() -> None:
    x, y = np.array([1.0, 2.0, np.nan]), np.array([0.0, 1.5])
    p, low, high = probability_of_improvement(x, y, seed=0, key=(1, 0))
    assert np.isnan(p) and np.isnan(stats.mannwhitneyu(x, y).statistic)
    assert (low, high) == _scipy_improvement(x[:, None], y[:, None], 0, (1, 0))[1:]
