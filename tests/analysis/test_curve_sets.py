"""The learning curves read from the store (issue 26: ``xrun plot curves`` and
``xrun report`` without loading every episode) are the curves of the episode
table: the same groups, grids, bands and windows (equal to the last bit) and
test points (the database's mean of a run's test rows: equal up to the last
bit of a sum), on a store with two agents per run, missing values and
episodes cut by a budget."""

from __future__ import annotations

import numpy as np
import pytest

from xdoe.analysis._curve_sets import frame_curves, store_curves


@pytest.fixture
def store(store_url: str):
    """12 runs (6 design points) of training and testing, on SQLite and PostgreSQL."""
    from xdoe.store import Store
    from xdoe.store.testing import fill_synthetic_campaign

    with Store(store_url) as st:
        fill_synthetic_campaign(st, runs=12, episodes=60, seed=3)
        with st._writer.begin() as conn:
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


def _same(a, b) -> None:
    assert (a.experiment, a.phase, a.window, a.runs, a.cut, a.by, a.test_phase) == \
        (b.experiment, b.phase, b.window, b.runs, b.cut, b.by, b.test_phase)
    assert [label for label, _ in a.curves] == [label for label, _ in b.curves]
    for (_, x), (_, y) in zip(a.curves, b.curves):
        assert (x is None) == (y is None)
        if x is not None:
            assert x.runs == y.runs
            for field in ("x", "center", "low", "high", "values"):
                np.testing.assert_array_equal(getattr(x, field), getattr(y, field), err_msg=field)
    assert len(a.test_scores) == len(b.test_scores)
    for x, y in zip(a.test_scores, b.test_scores):  # the database's sum of several rows: the last bit may differ
        np.testing.assert_allclose(x, y, rtol=1e-13, atol=0)


@pytest.mark.parametrize("options", [
    {},
    {"x": "episodes", "stat": "iqm", "by": "alpha"},
    {"x": "wall", "keep_cut": True, "by": "point", "window": 3},
    {"metric": "reward", "stat": "median", "by": "gamma", "seed": 5},
    {"phase": "testing", "x": "episodes", "window": 2},
])
def test_the_store_draws_the_curves_of_the_episode_table(store, options) -> None:
    import xdoe.results

    frame = xdoe.results.load(store, "bench")
    ours = store_curves(store, "bench", **options)
    _same(ours, frame_curves(frame, **options))
    assert ours.curves and all(band is not None for _, band in ours.curves)
    if not options:
        assert ours.cut > 0 and ours.test_phase == "testing" and ours.window == 3


def test_store_curves_refuse_what_the_frame_refuses(store) -> None:
    from xdoe.errors import InputError

    import xdoe.results

    for options, match in (({"x": "time"}, "x axis"), ({"by": "nope"}, "no factor"), ({"phase": "eval"}, "no phase")):
        with pytest.raises(InputError, match=match):
            store_curves(store, "bench", **options)
    # a window longer than every run: no curve at all, on both paths
    frame = xdoe.results.load(store, "bench")
    _same(store_curves(store, "bench", window=500), frame_curves(frame, window=500))
    assert all(band is None for _, band in store_curves(store, "bench", window=500).curves)
