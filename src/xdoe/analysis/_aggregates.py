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

Resampling is :func:`scipy.stats.bootstrap`'s (percentile method, so an
interval never leaves the range of the observed scores), seeded through
``numpy.random.SeedSequence(seed, spawn_key=key)``: same scores and seed,
same interval. The batched forms (:func:`interval_estimates`,
:func:`probabilities_of_improvement`: one call for every design point)
compute scipy's intervals for many groups at once
(:mod:`xdoe.analysis._bootstrap`); ``tests/analysis/test_bootstrap.py`` checks
them against :func:`scipy.stats.bootstrap` group by group, for equality.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np
from scipy import stats

if TYPE_CHECKING:
    import pandas as pd

from xdoe.analysis._bootstrap import BATCH, percentile_intervals

__all__ = ["STATISTICS", "DEFAULT_STATISTIC", "resolve_statistic", "MIN_REPETITIONS", "CONFIDENCE", "RESAMPLES", "iqm",
           "statistic_function", "aggregate", "interval_estimate", "interval_estimates",
           "probability_of_improvement", "probabilities_of_improvement"]

#: fewer repetitions than this and the intervals mean little (the paper's advice)
MIN_REPETITIONS = 5
CONFIDENCE = 0.95
RESAMPLES = 2000
#: the point estimates a design point can be ranked by (``--stat``)
STATISTICS = ("iqm", "mean", "median")
#: IQM: robust to a failed run, efficient with few runs (Agarwal et al. 2021, section 4.2)
DEFAULT_STATISTIC = "iqm"


def resolve_statistic(statistic: str | None = None, *, design: dict[str, Any] | None = None,
                      frame: "pd.DataFrame | None" = None) -> str:
    """The point estimate over a design point's runs that every output ranks by:
    ``statistic`` when given (``--stat``, ``statistic=``); else the ``stat``
    an optuna design told its trials by (``design: {method: optuna, stat:
    median}``: the design points table's best is then the study's best trial),
    read from ``design`` (the manifest's, :func:`xdoe.analysis.read_design`)
    or, when ``design`` is ``None``, from the design record ``frame`` carries
    (``frame.attrs[xdoe.results.DESIGN_ATTR]``, put there by
    :func:`xdoe.results.load` and :func:`xdoe.analysis.load_scores`); else
    :data:`DEFAULT_STATISTIC` (IQM).

    Returns:
        one of :data:`STATISTICS`.

    Raises:
        ValueError: ``statistic`` is not one of :data:`STATISTICS`.
    """
    if statistic is not None:
        if statistic not in STATISTICS:
            raise ValueError(f"unknown statistic {statistic!r}; expected one of {', '.join(STATISTICS)}")
        return statistic
    if design is None and frame is not None:
        from xdoe.results import DESIGN_ATTR

        design = frame.attrs.get(DESIGN_ATTR)
    if design and design.get("method") == "optuna":
        told = (design.get("info") or {}).get("stat")
        if told in STATISTICS:
            return str(told)
    return DEFAULT_STATISTIC


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


def interval_estimate(scores: np.ndarray, statistic: str = DEFAULT_STATISTIC, *, seed: int = 0,
                      key: tuple[int, ...] = (0,)) -> tuple[float, float, float]:
    """Point estimate and 95 % stratified-bootstrap percentile interval of a
    ``(runs, tasks)`` score matrix: the runs of each task are resampled
    independently (rliable's ``StratifiedBootstrap``), 2,000 resamples
    (:func:`scipy.stats.bootstrap`, generator
    ``default_rng(SeedSequence(seed, spawn_key=key))``, batches of 500).

    Returns:
        ``(estimate, low, high)``; ``low``/``high`` are NaN with a single run,
        equal to the estimate when every score is the same. ``low <= high``
        and both lie inside ``[scores.min(), scores.max()]``.
    """
    return interval_estimates([scores], statistic, seed=seed, keys=[key])[0]


def _pooled(func: Callable[..., np.ndarray]) -> Callable[[list[np.ndarray]], np.ndarray]:
    """The statistic over the tasks' resampled runs pooled (each ``(rows, runs)``), per row."""
    return lambda columns: func(np.concatenate(columns, axis=-1), axis=-1)


def interval_estimates(scores: Sequence[np.ndarray], statistic: str = DEFAULT_STATISTIC, *, seed: int = 0,
                       keys: Sequence[tuple[int, ...]]) -> list[tuple[float, float, float]]:
    """:func:`interval_estimate` of many score matrices at once (the design
    points of a campaign): ``[(estimate, low, high)]`` in the order of
    ``scores``, group ``g`` resampled with the generator of ``keys[g]``;
    each the number :func:`interval_estimate` gives for it alone.

    Raises:
        ValueError: an empty matrix, an unknown statistic, or ``keys`` and
            ``scores`` of different lengths.
    """
    if len(keys) != len(scores):
        raise ValueError(f"{len(scores)} score matrices but {len(keys)} keys")
    func = statistic_function(statistic)
    matrices = [_matrix(s) for s in scores]
    points, low, high = np.empty(len(matrices)), np.full(len(matrices), np.nan), np.full(len(matrices), np.nan)
    for shape, members in _by_shape(matrices).items():  # every group of one shape at once
        stacked = np.stack([matrices[g] for g in members])  # (groups, runs, tasks)
        flat = stacked.reshape(len(members), -1)
        points[members] = func(flat, axis=-1)
        if shape[0] < 2:
            continue
        smallest, largest = flat.min(axis=1), flat.max(axis=1)
        same = largest - smallest == 0  # np.ptp: NaN where a score is missing
        low[members], high[members] = np.where(same, points[members], np.nan), np.where(same, points[members], np.nan)
        todo = np.flatnonzero(~same)
        if todo.size:
            lo, hi = percentile_intervals([stacked[todo, :, t] for t in range(shape[1])], _pooled(func),
                                          [keys[members[i]] for i in todo], seed=seed, resamples=RESAMPLES,
                                          confidence=CONFIDENCE, batch=BATCH)
            # a mean of equal values can differ from them in the last bit: keep the promise exactly
            rows = [members[i] for i in todo]
            low[rows] = np.clip(lo, smallest[todo], largest[todo])
            high[rows] = np.clip(hi, smallest[todo], largest[todo])
    return [(float(p), float(lo), float(hi)) for p, lo, hi in zip(points, low, high)]


