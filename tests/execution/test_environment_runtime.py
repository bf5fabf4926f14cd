"""A worker keeps an environment's :class:`EnvironmentRuntime` from one
episode to the next while the environment object and its actuators stay
(issue 35.1: no new runtime per episode), and makes a new one when either
changes (an environment re-created by its parameter samplers, a baseline
with other actuators)."""

from __future__ import annotations

from runbuilders import counting_phase, run_document

from xdoe.environment import ActuatorInformation, EnvironmentBaseline
from xdoe.execution import load_plan
from xdoe.execution._events import PhaseResult
from xdoe.execution._phase import PhaseRuntime


def _runtime(episodes: int = 3) -> PhaseRuntime:
    plan = load_plan(run_document(("training", counting_phase(episodes=episodes, length=4))))
    return PhaseRuntime(plan, plan.phases[0], {}, None, None)


def test_the_runtime_is_kept_across_episodes_and_its_state_restarts() -> None:
    phase = _runtime(3)
    worker = phase.workers[0]
    first = worker.env_runtimes[0]
    result = PhaseResult(0, "training", "train")
    phase.run(result)
    assert result.episodes == 3 and result.steps == 12
    assert worker.env_runtimes[0] is first
    assert first.form == "update" and first.state is not None  # the last update's state, for the episode's end
    worker.start_episode(phase.controller)
    assert worker.env_runtimes[0] is first and first.state is None  # no state before the episode's first update


def test_a_new_environment_or_other_actuators_get_a_new_runtime() -> None:
    phase = _runtime(1)
    worker = phase.workers[0]
    first = worker.env_runtimes[0]
    env = worker.envs[0]
    baseline = env.start_environment()
    worker.set_baseline(0, baseline)
    assert worker.env_runtimes[0] is first
    other = [ActuatorInformation(a.uid + "2", a.space) for a in baseline.actuators]
    worker.set_baseline(0, EnvironmentBaseline(baseline.sensors, other))
    second = worker.env_runtimes[0]
    assert second is not first and second.actuators == tuple((a.uid, a.space) for a in other)
    assert worker.env_steps[0][1:3] == (second.update_values, other[0].uid)  # what update() reads of it, bound anew
    assert worker.action_env == {a.uid: 0 for a in other}  # actions are routed to its actuators now
    replacement = type(env)(uid=env.uid, seed=1, length=4)
    worker.envs[0] = replacement
    worker.set_baseline(0, replacement.start_environment())
    assert worker.env_runtimes[0] is not second and worker.env_runtimes[0].env is replacement
