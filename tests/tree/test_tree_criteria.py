"""Health criteria."""

from __future__ import annotations

import pytest

from xdoe.errors import InputError
from xdoe.tree import ImprovementCriterion, SessionEpisodes, ThresholdCriterion, make_criterion


def _episodes(train, test):
    return SessionEpisodes([("training", "train"), ("testing", "test")],
                           {("training", "a"): list(train), ("testing", "a"): list(test)})


def test_improvement_measures_the_last_test_episodes() -> None:
    crit = ImprovementCriterion(delta=1.0, last=2)
    episodes = _episodes([0, 0, 0], [100, 3, 5])
    assert crit.measure(episodes) == 4.0
    assert crit.evaluate(episodes, None).healthy  # a root
    assert crit.evaluate(episodes, 3.0).healthy
    assessment = crit.evaluate(episodes, 3.5)
    assert not assessment.healthy and "needs a rise of 1" in assessment.reason
    assert not ImprovementCriterion(last=2).evaluate(episodes, 4.0).healthy  # no rise: dead
    assert ImprovementCriterion(phase="training").measure(episodes) == 0.0


def test_threshold_and_missing_episodes() -> None:
    episodes = _episodes([1], [7, 9])
    assert ThresholdCriterion(threshold=8).evaluate(episodes, None).healthy
    assert not ThresholdCriterion(threshold=7.5, above=False).evaluate(episodes, None).healthy
    assessment = ThresholdCriterion(threshold=0, agent="nobody").evaluate(episodes, None)
    assert not assessment.healthy and assessment.metric is None


def test_make_criterion_names_and_errors() -> None:
    assert isinstance(make_criterion({"name": "xdoe.tree:ThresholdCriterion", "params": {"threshold": 1}}),
                      ThresholdCriterion)
    with pytest.raises(InputError, match="did you mean 'ImprovementCriterion'"):
        make_criterion({"name": "ImprovmentCriterion"})
    with pytest.raises(InputError, match="criterion.params"):
        make_criterion({"name": "ImprovementCriterion", "params": {"bogus": 1}})
    with pytest.raises(InputError, match="delta"):
        ImprovementCriterion(delta=-1)


def test_a_criterion_is_answered_by_an_assessment_and_the_old_name_still_imports() -> None:
    import xdoe.conditions
    import xdoe.tree

    assessment = ThresholdCriterion(threshold=8).evaluate(_episodes([1], [7, 9]), None)
    assert type(assessment) is xdoe.tree.Assessment and "Verdict" not in xdoe.tree.__all__
    with pytest.warns(DeprecationWarning, match="now xdoe.tree.Assessment"):
        from xdoe.tree import Verdict  # a criterion written before issue 23.7
    assert Verdict is xdoe.tree.Assessment and Verdict is not xdoe.conditions.Verdict
    with pytest.raises(AttributeError):
        xdoe.tree.NoSuchName  # noqa: B018


def test_the_reason_says_what_the_metric_is() -> None:
    """A node's metric named nothing (``metric -0.3 · root``): in a game of two
    agents it is one agent's mean objective, over a window of one phase."""
    episodes = SessionEpisodes([("training", "train"), ("testing", "test")],
                               {("testing", "learner"): [1.0, -1.0, 0.0], ("testing", "random"): [-1.0, 1.0, 0.0]})
    root = ImprovementCriterion().evaluate(episodes, None)
    assert root.reason == "root · mean objective of learner over the last 3 episode(s) of phase testing"
    child = ImprovementCriterion(last=2, agent="random").evaluate(episodes, 0.0)
    assert child.metric == 0.5
    assert child.reason.endswith("· mean objective of random over the last 2 episode(s) of phase testing")
