"""The learning curves read from the store (issue 26: ``xrun plot curves``,
``xrun report`` and the dashboard, one pass over the episodes, no episode
table in memory) are the curves the method defines, computed here
independently from the episode table (:func:`xdoe.results.load`) with pandas,
numpy and :func:`scipy.stats.bootstrap`: the same groups, windows, grids,
run values and bands (equal to the last bit) and test points (the database's
mean of a run's test rows: equal up to the last bit of a sum), on a store
with two agents per run, missing values and episodes cut by a budget."""

from __future__ import annotations

import numpy as np
import pytest

from xdoe.analysis._curve_sets import store_curves


@pytest.fixture
def store(store_url: str):
    """12 runs (6 design points) of training and testing, on SQLite and PostgreSQL."""
    from xdoe.store import Store
    from xdoe.store.testing import fill_synthetic_campaign

    with Store(store_url) as st:
        fill_synthetic_campaign(st, runs=12, episodes=60, seed=3)
        with st.database.writer.begin() as conn:
            mark = "?" if conn.dialect.paramstyle == "qmark" else "%s"
            rows = conn.exec_driver_sql("SELECT id, phase_id, worker, episode, objective FROM episode").fetchall()
            # a second agent in every third run's training, some values missing
            conn.exec_driver_sql(
                "INSERT INTO episode (phase_id, worker, episode, agent, steps, reward, objective, wall_time) "
                f"VALUES ({mark}, {mark}, {mark}, 'rival', 25, {mark}, {mark}, {mark})",
                [(p, w, e, None if e % 7 == 3 else o + 5, None if e % 7 == 3 else o + 5, None if e % 11 == 0 else 0.02)
                 for _, p, w, e, o in rows if p % 6 == 1])
            # episode lengths that differ, so runs end at different steps; the last episodes cut by a budget
            every = conn.exec_driver_sql("SELECT id, phase_id, episode FROM episode").fetchall()
            conn.exec_driver_sql(f"UPDATE episode SET steps = {mark}, cut_by = {mark} WHERE id = {mark}",
                                 [(20 + (i * 7919) % 23, "step_budget" if e >= 52 and p % 4 == 1 else
                                   "environment" if e == 10 else None, i) for i, p, e in every])
        yield st


def _expected_runs(frame, *, phase=None, metric="objective", x="steps", window=None, keep_cut=False, **_):
    """Per run of the phase: ``(x, smoothed metric)`` by pandas and numpy from the episode
    table, the window used, the phase, and the rows cut by a budget."""
    from xdoe._cuts import BUDGET_CUTS

    phase = phase or str(frame["phase"].iloc[0])
    rows = frame[frame["phase"] == phase].assign(_cut=lambda f: f["cut_by"].isin(BUDGET_CUTS))
    episodes = rows.groupby(["run", "worker", "episode"], sort=False).agg(
        y=(metric, "mean"), steps=("steps", "max"), wall=("wall_time", "max"), cut=("_cut", "any"))
    counts = episodes.groupby(level="run").size()
    window = window or max(1, round(0.05 * int(counts.min())))
    series = {}
    for run, ep in episodes.groupby(level="run", sort=True):
        xs = {"steps": ep["steps"].cumsum(), "episodes": np.arange(1.0, len(ep) + 1),
              "wall": ep["wall"].fillna(0).cumsum()}[x]
        keep = np.ones(len(ep), bool) if keep_cut else ~ep["cut"].to_numpy(bool)
        xs, ys = np.asarray(xs, float)[keep], ep["y"].to_numpy(float)[keep]
        if len(ys) >= window:
            series[run] = (xs[window - 1:], np.convolve(ys, np.ones(window) / window, mode="valid"))
    return series, window, phase, int(rows["_cut"].sum())


