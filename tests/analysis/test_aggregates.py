"""The aggregates over runs: checked against rliable on the same scores, and
the defects of issue 22 (intervals outside the score's range, "best" by one
statistic beside another, episodes as the unit of replication)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from xdoe.analysis import aggregate, design_points, interval_estimate, iqm, probability_of_improvement


def _scores(seed: int, shape: tuple[int, ...], loc: float = 0.0) -> np.ndarray:
    return np.random.default_rng(np.random.SeedSequence(seed)).normal(loc, 1.0, shape)


@pytest.fixture(scope="module")
def rliable():
    metrics = pytest.importorskip("rliable.metrics", reason="rliable is not installed; it is not in the test "
                                  "extra (rliable 1.2 pins arch<8): .ci/run installs it with "
                                  "pip install --no-deps rliable==1.2.0")
    library = pytest.importorskip("rliable.library")
    return metrics, library


@pytest.mark.parametrize("shape", [(3, 1), (5, 1), (10, 4), (7, 3)])
def test_point_estimates_equal_rliables(rliable, shape) -> None:
    metrics, _ = rliable
    x = _scores(1, shape)
    assert aggregate(x, "iqm") == pytest.approx(metrics.aggregate_iqm(x), rel=1e-12)
    assert aggregate(x, "mean") == pytest.approx(metrics.aggregate_mean(x), rel=1e-12)
    # rliable's median is across tasks of per-task means; ours is of the run scores (one task: the runs)
    assert aggregate(x, "median") == pytest.approx(np.median(x), rel=1e-12)
    if x.shape[1] > 1:
        assert aggregate(x.mean(axis=0)[None, :], "median") == pytest.approx(metrics.aggregate_median(x), rel=1e-12)


@pytest.mark.parametrize("shapes", [((3, 1), (3, 1)), ((5, 1), (4, 1)), ((10, 3), (8, 3))])
def test_probability_of_improvement_equals_rliables(rliable, shapes) -> None:
    metrics, _ = rliable
    x, y = _scores(2, shapes[0], 0.5), _scores(3, shapes[1])
    p, low, high = probability_of_improvement(x, y)
    assert p == pytest.approx(metrics.probability_of_improvement(x, y), rel=1e-12)
    assert low <= p <= high


@pytest.mark.parametrize("statistic,func", [("iqm", "aggregate_iqm"), ("mean", "aggregate_mean")])
def test_intervals_agree_with_an_independent_bootstrap(rliable, statistic, func) -> None:
    """One task: rliable's StratifiedBootstrap is arch's IIDBootstrap over
    runs (rliable 1.2 cannot pass its seed to arch 8, so arch is called as
    rliable would). Percentile intervals of the same scores agree to the
    bootstrap's own noise (2,000 resamples here, 4,000 there)."""
    from arch.bootstrap import IIDBootstrap

    metrics, _ = rliable
    x = _scores(4, (12, 1), 5.0)
    _, low, high = interval_estimate(x, statistic, seed=0)
    theirs = IIDBootstrap(x, seed=0).conf_int(getattr(metrics, func), reps=4000, method="percentile")[:, 0]
    width = theirs[1] - theirs[0]
    assert low == pytest.approx(theirs[0], abs=0.1 * width)
    assert high == pytest.approx(theirs[1], abs=0.1 * width)


def test_probability_of_improvement_interval_agrees_with_an_independent_bootstrap(rliable) -> None:
    from arch.bootstrap import IndependentSamplesBootstrap

    metrics, _ = rliable
    x, y = _scores(5, (8, 1), 0.7), _scores(6, (9, 1))
    p, low, high = probability_of_improvement(x, y)
    theirs = IndependentSamplesBootstrap(x, y, seed=0).conf_int(
        lambda a, b: np.array([metrics.probability_of_improvement(a, b)]), reps=2000, method="percentile")[:, 0]
    assert low == pytest.approx(theirs[0], abs=0.08) and high == pytest.approx(theirs[1], abs=0.08)


