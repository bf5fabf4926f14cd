"""Learning curves for RL (issue 22): on environment steps, every run on a
common grid so each point aggregates the same runs, budget-cut episodes left
out of curves and responses, bands that are bootstrap intervals over runs
inside the observed range, and no warnings. The curves are read from a real
store (:func:`xdoe.analysis.plots.plot_curves`, issue 26); the response
checks use the episode table."""

from __future__ import annotations

import warnings
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from xdoe.analysis._curve_sets import store_curves
from xdoe.analysis._curves import aggregate_band
from xdoe.analysis._response import Response, phase_rows, run_table
from xdoe.analysis.plots import plot_curves
from xdoe.errors import InputError
from xdoe.results import FACTORS_ATTR

BUDGET = 1000


def _frame(runs: dict[str, tuple[int, str]], test: bool = True) -> pd.DataFrame:
    """An episode table as :func:`xdoe.results.load` gives it. Each run learns
    at its own pace: episode lengths grow (10, 20, ... up to 100 steps, score =
    length), so runs of different pace finish different numbers of episodes
    within the same ``BUDGET`` of steps; the last episode is cut by the budget
    (a short, low score: the fake collapse)."""
    rows = []
    for run, (pace, algo) in runs.items():
        point = 0 if algo == "A" else 1
        used, e = 0, 0
        while used < BUDGET:
            length = min(100, 10 * (1 + e * pace))
            cut = used + length > BUDGET
            length = min(length, BUDGET - used)
            used += length
            rows.append(dict(experiment="toy", run=run, design_point=point, repetition=int(run[-1]), seed=1,
                             algo=algo, phase="training", mode="train", worker=0, episode=e, agent="a",
                             steps=length, reward=float(length), objective=float(length), wall_time=0.01 * length,
                             terminated=False, truncated=cut or length == 100,
                             cut_by="step_budget" if cut else ("environment" if length == 100 else None)))
            e += 1
        if test:
            for t in range(3):
                rows.append(dict(experiment="toy", run=run, design_point=point, repetition=int(run[-1]), seed=1,
                                 algo=algo, phase="testing", mode="test", worker=0, episode=t, agent="a", steps=100,
                                 reward=100.0 - pace, objective=100.0 - pace, wall_time=1.0, terminated=False,
                                 truncated=True, cut_by="environment"))
    frame = pd.DataFrame(rows)
    frame.attrs[FACTORS_ATTR] = ["algo"]
    return frame


RUNS = {"r-0": (1, "A"), "r-1": (2, "A"), "r-2": (3, "A"), "q-0": (1, "B"), "q-1": (1, "B")}


def test_the_frame_has_runs_of_different_episode_counts_and_a_cut_last_episode():
    frame = _frame(RUNS)
    train = frame[frame["phase"] == "training"]
    counts = train.groupby("run").size()
    assert counts["r-0"] != counts["r-2"]
    last = train.groupby("run").tail(1)
    assert (last["cut_by"] == "step_budget").all() and (last["objective"] < 100).all()


PACES = (1, 2, 3, 1, 1, 2)  # six runs: design points 0-2 of fill_synthetic_campaign, two runs each


@pytest.fixture
def store(store_url: str):
    """A synthetic campaign whose training phases hold the episodes of :func:`_frame`:
    run k learns at pace ``PACES[k]`` and its last episode is cut by the budget."""
    from xdoe.store import Store
    from xdoe.store.testing import fill_synthetic_campaign

    with Store(store_url) as st:
        fill_synthetic_campaign(st, runs=len(PACES), episodes=10, seed=2)
        frame = _frame({f"r-{k}": (pace, "A") for k, pace in enumerate(PACES)}, test=False)
        with st.database.writer.begin() as conn:
            mark = "?" if conn.dialect.paramstyle == "qmark" else "%s"
            phases = [p for p, in conn.exec_driver_sql("SELECT id FROM phase WHERE name = 'training' ORDER BY id")]
            conn.exec_driver_sql("DELETE FROM episode WHERE phase_id IN (SELECT id FROM phase WHERE name = 'training')")
            conn.exec_driver_sql(
                "INSERT INTO episode (phase_id, worker, episode, agent, steps, reward, objective, wall_time, "
                f"terminated, truncated, cut_by) VALUES ({', '.join([mark] * 11)})",
                [(phases[int(r.run[2:])], 0, r.episode, "learner", r.steps, r.reward, r.objective, r.wall_time,
                  False, bool(r.truncated), r.cut_by) for r in frame.itertuples()])
        yield st


