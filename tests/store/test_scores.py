"""The per-run scores the database aggregates (:meth:`store.views.run_scores <xdoe.store.views._views.Views.run_scores>`,
:func:`xdoe.analysis.load_scores`) equal the pandas computation over the
episode table (:func:`xdoe.results.load` + :func:`xdoe.analysis.run_table`)
for every metric, statistic, comparison, agent and ``keep_cut``, on SQLite
and PostgreSQL (``-m postgres``)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import pytest

from xdoe.analysis import Response, analyze, load_scores, response_agents, run_table
from xdoe.errors import InputError
from xdoe.results import load
from xdoe.store import Store



def _record(store: Store, doc: dict[str, Any], phases: list[tuple[str, str, list[tuple]]],
            status: str = "finished") -> None:
    """One instance of ``doc``: per phase ``(name, mode, episodes)``, each
    episode ``(worker, episode, agent, steps, reward, objective, cut_by)``."""
    rec = store.recorder(doc, results_root=RESULTS[0])
    rec.start()
    for index, (name, mode, episodes) in enumerate(phases):
        rec.phase_started(index, name, mode, {"worker": 2})
        for worker, episode, agent, steps, reward, objective, cut_by in episodes:
            rec.episode_finished(worker, episode, agent, steps, reward, objective, 0.001 * (episode + 1),
                                 terminated=cut_by is None, truncated=cut_by is not None, cut_by=cut_by)
        rec.phase_finished()
    rec.finish(status)


def _episodes(rng: np.random.Generator, agents: tuple[str, ...], n: int, *, missing: bool = True,
              cut: bool = True) -> list[tuple]:
    rows = []
    for worker in (0, 1):
        for e in range(n):
            for agent in agents:
                value = float(np.round(rng.normal(0, 3), 1))  # ties and zeros happen
                objective = None if missing and rng.random() < 0.1 else value
                cut_by = "step_budget" if cut and e == n - 1 and worker == 1 else (
                    "environment" if rng.random() < 0.2 else None)
                rows.append((worker, e, agent, int(rng.integers(1, 50)), value + 1.0, objective, cut_by))
    return rows


RESULTS: list[Any] = [None]


@pytest.fixture(autouse=True)
def _results_folder(tmp_path: Any) -> Any:
    RESULTS[0] = tmp_path / "results"
    yield
    RESULTS[0] = None


@pytest.fixture
def filled(store: Store, make_document: Any) -> Store:
    import warnings

    run_document = make_document

    rng = np.random.default_rng(7)
    warnings.simplefilter("ignore")
    for point in range(3):
        for rep in range(3):
            doc = run_document(f"exp-{point}-{rep}", experiment="exp", alpha=[0.1, 0.5, 0.9][point],
                               index=point, repetition=rep)
            n = int(rng.integers(3, 12))
            phases = [("training", "train", _episodes(rng, ("learner",), n)),
                      ("testing", "test", _episodes(rng, ("learner",), 5, cut=False))]
            if point == 0 and rep == 0:  # an earlier instance that finished, then a failed one
                _record(store, doc, [("training", "train", _episodes(rng, ("learner",), 4))])
                _record(store, doc, phases[:1], status="failed")
            _record(store, doc, phases)
    loose = run_document("exp-loose", experiment="exp")
    loose.pop("design_point")
    _record(store, loose, [("training", "train", _episodes(rng, ("learner",), 6)),
                           ("testing", "test", _episodes(rng, ("learner",), 4))])
    for k in range(4):  # a game: two agents in every run
        doc = run_document(f"game-{k}", experiment="game", alpha=[0.1, 0.9][k % 2], index=k % 2,
                           repetition=k // 2)
        _record(store, doc, [("play", "train", _episodes(rng, ("black", "white"), 7))])
    return store


METRICS = ["objective", "reward", "steps", "wall_time", "objective>0", "reward<=1.5", "objective!=0",
           "steps==10", "objective>=-1e0"]
STATS = ["mean", "iqm", "median", "last", "max", "min", "sum"]


def _same(a: pd.DataFrame, b: pd.DataFrame) -> None:
    assert list(a.columns) == list(b.columns)
    assert a["run"].tolist() == b["run"].tolist()
    for column in a.columns:
        if column == "y":
            np.testing.assert_allclose(a["y"].to_numpy(float), b["y"].to_numpy(float), rtol=1e-12, atol=1e-12,
                                       equal_nan=True)
        else:
            assert a[column].tolist() == b[column].tolist(), column
            assert a[column].dtype == b[column].dtype, column


@pytest.mark.slow
@pytest.mark.parametrize(("phase", "keep_cut"), [(None, False), ("training", True), ("0", False)])
def test_scores_equal_pandas_every_metric_and_statistic(filled: Store, keep_cut: bool, phase: str | None) -> None:
    frame = load(filled, "exp")
    for metric in METRICS:
        for stat in STATS:
            response = Response(phase, metric, stat, keep_cut)
            expected, phase_a = run_table(frame, response)
            scores = load_scores(filled, response, "exp")
            got, phase_b = run_table(scores, response)
            assert phase_a == phase_b, response
            try:
                _same(expected, got)
            except AssertionError as exc:
                raise AssertionError(f"{response}: {exc}") from None
            assert got["y"].notna().any()


def test_the_scores_of_some_runs_are_their_rows_of_the_whole_table(filled: Store) -> None:
    """``runs=`` (``xrun optimize`` reads a batch's runs): the same rows and
    values as the whole experiment's table restricted to them, the instance
    chosen as for the whole table (exp-0-0 has an earlier finished and a
    failed instance), and no row of a run not asked for."""
    some = ["exp-0-0", "exp-2-1", "exp-loose", "no-such-run"]
    for response in (Response(None, "objective", "iqm"), Response("training", "steps", "max", True)):
        whole = load_scores(filled, response, "exp")
        got = load_scores(filled, response, "exp", runs=some)
        assert set(got["run"]) == {"exp-0-0", "exp-2-1", "exp-loose"}
        expected = whole[whole["run"].isin(some)].reset_index(drop=True)
        pd.testing.assert_frame_equal(expected[list(got.columns)], got.reset_index(drop=True))
        assert got.attrs["xdoe_scores"]["phase"] == whole.attrs["xdoe_scores"]["phase"]


def test_game_agents_and_analysis_equal(filled: Store) -> None:
    frame = load(filled, "game")
    response = Response(None, "objective", "iqm")
    scores = load_scores(filled, response, "game")
    assert response_agents(frame, response) == response_agents(scores, response) == ["black", "white"]
    for agent in ("black", "white"):
        _same(run_table(frame, response, agent)[0], run_table(scores, response, agent)[0])
    with pytest.raises(InputError, match="several agents"):
        run_table(scores, response)
    with pytest.raises(InputError, match="no such agent"):
        run_table(scores, response, "grey")


def _rounded(value: Any) -> Any:
    if isinstance(value, float):
        return None if math.isnan(value) else float(f"{value:.10g}")
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return value


def test_analysis_of_scores_equals_analysis_of_episodes(filled: Store) -> None:
    for response in (Response(), Response("training", "objective>0", "mean"), Response(None, "reward", "median")):
        a = analyze(load(filled, "exp"), response, seed=3).to_dict()
        b = analyze(load_scores(filled, response, "exp"), response, seed=3).to_dict()
        assert _rounded(a) == _rounded(b)


def test_errors_as_the_pandas_path(filled: Store, store_url: str) -> None:
    with pytest.raises(InputError, match="no phase 'nope'"):
        load_scores(filled, Response("nope"), "exp")
    scores = load_scores(filled, Response("testing"), "exp")
    with pytest.raises(ValueError, match="load_scores with that response"):
        run_table(scores, Response("testing", "reward"))
    with pytest.raises(InputError, match="no experiment"):
        load_scores(filled, Response(), "other")


def test_every_episode_cut_is_refused_unless_kept(store: Store, make_document: Any) -> None:
    run_document = make_document
    doc = run_document("cut-0", experiment="cut")
    _record(store, doc, [("training", "train", [(0, 0, "learner", 5, 1.0, 1.0, "step_budget")])])
    _record(store, run_document("cut-1", experiment="cut", index=4),
            [("training", "train", [(0, 0, "learner", 5, 2.0, 2.0, None)])])
    frame, scores = load(store, "cut"), load_scores(store, Response(), "cut")
    for f in (frame, scores):
        with pytest.raises(InputError, match="cut-0"):
            run_table(f, Response())
    kept = Response(keep_cut=True)
    _same(run_table(frame, kept)[0], run_table(load_scores(store, kept, "cut"), kept)[0])


def test_memory_of_the_answer_grows_with_runs(store: Store) -> None:
    """10 runs x 2,000 episodes come back as 10 rows, one per run."""
    from xdoe.store.testing import fill_synthetic_campaign

    fill_synthetic_campaign(store, runs=10, episodes=2000)
    table = store.views.run_scores("bench", phase="training")
    assert len(table.rows) == 10 and table.phases == ("training", "testing")
    assert [r[table.columns.index("score:episodes")] for r in table.rows] == [1800] * 10
    frame = load(store, "bench")
    _same(run_table(frame, Response("training"))[0],
          run_table(load_scores(store, Response("training"), "bench"), Response("training"))[0])


def test_empty_store(store: Store) -> None:
    scores = load_scores(store, Response())
    assert scores.empty
    with pytest.raises(InputError, match="no episodes recorded"):
        run_table(scores, Response())