def test_stratified_resampling_keeps_every_task() -> None:
    """Several tasks: runs are resampled within each task (rliable's
    stratification), so a task whose runs all agree contributes no spread."""
    x = np.column_stack([np.full(6, 3.0), np.linspace(0.0, 1.0, 6)])
    est, low, high = interval_estimate(x, "mean")
    assert est == pytest.approx(x.mean())
    # the constant task fixes half of every resampled mean at 3: the spread is half the other task's
    _, low1, high1 = interval_estimate(x[:, 1], "mean")
    assert high - low == pytest.approx((high1 - low1) / 2, rel=0.15)


def test_bounded_score_with_three_runs_stays_inside_its_bounds() -> None:
    """CartPole returns are at most 500; with n = 3 the t interval gave
    [490.8, 505.7] and [-45.87, 700.3]. A percentile interval over runs
    cannot leave the observed range."""
    for runs in ([500.0, 500.0, 487.0], [9.4, 500.0, 482.0], [500.0, 500.0, 500.0]):
        for statistic in ("iqm", "mean", "median"):
            est, low, high = interval_estimate(np.array(runs), statistic)
            assert min(runs) <= low <= est <= high <= max(runs) <= 500.0


def _table(values: dict[int, list[float]]) -> pd.DataFrame:
    rows = [{"run": f"r{p}-{i}", "design_point": p, "repetition": i, "a": p, "y": y}
            for p, ys in values.items() for i, y in enumerate(ys)]
    return pd.DataFrame(rows)


def test_best_is_chosen_by_the_statistic_that_is_shown() -> None:
    """Point 0 has the higher mean (one lucky run), point 1 the higher IQM:
    the ranking, "best" and P(best > point) all follow the chosen statistic."""
    table = _table({0: [0.0, 0.0, 0.0, 0.0, 100.0], 1: [5.0, 5.0, 5.0, 5.0, 5.0]})
    by_iqm = design_points(table, "iqm")
    assert [p.index for p in by_iqm] == [1, 0] and by_iqm[0].estimate == 5.0
    assert by_iqm[1].improvement[0] == pytest.approx(0.8)  # 4 of 5 runs of point 0 lose to every run of point 1
    by_mean = design_points(table, "mean")
    assert [p.index for p in by_mean] == [0, 1] and by_mean[0].estimate == 20.0
    assert by_mean[1].improvement[0] == pytest.approx(0.2)  # the best by mean usually loses: shown, not hidden


def test_iqm_trims_runs_not_episodes() -> None:
    """The IQM of a point is over its runs' scores: a failed run is one of
    four, not thousands of episodes of which the failures get trimmed."""
    assert iqm(np.array([1.0, 2.0, 3.0, 100.0]), axis=None) == pytest.approx(2.5)
    table = _table({0: [-10.0, 1.0, 1.5, 1.8]})
    (point,) = design_points(table, "iqm")
    assert point.n == 4 and point.estimate == pytest.approx(1.25)


def test_single_run_has_no_interval() -> None:
    est, low, high = interval_estimate(np.array([3.0]))
    assert est == 3.0 and np.isnan(low) and np.isnan(high)
    with pytest.raises(ValueError):
        interval_estimate(np.array([1.0, 2.0]), "mode")


def test_a_factor_named_like_the_response_column_is_kept_apart() -> None:
    """A factor called ``y`` collided with the response column (pandas:
    "columns overlap"); it keeps its ``factor:`` prefix instead."""
    from xdoe.analysis import Response, run_table
    from xdoe.results import FACTORS_ATTR

    rows = [{"experiment": "e", "run": f"r{i}", "design_point": i % 2, "repetition": i // 2, "y": i % 2,
             "phase": "p", "mode": "test", "worker": 0, "episode": e, "agent": "a", "objective": float(i % 2 + e)}
            for i in range(4) for e in range(3)]
    frame = pd.DataFrame(rows)
    frame.attrs[FACTORS_ATTR] = ["y"]
    table, _ = run_table(frame, Response())
    assert list(table.columns) == ["run", "design_point", "repetition", "factor:y", "y"]
    assert table["y"].tolist() == [1.0, 2.0, 1.0, 2.0]
