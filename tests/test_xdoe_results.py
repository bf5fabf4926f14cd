"""xdoe.results reads ONE experiment (issue 32 item 6): a store holding
several is refused without ``experiment=``, as ``xrun`` refuses it without
``-e UID``; a store of one experiment reads as before."""

from __future__ import annotations

import pickle

import pandas as pd
import pytest

import xdoe.errors as errors
from several_experiments import EPISODES, EXPERIMENTS, REPETITIONS, build_store
from xdoe.errors import AmbiguousExperimentError, InputError
from xdoe.results import experiment_label, frame_experiment, load, single_experiment
from xdoe.store import Store

UIDS = sorted(EXPERIMENTS)
RUNS = 2 * REPETITIONS  # per experiment


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """``{"three": url, "one": url}``: a store of three experiments, one of alpha-study alone."""
    root = tmp_path_factory.mktemp("results")
    return {"three": build_store(root / "three"),
            "one": build_store(root / "one", {"alpha-study": EXPERIMENTS["alpha-study"]})}


def test_the_error_is_bad_input_listing_the_experiments_and_the_way_out() -> None:
    assert "AmbiguousExperimentError" in errors.__all__
    assert issubclass(AmbiguousExperimentError, InputError)  # exit 2 at the command line
    error = AmbiguousExperimentError(["b", "a", "c"], "store sqlite:///x.sqlite")
    assert error.experiments == ["a", "b", "c"]
    assert str(error) == ('store sqlite:///x.sqlite holds 3 experiments: a, b, c; choose one with '
                          'experiment="UID" (e.g. experiment="a"; on the command line: -e UID)')
    again = pickle.loads(pickle.dumps(error))  # crosses process pools
    assert type(again) is AmbiguousExperimentError and again.experiments == error.experiments
    assert str(again) == str(error)
    many = AmbiguousExperimentError([f"e{i:02d}" for i in range(25)])
    assert len(many.experiments) == 25 and "e19 and 5 more;" in str(many) and "e20" not in str(many)


def test_load_refuses_a_store_of_several_experiments(stores: dict[str, str]) -> None:
    with pytest.raises(AmbiguousExperimentError) as caught:
        load(stores["three"])
    assert caught.value.experiments == UIDS
    message = str(caught.value)
    assert message.startswith(f"store {stores['three']} holds 3 experiments: alpha-study, beta-study, gamma-study;")
    assert 'experiment="UID"' in message and "-e UID" in message
    with Store(stores["three"], read_only=True) as store:  # an open store the same
        with pytest.raises(AmbiguousExperimentError):
            load(store)
        with pytest.raises(AmbiguousExperimentError):
            single_experiment(store, None)
        assert single_experiment(store, "beta-study") == "beta-study"


@pytest.mark.parametrize("uid", UIDS)
def test_load_with_experiment_reads_that_one(stores: dict[str, str], uid: str) -> None:
    frame = load(stores["three"], experiment=uid)
    assert set(frame["experiment"]) == {uid} and frame_experiment(frame) == uid
    assert frame["run"].nunique() == RUNS and len(frame) == RUNS * EPISODES
    assert sorted(frame["length"].unique()) == EXPERIMENTS[uid]
    assert experiment_label(frame) == uid


def test_a_store_of_one_experiment_reads_as_before(stores: dict[str, str]) -> None:
    frame = load(stores["one"])
    assert set(frame["experiment"]) == {"alpha-study"} and frame["run"].nunique() == RUNS
    pd.testing.assert_frame_equal(frame, load(stores["one"], experiment="alpha-study"))
    with pytest.raises(InputError, match="no experiment|not in"):
        load(stores["one"], experiment="beta-study")


def test_frame_experiment_refuses_a_frame_of_several(stores: dict[str, str]) -> None:
    frames = [load(stores["three"], experiment=uid) for uid in UIDS[:2]]
    both = pd.concat(frames, ignore_index=True)
    with pytest.raises(AmbiguousExperimentError) as caught:
        frame_experiment(both)
    assert caught.value.experiments == UIDS[:2]
    assert str(caught.value).startswith("the frame holds 2 experiments: alpha-study, beta-study;")
    assert 'experiment="UID"' in str(caught.value)
    assert frame_experiment(both[both["experiment"] == "beta-study"]) == "beta-study"
    assert frame_experiment(pd.DataFrame({"run": ["r"]})) is None  # no column: nothing names one
    assert frame_experiment(pd.DataFrame({"experiment": [None, None]})) is None
