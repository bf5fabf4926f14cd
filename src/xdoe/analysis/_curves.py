"""The numbers behind a learning-curve picture (:func:`xdoe.analysis.plots.plot_curves`,
read from the store by :func:`xdoe.analysis._curve_sets.store_curves`):
each run's curve on a common x grid, the aggregate over runs at every grid
point and its bootstrap interval.

How, and where it comes from:

* **x is what the runs share.** RL runs given the same step budget finish
  different numbers of episodes (CartPole PPO: 172-438 for 40,000 steps), so
  the default x is the environment steps consumed so far (the cumulative
  ``steps`` of a run's episodes, rl-baselines3-zoo's ``X_TIMESTEPS``:
  ``np.cumsum(episode lengths)`` in ``scripts/plot_train.py``, SB3's
  ``results_plotter.ts2xy``); ``episodes`` and ``wall`` (cumulative wall time
  of the episodes, seconds) as in ``X_EPISODES``/``X_WALLTIME`` there.
* **Smoothing per run**, before anything is averaged: a trailing moving
  average of ``window`` episodes, only where the window is full (the zoo's
  ``window_func`` with ``x`` cropped by ``window - 1``).
* **A common grid.** Each run is interpolated linearly onto ``GRID`` evenly
  spaced x values between the largest first x and the smallest last x of the
  runs (OpenAI baselines' ``plot_util.plot_results(resample=...)`` does the
  same: ``low = max(x[0]); high = min(x[-1])``), so every grid point
  aggregates exactly the same runs and ``n`` is the number of runs.
* **Aggregate and band over runs**, the run being the unit (Agarwal et al.,
  "Deep RL at the Edge of the Statistical Precipice", NeurIPS 2021; rliable's
  ``get_interval_estimates`` + ``plot_utils.plot_sample_efficiency_curve``):
  the mean, IQM or median over runs at each grid point, and a 95 % percentile
  bootstrap interval resampling runs (:func:`scipy.stats.bootstrap`, 2,000
  resamples, seeded through ``numpy.random.SeedSequence``). A percentile
  interval of these statistics never leaves the range of the runs' values.
* Episodes cut short by a budget (``cut_by`` in :data:`xdoe._cuts.BUDGET_CUTS`)
  still count in x (their steps were spent) but give no y unless ``keep_cut``.

The episodes, pooled over agents, and their x in steps are defined once, in
:mod:`xdoe.store.views._curves` (:func:`xdoe.store.run_episodes`,
:func:`xdoe.store.steps_x`); the dashboard's run pages draw the same curve
(``store.views.curve_points``), each phase after the earlier ones' steps.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from xdoe.analysis._aggregates import CONFIDENCE, RESAMPLES, STATISTICS, statistic_function
from xdoe.errors import InputError

__all__ = ["X_AXES", "CURVE_STATS", "GRID", "Band", "smooth_run", "episode_x", "curve_grid", "aggregate_band",
           "stat_label", "describe"]

X_AXES = ("steps", "episodes", "wall")
CURVE_STATS = STATISTICS
#: grid points per curve
GRID = 200


@dataclass(frozen=True)
class Band:
    """An aggregate over runs and its interval, per grid point: ``x`` (shape
    ``(k,)``), ``center``, ``low``, ``high`` (NaN with one run), ``values``
    (``(runs, k)``, each run on the grid), ``runs`` (their uids)."""

    x: np.ndarray
    center: np.ndarray
    low: np.ndarray
    high: np.ndarray
    values: np.ndarray
    runs: tuple[str, ...]

    @property
    def n(self) -> int:
        return len(self.runs)


def _statistic(stat: str) -> Callable[..., np.ndarray]:
    """:func:`xdoe.analysis._aggregates.statistic_function`, an unknown name as bad input."""
    try:
        return statistic_function(stat)
    except ValueError as exc:
        raise InputError(str(exc)) from None


def smooth_run(x: np.ndarray, y: np.ndarray, window: int) -> tuple[np.ndarray, np.ndarray] | None:
    """One run's curve from its kept episodes in recorded order (``x`` and
    ``y``, each ``(episodes,)``: the episode's x, see :func:`episode_x`, and
    the metric pooled over agents): ``(x, smoothed y)``, the trailing mean of
    ``window`` episodes from the ``window``-th on (see the module docstring);
    ``None`` when fewer than ``window`` episodes are kept."""
    if len(y) < window:
        return None
    return x[window - 1:], np.convolve(y, np.ones(window) / window, mode="valid")


def aggregate_band(values: np.ndarray, stat: str, *, seed: int, key: tuple[int, ...]) -> tuple[
        np.ndarray, np.ndarray, np.ndarray]:
    """``(center, low, high)`` over the runs (axis 0) of ``values``
    (``(runs, k)``): ``stat`` and its 95 % percentile bootstrap interval
    (runs resampled with replacement, :func:`scipy.stats.bootstrap`,
    generator ``numpy.random.default_rng(SeedSequence(seed, spawn_key=key))``).
    ``low``/``high`` are NaN with one run; equal to ``center`` where all runs agree."""
    values = np.asarray(values, dtype=float)
    func = _statistic(stat)
    center = np.asarray(func(values, axis=0), dtype=float)
    if values.shape[0] < 2:
        nan = np.full_like(center, np.nan)
        return center, nan, nan.copy()
    low, high = center.copy(), center.copy()
    varies = np.flatnonzero(np.ptp(values, axis=0) > 0)
    if varies.size:
        low[varies], high[varies] = _band_bounds(values[:, varies].T, func, np.random.default_rng(
            np.random.SeedSequence(seed, spawn_key=key)))
    return center, low, high


#: resamples drawn per call (the ``batch`` of ``scipy.stats.bootstrap`` the bands were defined with)
_BATCH = 100


def _band_bounds(columns: np.ndarray, func: Callable[..., np.ndarray],
                 rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """The percentile interval of ``scipy.stats.bootstrap((columns.T,), func,
    axis=0, vectorized=True, n_resamples=RESAMPLES, batch=100,
    method="percentile", random_state=rng)`` (``columns``: ``(points, runs)``),
    the same draws and numbers, evaluated a few grid points at a time: scipy
    holds ``points x 100 x runs`` values per batch (533 MB for 200 points of
    3,333 runs), this at most ``ELEMENTS``. The mean of a resample is the
    runs' values weighted by how often the resample drew each run, so for
    the mean every grid point's resamples of a batch are one matrix product
    (``columns @ counts.T / runs``; equal to scipy's up to the order of the
    additions, ~1e-15 relative), not a gather of ``points x 100 x runs``
    values. ``tests/analysis/test_curves.py`` compares it with scipy."""
    from scipy import stats

    from xdoe.analysis._bootstrap import ELEMENTS

    points, runs = columns.shape
    theta = np.empty((points, RESAMPLES))
    for start in range(0, RESAMPLES, _BATCH):
        rows = min(_BATCH, RESAMPLES - start)
        index = rng.integers(0, runs, (rows, runs))
        if func is np.mean:
            flat = (index + (np.arange(rows) * runs)[:, None]).ravel()
            counts = np.bincount(flat, minlength=rows * runs).reshape(rows, runs)
            theta[:, start:start + rows] = columns @ counts.T.astype(float) / runs
            continue
        step = max(1, ELEMENTS // (rows * runs))
        for first in range(0, points, step):
            theta[first:first + step, start:start + rows] = func(columns[first:first + step][..., index], axis=-1)
    alpha = (1 - CONFIDENCE) / 2
    ci = stats.quantile(theta, np.broadcast_to(np.array([alpha, 1 - alpha]), (points, 2)), axis=-1)
    return ci[:, 0], ci[:, 1]


def episode_x(steps: np.ndarray, wall: np.ndarray, x: str) -> np.ndarray:
    """Each episode's x (recorded order, cut ones included): the environment
    steps so far (:func:`xdoe.store.steps_x`, the x of the dashboard's run
    pages too), its number (1, 2, ...) or cumulative wall time (missing: 0)."""
    if x == "steps":
        from xdoe.store import steps_x

        return steps_x(steps)
    if x == "episodes":
        return np.arange(1, len(steps) + 1, dtype=float)
    return np.cumsum(np.nan_to_num(wall))


def curve_grid(ranges: list[tuple[float, float]], runs: list[str], points: int = GRID) -> np.ndarray:
    """The common grid of runs whose curves span ``ranges`` (first and last x
    each): ``points`` values from the largest first x to the smallest last x.

    Raises:
        InputError: the runs share no range of x.
    """
    lo = max(first for first, _ in ranges)
    hi = min(last for _, last in ranges)
    if lo > hi:
        raise InputError(f"runs {', '.join(runs[:3])}{' ...' if len(runs) > 3 else ''} share no range of x "
                         "(one ends before another's smoothing window is full); use a smaller --window")
    return np.linspace(lo, hi, points) if hi > lo else np.array([lo])


def stat_label(stat: str) -> str:
    """``mean``, ``IQM``, ``median``."""
    return {"iqm": "IQM"}.get(stat, stat)


def describe(stat: str, seed: int) -> str:
    """What the line and band are, for a legend title."""
    return (f"line: {stat_label(stat)} over runs; band: {round(CONFIDENCE * 100)} % percentile "
            f"bootstrap CI over runs ({RESAMPLES} resamples, seed {seed})")