def test_budget_cut_episodes_are_left_out_of_the_curves_but_their_steps_count(store):
    curves = store_curves(store, "bench", by="point", window=1)
    kept = store_curves(store, "bench", by="point", window=1, keep_cut=True)
    assert curves.cut == len(PACES) and [b.n for _, b in curves.curves] == [2, 2, 2]
    for (_, band), (_, every) in zip(curves.curves, kept.curves):
        assert (band.values[:, -1] == 100.0).all()  # no fake collapse at the end
        assert band.x[-1] < BUDGET  # the cut episode has no point
        assert every.x[-1] == BUDGET  # x: every step spent, the cut episode's too
        assert (every.values[:, -1] < 100.0).all()  # which keep_cut shows
        assert np.all(np.diff(band.x) > 0)


def test_every_grid_point_aggregates_every_run_and_the_band_stays_inside_the_runs(store):
    curves = store_curves(store, "bench", by="point", window=3, seed=5)
    for _, band in curves.curves:
        assert band is not None and band.n == 2 and band.values.shape == (2, band.x.size)
        assert not np.isnan(band.values).any()  # no point averages fewer runs
        np.testing.assert_allclose(band.center, band.values.mean(axis=0))
        lo, hi = band.values.min(axis=0), band.values.max(axis=0)
        assert np.all(band.low >= lo - 1e-12) and np.all(band.high <= hi + 1e-12)
        assert np.all(band.low <= band.center + 1e-12) and np.all(band.center <= band.high + 1e-12)
        assert np.all(band.low >= 0) and np.all(band.high <= 100)  # the score's own bounds
    again = store_curves(store, "bench", by="point", window=3, seed=5)
    for (_, band), (_, same) in zip(curves.curves, again.curves):
        np.testing.assert_array_equal(band.low, same.low)  # seeded: the same band


@pytest.mark.parametrize("stat", ["mean", "iqm", "median"])
def test_the_band_is_the_percentile_bootstrap_of_rliables_aggregates(stat):
    # the point is rliable's aggregate over runs (its mean and IQM of a one-task score
    # matrix; rliable's median is a median over tasks, so numpy's median here); the
    # band's ends are the 2.5 % and 97.5 % points of the exact bootstrap distribution
    # of the statistic over runs (all 5**5 resamples of 5 runs), up to the Monte Carlo
    # error of 2,000 resamples
    import itertools

    from scipy import stats as st

    metrics = pytest.importorskip("rliable.metrics")
    rng = np.random.default_rng(3)
    values = rng.normal(50, 10, size=(5, 4))  # 5 runs, 4 grid points
    center, low, high = aggregate_band(values, stat, seed=1, key=(0,))
    point = {"mean": metrics.aggregate_mean, "iqm": metrics.aggregate_iqm,
             "median": lambda s: np.median(s)}[stat]
    over = {"mean": lambda a: a.mean(axis=1), "iqm": lambda a: st.trim_mean(a, 0.25, axis=1),
            "median": lambda a: np.median(a, axis=1)}[stat]
    resamples = np.array(list(itertools.product(range(5), repeat=5)))
    for k in range(values.shape[1]):
        runs = values[:, k]
        assert center[k] == pytest.approx(point(runs[:, None]))
        exact = over(runs[resamples])
        for bound, target in ((low[k], 0.025), (high[k], 0.975)):
            below, at_most = np.mean(exact < bound - 1e-9), np.mean(exact <= bound + 1e-9)
            assert below - 0.012 <= target <= at_most + 0.012, (k, bound, below, at_most)


