"""The phase's one episode loop and its hooks (issue 34.3): every hook hears
of the phase's start, each episode end and the phase's end, in order; only
hooks that override ``on_step`` are called, after each step that did not
end an episode, and a step hook's
``STOP_PHASE`` stops the phase (the episode it cut is recorded truncated)."""

from __future__ import annotations

from runbuilders import counting_phase, run_document

from xdoe.conditions import Verdict
from xdoe.execution import load_plan
from xdoe.execution._events import PhaseResult
from xdoe.execution._hooks import EpisodeEnd, Hook, episode_hooks, step_hooks
from xdoe.execution._phase import PhaseRuntime


class _Log(Hook):
    def __init__(self) -> None:
        self.events: list[tuple] = []

    def on_phase_start(self, runner) -> None:
        self.events.append(("start", runner.progress.steps))

    def on_episode_end(self, end: EpisodeEnd) -> None:
        self.events.append(("episode", end.worker, end.next_episode, end.episode.steps, end.truncated, end.cut_by))

    def on_phase_end(self, result: PhaseResult) -> None:
        self.events.append(("end", result.episodes, result.steps))


class _StopAfter(Hook):
    def __init__(self, steps: int) -> None:
        self.steps, self.seen = steps, 0

    def on_step(self, worker) -> int:
        self.seen += 1
        return Verdict.STOP_PHASE if self.seen >= self.steps else Verdict.CONTINUE


def _runtime(episodes: int, length: int) -> PhaseRuntime:
    plan = load_plan(run_document(("training", counting_phase(episodes=episodes, length=length))))
    return PhaseRuntime(plan, plan.phases[0], {}, None, None)


def test_hooks_hear_the_phase_start_every_episode_end_and_the_phase_end_in_order() -> None:
    log = _Log()
    assert step_hooks([log]) == [] and len(episode_hooks([log])) == 1  # no per-step call: it needs none
    result = PhaseResult(0, "training", "train")
    assert _runtime(3, 4).run(result, [log]) == Verdict.CONTINUE
    assert log.events == [("start", 0), ("episode", 0, 1, 4, False, None), ("episode", 0, 2, 4, False, None),
                          ("episode", 0, 3, 4, False, None), ("end", 3, 12)]


def test_a_step_hook_is_called_after_every_step_and_its_stop_ends_the_phase() -> None:
    # called after the steps that did not end an episode: 3 of the first 4-step episode, then
    # the second episode's first three; the sixth call stops it after its third step
    log, stop = _Log(), _StopAfter(6)
    result = PhaseResult(0, "training", "train")
    assert _runtime(3, 4).run(result, [stop, log]) == Verdict.STOP_PHASE
    assert stop.seen == 6
    assert log.events[1:] == [("episode", 0, 1, 4, False, None), ("episode", 0, 2, 3, True, "stop"),
                              ("end", 2, 7)]
    assert result.stopped_by == "condition"