def _by_shape(matrices: list[np.ndarray]) -> dict[tuple[int, ...], list[int]]:
    out: dict[tuple[int, ...], list[int]] = {}
    for g, m in enumerate(matrices):
        out.setdefault(m.shape, []).append(g)
    return out


def _improvement(columns: list[np.ndarray]) -> np.ndarray:
    """P(X > Y) per row of the resampled runs: ``columns`` are the tasks of X
    then those of Y, each ``(rows, runs)``; ties count one half, averaged over tasks."""
    tasks = len(columns) // 2
    per_task = []
    for a, b in zip(columns[:tasks], columns[tasks:]):
        a, b = a[..., :, None], b[..., None, :]
        per_task.append(((a > b) + 0.5 * (a == b)).mean(axis=(-2, -1)))
    return np.mean(per_task, axis=0)


def probability_of_improvement(x: np.ndarray, y: np.ndarray, *, seed: int = 0,
                               key: tuple[int, ...] = (1,)) -> tuple[float, float, float]:
    """P(X > Y): the probability that a run of X scores higher than a run of
    Y on the same task (ties count one half), averaged over tasks: the
    Mann-Whitney U statistic over ``n * m`` (Agarwal et al. 2021, section 4.3;
    ``rliable.metrics.probability_of_improvement``; ``tests/analysis`` checks
    it against :func:`scipy.stats.mannwhitneyu`), with a 95 % percentile
    interval resampling the runs of each side and task independently
    (rliable's ``StratifiedIndependentBootstrap``; :func:`scipy.stats.bootstrap`),
    2,000 resamples.

    Args:
        x, y: ``(n, tasks)`` and ``(m, tasks)`` (vectors: one task).

    Returns:
        ``(p, low, high)``; bounds NaN when a side has one run.

    Raises:
        ValueError: ``x`` and ``y`` have different numbers of tasks.
    """
    return probabilities_of_improvement(x, [y], seed=seed, keys=[key])[0]


def probabilities_of_improvement(x: np.ndarray, ys: Sequence[np.ndarray], *, seed: int = 0,
                                 keys: Sequence[tuple[int, ...]]) -> list[tuple[float, float, float]]:
    """:func:`probability_of_improvement` of ``x`` over each of ``ys`` at
    once (the best design point against every other): ``[(p, low, high)]``
    in the order of ``ys``, pair ``g`` resampled with the generator of
    ``keys[g]``; each the number :func:`probability_of_improvement` gives for it alone.

    Raises:
        ValueError: a side with a different number of tasks than ``x``, or
            ``keys`` and ``ys`` of different lengths.
    """
    if len(keys) != len(ys):
        raise ValueError(f"{len(ys)} comparisons but {len(keys)} keys")
    x = _matrix(x)
    tasks = x.shape[1]
    matrices = [_matrix(y) for y in ys]
    for y in matrices:
        if y.shape[1] != tasks:
            raise ValueError(f"x and y need the same tasks, got {tasks} and {y.shape[1]}")
    # P(X > Y) is the U statistic over n * m, counted pair by pair (x against every y of one shape at
    # once); NaN where a score is missing, as scipy.stats.mannwhitneyu propagates it
    points, low, high = np.empty(len(matrices)), np.full(len(matrices), np.nan), np.full(len(matrices), np.nan)
    for shape, members in _by_shape(matrices).items():
        stacked = np.stack([matrices[g] for g in members])  # (groups, m, tasks)
        columns = [np.broadcast_to(x[:, t], (len(members), len(x))) for t in range(tasks)]
        columns += [stacked[:, :, t] for t in range(tasks)]
        missing = np.isnan(stacked).any(axis=(1, 2)) | np.isnan(x).any()
        observed = _improvement([x[None, :, t] for t in range(tasks)] + [stacked[:, :, t] for t in range(tasks)])
        points[members] = np.where(missing, np.nan, observed)
        if len(x) < 2 or shape[0] < 2:
            continue
        spread = np.maximum(stacked.reshape(len(members), -1).max(axis=1), x.max()) - \
            np.minimum(stacked.reshape(len(members), -1).min(axis=1), x.min())
        same = spread == 0  # np.ptp of both sides: NaN where a score is missing
        low[members], high[members] = np.where(same, points[members], np.nan), np.where(same, points[members], np.nan)
        todo = np.flatnonzero(~same)
        if todo.size:
            lo, hi = percentile_intervals([c[todo] for c in columns], _improvement, [keys[members[i]] for i in todo],
                                          seed=seed, resamples=RESAMPLES, confidence=CONFIDENCE, batch=BATCH,
                                          cost=len(x) * shape[0] * tasks)
            rows = [members[i] for i in todo]
            low[rows], high[rows] = lo, hi
    return [(float(p), float(lo), float(hi)) for p, lo, hi in zip(points, low, high)]