def _check(ours, frame, options) -> None:
    """``ours`` (a CurveSet) against the episode table."""
    from scipy import stats

    from xdoe.analysis._aggregates import statistic_function
    from xdoe.results import experiment_label

    series, window, phase, cut = _expected_runs(frame, **options)
    rows = frame[frame["phase"] == phase]
    assert (ours.experiment, ours.phase, ours.window, ours.runs, ours.cut) == \
        (experiment_label(frame), phase, window, rows["run"].nunique(), cut)
    grouped = [r for _, band in ours.curves if band is not None for r in band.runs]
    assert sorted(grouped) == sorted(series)  # every run with a curve, in one group
    func = statistic_function(options.get("stat", "mean"))
    for i, (label, band) in enumerate(ours.curves):
        if band is None:
            continue
        have = list(band.runs)
        grid = np.linspace(max(series[r][0][0] for r in have), min(series[r][0][-1] for r in have), 200)
        values = np.stack([np.interp(grid, *series[r]) for r in have])
        np.testing.assert_array_equal(band.x, grid)
        np.testing.assert_array_equal(band.values, values)
        np.testing.assert_array_equal(band.center, func(values, axis=0))
        varies = np.ptp(values, axis=0) > 0
        if len(have) > 1 and varies.any():
            rng = np.random.default_rng(np.random.SeedSequence(options.get("seed", 0), spawn_key=(2, i)))
            res = stats.bootstrap((values[:, varies],), func, axis=0, vectorized=True, n_resamples=2000,
                                  confidence_level=0.95, method="percentile", batch=100, random_state=rng)
            # the mean's resamples are one matrix product: the same draws, the additions in another order
            tol = {"rtol": 1e-13, "atol": 1e-13} if func is np.mean else {"rtol": 0, "atol": 0}
            np.testing.assert_allclose(band.low[varies], res.confidence_interval.low, **tol)
            np.testing.assert_allclose(band.high[varies], res.confidence_interval.high, **tol)
        by = options.get("by")
        if by not in (None, "point"):  # one level of the factor per curve
            assert {str(v) for v in rows.loc[rows["run"].isin(have), by]} == {label.split("=", 1)[1]}
        else:
            assert rows.loc[rows["run"].isin(have), "design_point"].nunique() == 1
    if ours.test_phase is not None:
        from xdoe._cuts import BUDGET_CUTS

        test = frame[(frame["phase"] == ours.test_phase)]
        test = test if options.get("keep_cut") else test[~test["cut_by"].isin(BUDGET_CUTS)]
        means = test.groupby("run")[options.get("metric", "objective")].mean()
        for (_, band), scores in zip(ours.curves, ours.test_scores):
            runs = sorted(band.runs)
            np.testing.assert_allclose(scores, means[runs].to_numpy(float), rtol=1e-13, atol=0)


@pytest.mark.parametrize("options", [
    {},
    {"x": "episodes", "stat": "iqm", "by": "alpha"},
    {"x": "wall", "keep_cut": True, "by": "point", "window": 3},
    {"metric": "reward", "stat": "median", "by": "gamma", "seed": 5},
    {"phase": "testing", "x": "episodes", "window": 2},
    {"agent": "learner", "by": "point"},  # one agent's rows (xrun plot curves --agent, a run page's agent line)
])
def test_the_store_draws_the_curves_of_the_episode_table(store, options) -> None:
    import xdoe.results

    frame = xdoe.results.load(store, "bench")
    if "agent" in options:
        frame = frame[frame["agent"] == options["agent"]]
    ours = store_curves(store, "bench", **options)
    assert ours.curves and all(band is not None for _, band in ours.curves)
    _check(ours, frame, options)
    if not options:
        assert ours.cut > 0 and ours.test_phase == "testing" and ours.window == 3


def test_store_curves_refuse_bad_input_and_draw_no_curve_past_every_run(store) -> None:
    from xdoe.errors import InputError

    for options, match in (({"x": "time"}, "x axis"), ({"by": "nope"}, "no factor"), ({"phase": "eval"}, "no phase"),
                           ({"agent": "nobody"}, "no episodes of agent 'nobody'")):
        with pytest.raises(InputError, match=match):
            store_curves(store, "bench", **options)
    # a window longer than every run: no curve at all
    curves = store_curves(store, "bench", window=500)
    assert curves.window == 500 and all(band is None for _, band in curves.curves)
    assert len(curves.curves) == 6 and all(len(s) == 2 for s in curves.test_scores)  # test points still there


def test_more_design_points_than_colours_group_by_the_strongest_factor(store_url) -> None:
    """Beyond 8 design points the curves are grouped by the strongest factor: analyze's first
    by default (one more analysis), or the one the caller ranked (xrun report: its own)."""
    import xdoe.results
    from xdoe.analysis import Response, analyze, load_scores
    from xdoe.store import Store
    from xdoe.store.testing import fill_synthetic_campaign

    with Store(store_url) as st:
        fill_synthetic_campaign(st, runs=24, episodes=40, seed=1)  # 12 design points
        strongest = analyze(load_scores(st, Response(), "bench")).factors[0].name
        default = store_curves(st, "bench")
        assert default.by == "strongest factor"
        assert [label.split("=")[0] for label, _ in default.curves] == [strongest] * len(default.curves)
        other = next(f for f in ("alpha", "gamma", "epsilon") if f != strongest)
        chosen = store_curves(st, "bench", strongest=lambda: other)
        assert {label.split("=")[0] for label, _ in chosen.curves} == {other}
        _check(chosen, xdoe.results.load(st, "bench"), {"by": other})
