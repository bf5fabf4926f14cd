"""The Python API is as safe as the command line (issue 32 item 6): every
public read of ``xdoe.analysis`` answers ONE experiment, named in its
answer; a store or frame of several is refused with
:class:`~xdoe.errors.AmbiguousExperimentError` unless ``experiment=`` picks one."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from several_experiments import EXPERIMENTS, REPETITIONS, build_store
from xdoe.analysis import Response, analyze, load_scores, response_agents, run_table
from xdoe.analysis.plots import plot_curves, plot_effects
from xdoe.errors import AmbiguousExperimentError, InputError
from xdoe.results import load
from xdoe.store import Store

UIDS = sorted(EXPERIMENTS)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> str:
    return build_store(tmp_path_factory.mktemp("three"))


@pytest.fixture(scope="module")
def pooled(store: str) -> pd.DataFrame:
    """alpha-study's and beta-study's episodes in one frame (as a user might concatenate them)."""
    frames = [load(store, experiment=uid) for uid in UIDS[:2]]
    out = pd.concat(frames, ignore_index=True)
    out.attrs = dict(frames[0].attrs)
    return out


def _refused(caught: pytest.ExceptionInfo[AmbiguousExperimentError], uids: list[str]) -> None:
    assert caught.value.experiments == uids
    assert f"holds {len(uids)} experiments: {', '.join(uids)};" in str(caught.value)
    assert 'experiment="UID"' in str(caught.value) and "-e UID" in str(caught.value)


def test_analyze_refuses_a_frame_of_several_experiments(pooled: pd.DataFrame) -> None:
    with pytest.raises(AmbiguousExperimentError) as caught:
        analyze(pooled)
    _refused(caught, UIDS[:2])
    assert str(caught.value).startswith("the frame holds")
    for read in (lambda: run_table(pooled, Response()), lambda: response_agents(pooled, Response())):
        with pytest.raises(AmbiguousExperimentError):
            read()


@pytest.mark.parametrize("uid", UIDS)
def test_analyze_answers_the_chosen_experiment(store: str, uid: str) -> None:
    frame = load(store, experiment=uid)
    result = analyze(frame)
    assert result.experiment == uid and result.title().startswith(uid)
    assert result.runs == 2 * REPETITIONS
    assert sorted(p.n for p in result.points) == [REPETITIONS, REPETITIONS]  # never another experiment's point 0
    assert {p.levels["length"] for p in result.points} == set(EXPERIMENTS[uid])
    table, _ = run_table(frame, Response())
    assert len(table) == 2 * REPETITIONS


def test_load_scores_takes_experiment_and_refuses_several(store: str) -> None:
    with pytest.raises(AmbiguousExperimentError) as caught:
        load_scores(store, Response())
    _refused(caught, UIDS)
    scores = load_scores(store, Response(), "gamma-study")
    assert set(scores["experiment"]) == {"gamma-study"} and len(scores) == 2 * REPETITIONS
    assert analyze(scores).experiment == "gamma-study"  # the same answer as from the episodes
    assert analyze(scores).points[0].estimate == pytest.approx(
        analyze(load(store, experiment="gamma-study")).points[0].estimate)


def test_curves_take_experiment_and_refuse_several(store: str, tmp_path: Path) -> None:
    with Store(store, read_only=True) as st:
        with pytest.raises(AmbiguousExperimentError) as caught:
            plot_curves(st, tmp_path / "all.png")
        _refused(caught, UIDS)
        assert not (tmp_path / "all.png").exists()
        from xdoe.analysis._curve_sets import store_curves

        curves = store_curves(st, "beta-study")
        assert curves.experiment == "beta-study" and curves.runs == 2 * REPETITIONS
        assert plot_curves(st, tmp_path / "beta.png", experiment="beta-study").is_file()


def test_plot_effects_draws_one_experiment_with_its_analysis(store: str, pooled: pd.DataFrame,
                                                              tmp_path: Path) -> None:
    alpha, beta = (load(store, experiment=uid) for uid in UIDS[:2])
    result = analyze(alpha)
    assert plot_effects(result, alpha, tmp_path / "alpha.png").is_file()
    with pytest.raises(AmbiguousExperimentError):
        plot_effects(result, pooled, tmp_path / "pooled.png")
    with pytest.raises(InputError, match="the analysis answers alpha-study"):
        plot_effects(result, beta, tmp_path / "beta.png")
    assert not (tmp_path / "pooled.png").exists() and not (tmp_path / "beta.png").exists()