@pytest.mark.parametrize("stat", ["mean", "iqm", "median"])
def test_the_band_is_scipys_bootstrap_a_few_grid_points_at_a_time(stat, monkeypatch):
    """Issue 26: scipy holds every grid point's resamples of a batch at once
    (533 MB for 200 points of 3,333 runs); the band evaluates a few points at
    a time and gives scipy's numbers."""
    from scipy import stats as st

    import xdoe.analysis._bootstrap as bootstrap
    from xdoe.analysis._aggregates import statistic_function

    rng = np.random.default_rng(9)
    values = rng.normal(50, 10, size=(23, 7))
    values[:, 3] = 4.0  # every run agrees here
    monkeypatch.setattr(bootstrap, "ELEMENTS", 5000)
    center, low, high = aggregate_band(values, stat, seed=2, key=(2, 1))
    varies = np.ptp(values, axis=0) > 0
    res = st.bootstrap((values[:, varies],), statistic_function(stat), axis=0, vectorized=True, n_resamples=2000,
                       confidence_level=0.95, method="percentile", batch=100,
                       random_state=np.random.default_rng(np.random.SeedSequence(2, spawn_key=(2, 1))))
    # the mean's resamples are one matrix product (the same draws, the additions in another order)
    same = np.testing.assert_array_equal if stat != "mean" else partial(np.testing.assert_allclose, rtol=1e-13, atol=0)
    same(low[varies], res.confidence_interval.low)
    same(high[varies], res.confidence_interval.high)
    assert low[3] == high[3] == center[3] == 4.0


def test_the_response_leaves_budget_cuts_out_unless_asked():
    frame = _frame(RUNS)
    rows, _ = phase_rows(frame, Response(phase="training"))
    assert not (rows["cut_by"] == "step_budget").any()
    kept, _ = phase_rows(frame, Response(phase="training", keep_cut=True))
    assert len(kept) == len(rows) + len(RUNS)
    table, _ = run_table(frame, Response(phase="training", stat="last"))
    assert (table["y"] == 100.0).all()  # the last real episode, not the cut one


def test_a_run_with_nothing_but_cut_episodes_is_an_error_not_a_silent_drop():
    frame = _frame({"r-0": (1, "A")}, test=False)
    frame.loc[frame["run"] == "r-0", "cut_by"] = "stop"
    with pytest.raises(InputError, match="cut short"):
        phase_rows(frame, Response(phase="training"))


@pytest.mark.parametrize("x", ["steps", "episodes", "wall"])
def test_the_picture_is_drawn_without_a_warning(store, tmp_path: Path, x: str):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        path = plot_curves(store, tmp_path / f"c-{x}.png", experiment="bench", x=x, window=2)
        plot_curves(store, tmp_path / f"c-{x}-alpha.png", experiment="bench", x=x, by="alpha", stat="iqm", window=2)
    assert path.stat().st_size > 10_000


def test_more_design_points_than_colours_get_distinct_colours_or_their_own_curve(store_url, tmp_path: Path):
    from xdoe.analysis.plots import _colours
    from xdoe.store import Store
    from xdoe.store.testing import fill_synthetic_campaign

    assert len({str(c) for c in _colours(12)}) == 12
    with Store(store_url) as st:
        fill_synthetic_campaign(st, runs=20, episodes=20)
        curves = store_curves(st, "bench", by="point")
    assert [label.split(":")[0] for label, _ in curves.curves] == [f"point {i}" for i in range(10)]


def test_unknown_x_or_factor_is_bad_input_and_a_frame_is_not_a_store(store, tmp_path: Path):
    with pytest.raises(InputError, match="x axis"):
        plot_curves(store, tmp_path / "c.png", x="time")
    with pytest.raises(InputError, match="no factor"):
        plot_curves(store, tmp_path / "c.png", by="algo")
    with pytest.raises(TypeError, match="reads a Store"):
        plot_curves(_frame(RUNS), tmp_path / "c.png")
    assert not (tmp_path / "c.png").exists()
