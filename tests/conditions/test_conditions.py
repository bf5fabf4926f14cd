"""The built-in termination conditions, answered on real progress views."""

from __future__ import annotations

import pytest

from xdoe.conditions import (
    AgentObjectiveTerminationCondition,
    Decision,
    EnvironmentTerminationCondition,
    EpisodeProgress,
    MaxEpisodesTerminationCondition,
    MaxStepsTerminationCondition,
    PhaseProgress,
    StepProgress,
    TerminationCondition,
    Verdict,
)


def phase(workers: int = 2, episodes: int = 3) -> PhaseProgress:
    return PhaseProgress(0, "training", "train", workers, episodes, ["a"], [0] * workers)


def test_verdicts_are_ordered_and_the_highest_wins():
    assert Verdict.CONTINUE < Verdict.RESET < Verdict.STOP_PHASE < Verdict.STOP_RUN
    assert max([Verdict.RESET, Verdict.STOP_RUN, Verdict.CONTINUE]) is Verdict.STOP_RUN
    assert Decision is Verdict


def test_base_condition_continues_and_refuses_parameters():
    c = TerminationCondition()
    assert c.step_finished(StepProgress(phase(), 0)) is Verdict.CONTINUE
    with pytest.raises(TypeError, match="unexpected parameters: x"):
        TerminationCondition(x=1)


def test_environment_condition_resets_on_done():
    c = EnvironmentTerminationCondition()
    step = StepProgress(phase(), 0, step=3, done=False)
    assert c.step_finished(step) is Verdict.CONTINUE
    step.done = True
    assert c.step_finished(step) is Verdict.RESET


def test_max_episodes_waits_for_every_worker():
    p = phase(workers=2, episodes=2)
    c = MaxEpisodesTerminationCondition()
    ep = EpisodeProgress(p, 0, 1, 5, {}, {})
    p.episodes_done = [2, 1]
    assert c.episode_finished(ep) is Verdict.CONTINUE
    p.episodes_done = [2, 2]
    assert c.episode_finished(ep) is Verdict.STOP_PHASE


def test_max_steps():
    p = phase()
    c = MaxStepsTerminationCondition(episode_steps=3, phase_steps=10)
    step = StepProgress(p, 0, step=2)
    p.steps = 5
    assert c.step_finished(step) is Verdict.CONTINUE
    step.step = 3
    assert c.step_finished(step) is Verdict.RESET
    p.steps = 10
    assert c.step_finished(step) is Verdict.STOP_PHASE
    with pytest.raises(ValueError, match="episode_steps and/or phase_steps"):
        MaxStepsTerminationCondition()
    with pytest.raises(ValueError, match="positive integer"):
        MaxStepsTerminationCondition(episode_steps=0)


def test_agent_objective_brain_window():
    p = phase()
    c = AgentObjectiveTerminationCondition(learner={"brain_avg3": 2.0})
    c.phase_started(p)
    step = StepProgress(p, 0)
    answers = []
    for value in [1.0, 3.0, 1.0, 3.0, 2.0, 2.0, 2.0, 0.0]:
        step.objectives = {"learner": value, "other": 100.0}
        answers.append(c.step_finished(step))
    # windows: [1,3,1] 1.67; [3,1,3] 2.33 fires and empties; [2,2,2] fires again
    assert answers == [Verdict.CONTINUE] * 3 + [Verdict.RESET] + [Verdict.CONTINUE] * 2 + [
        Verdict.RESET, Verdict.CONTINUE]


def test_agent_objective_phase_window_and_phase_reset():
    p = phase()
    c = AgentObjectiveTerminationCondition(learner={"phase_avg2": 9.0, "brain_avg100": 8.5})
    c.phase_started(p)
    episode = lambda v: EpisodeProgress(p, 0, 0, 10, {"learner": v}, {"learner": v})
    assert c.episode_finished(episode(8.0)) is Verdict.CONTINUE
    assert c.episode_finished(episode(9.5)) is Verdict.CONTINUE  # mean 8.75
    c.phase_started(p)  # windows start empty in every phase
    assert c.episode_finished(episode(10.0)) is Verdict.CONTINUE
    assert c.episode_finished(episode(8.0)) is Verdict.STOP_PHASE  # mean 9.0


@pytest.mark.parametrize("params, message", [
    ({"learner": {"brain_avg": 1.0}}, "expected brain_avgN or phase_avgN"),
    ({"learner": {"phase_avg0": 1.0}}, "expected brain_avgN or phase_avgN"),
    ({"learner": {"brain_avg5": "high"}}, "expected a number"),
    ({"learner": 3.0}, "expected a mapping"),
])
def test_agent_objective_refuses_bad_thresholds(params, message):
    with pytest.raises(ValueError, match=message):
        AgentObjectiveTerminationCondition(**params)
