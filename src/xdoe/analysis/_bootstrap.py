"""Many percentile bootstraps at once: the intervals of
:func:`scipy.stats.bootstrap` (``method="percentile"``, ``paired=False``,
``vectorized=True``) for thousands of groups in a few numpy calls instead of
one scipy call per group (issue 26: 5,000 design points took minutes).

Same numbers, not an approximation. For every group, the draws are scipy's
own, in scipy's order: a generator
``numpy.random.default_rng(SeedSequence(seed, spawn_key=key))`` and, per
batch of ``batch`` resamples and per sample, ``rng.integers(0, n, (batch,
n))`` (``scipy.stats._resampling._bootstrap_resample``); the statistic is
evaluated row-wise on the resampled values of many groups stacked into one
``(groups x resamples, n)`` array, and the interval is
:func:`scipy.stats.quantile` of each group's bootstrap distribution at
``(1 - confidence) / 2`` and ``(1 + confidence) / 2``, as scipy computes it.
``tests/analysis/test_bootstrap.py`` checks every interval against
:func:`scipy.stats.bootstrap` with the same generator, for equality.

Memory: at most about ``ELEMENTS`` values (and as many indices) per chunk of
groups, whatever the number of groups; a group larger than that (thousands
of runs) is resampled ``batch`` resamples at a time, as scipy does.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
from scipy import stats

__all__ = ["BATCH", "ELEMENTS", "generator", "percentile_intervals"]

#: resamples drawn per call to the generator (the ``batch`` given to scipy: it fixes the draws' order)
BATCH = 500
#: resampled values evaluated per chunk of groups (bounds the memory: ~4 MB of float64 each array)
ELEMENTS = 500_000


def generator(seed: int, key: tuple[int, ...]) -> np.random.Generator:
    """``numpy.random.default_rng(numpy.random.SeedSequence(seed, spawn_key=key))``."""
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=key))


def _draw(seed: int, key: tuple[int, ...], sizes: tuple[int, ...], resamples: int, batch: int,
          out: list[np.ndarray], offsets: tuple[int, ...]) -> None:
    """Write into ``out[s]`` (``(resamples, n_s)``) the indices scipy draws for
    sample ``s``, plus ``offsets[s]``: per batch, per sample, ``rng.integers(0, n, (rows, n))``."""
    rng = generator(seed, key)
    for start in range(0, resamples, batch):
        stop = min(start + batch, resamples)
        for target, n, offset in zip(out, sizes, offsets):
            np.add(rng.integers(0, n, (stop - start, n)), offset, out=target[start:stop])


def percentile_intervals(samples: Sequence[np.ndarray], statistic: Callable[[list[np.ndarray]], np.ndarray],
                         keys: Sequence[tuple[int, ...]], *, seed: int, resamples: int, confidence: float,
                         batch: int = BATCH, cost: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(low, high)``, shape ``(groups,)``: per group ``g`` the percentile
    interval of ``scipy.stats.bootstrap(tuple(s[g] for s in samples), ...,
    n_resamples=resamples, batch=batch, confidence_level=confidence,
    method="percentile", vectorized=True, paired=False,
    random_state=generator(seed, keys[g]))``.

    Args:
        samples: the groups' samples of one shape: sample ``s`` of every
            group as a ``(groups, n_s)`` array, ``n_s >= 2``.
        statistic: the resampled samples of many resamples, one
            ``(rows, n_s)`` array per sample, to one value per row
            (``(rows,)``); scipy's statistic with ``axis=-1``. It must
            compute each row on its own (a reduction along the last axis).
        keys: per group the generator's ``spawn_key``.
        cost: values the statistic touches per resample (default: the
            samples' total size); bounds a chunk's memory.

    Raises:
        ValueError: ``keys`` and the samples differ in length, or a sample has fewer than 2 values.
    """
    samples = [np.asarray(s, dtype=float) for s in samples]
    groups = len(keys)
    if any(s.ndim != 2 or len(s) != groups for s in samples):
        raise ValueError(f"{groups} keys but samples of shapes {[s.shape for s in samples]}")
    sizes = tuple(s.shape[1] for s in samples)
    if min(sizes, default=0) < 2:
        raise ValueError("each sample must contain two or more observations")
    low, high = np.full(groups, np.nan), np.full(groups, np.nan)
    alpha = np.asarray((1 - confidence) / 2)
    probabilities = np.stack((alpha, 1 - alpha), axis=-1)
    per_group = resamples * max(1, cost or sum(sizes))
    if per_group > ELEMENTS:  # one group is more than a chunk: scipy's own loop, a batch of resamples at a time
        for g in range(groups):
            rng = generator(seed, keys[g])
            theta = []
            for start in range(0, resamples, batch):
                rows = min(batch, resamples - start)
                theta.append(statistic([s[g][rng.integers(0, n, (rows, n))] for s, n in zip(samples, sizes)]))
            ci = stats.quantile(np.concatenate(theta)[None, :], probabilities[None, :], axis=-1)
            low[g], high[g] = ci[0, 0], ci[0, 1]
        return low, high
    step = ELEMENTS // per_group
    for start in range(0, groups, step):
        stop = min(start + step, groups)
        index = [np.empty((stop - start, resamples, n), dtype=np.int64) for n in sizes]
        for row in range(stop - start):
            _draw(seed, keys[start + row], sizes, resamples, batch, [i[row] for i in index],
                  tuple(row * n for n in sizes))
        theta = statistic([s[start:stop].reshape(-1)[i].reshape(-1, n) for s, i, n in zip(samples, index, sizes)])
        theta = np.asarray(theta, dtype=float).reshape(stop - start, resamples)
        ci = stats.quantile(theta, np.broadcast_to(probabilities, (stop - start, 2)), axis=-1)
        low[start:stop], high[start:stop] = ci[:, 0], ci[:, 1]
    return low, high
