"""The step of a worker (:func:`step_function`): the phase's simulation
controller's ``step`` followed by the phase's ``step_finished`` checks; and
the lockstep round of a ``worker: N`` phase whose muscles act for all its
workers in one pass (:func:`lockstep_functions`: every worker acts, agent by
agent in one ``Muscle.propose_batch`` each, then each worker's update and
checks).

There is one step, value-first (``Worker.act`` and ``Worker.update``): every
environment is stepped through
:meth:`~xdoe.environment.Environment.update_values`, every agent through
``Muscle.propose_values``, ``Objective.internal_reward_values`` and (train
mode) ``Brain.thinking_values``; a plugin that writes the object form of a
method gets the value form derived by its base class. The two shortcuts
below make the same calls with the same answers: a
:class:`~xdoe.simulation.VanillaSimController` of one agent is its body
(``act(0)``, then ``update()``), and when the only step checks are the
built-in :class:`~xdoe.conditions.EnvironmentTerminationCondition` the answer
is ``RESET`` exactly when the update reported ``done``, without calling them.

Where both hold and one worker is active, :func:`episode_function` runs the
whole episode as one loop (``Worker.run_episode``): the episode of that
shape, with the step's state in locals. It is the implementation of that
episode, beside ``act``/``update``, which implement the
:class:`~xdoe.simulation.SimulationWorker` interface every other controller
calls; tests hold the two to the same calls, episodes and errors
(``tests/execution/test_episode_loop.py``).
"""

from __future__ import annotations

from typing import Any, Callable

from xdoe.conditions import (AgentObjectiveTerminationCondition, EnvironmentTerminationCondition,
                             MaxEpisodesTerminationCondition, MaxStepsTerminationCondition, TerminationCondition)
from xdoe.simulation import SimulationController, VanillaSimController

from xdoe.execution._agent_runtime import batches
from xdoe.errors import RunError
from xdoe.execution._worker import COMPLETE, CONTINUE, RESET, Worker, component_error

__all__ = ["act_together", "episode_function", "lockstep_functions", "overrides", "reads_progress", "reads_states",
           "step_function", "step_verdict"]

#: the built-in conditions, whose ``step_finished`` reads no ``StepProgress.states``
_STATELESS = tuple(cls.step_finished for cls in (
    TerminationCondition, EnvironmentTerminationCondition, MaxEpisodesTerminationCondition,
    MaxStepsTerminationCondition, AgentObjectiveTerminationCondition))


def reads_states(conditions: list[TerminationCondition]) -> bool:
    """Whether one of ``conditions`` may read ``StepProgress.states`` (then
    the worker reads every environment's state at every step): any whose
    ``step_finished`` is not one of the built-ins' (which read none)."""
    for condition in conditions:
        if "step_finished" in getattr(condition, "__dict__", {}):
            return True
        if not any(type(condition).step_finished is known for known in _STATELESS):
            return True
    return False


def reads_progress(conditions: list[TerminationCondition]) -> bool:
    """Whether the phase's steps ask a condition's ``step_finished`` (then the
    worker writes each update's ``step``, ``done`` and ``objectives`` into its
    :class:`~xdoe.conditions.StepProgress`, which only ``step_finished``
    reads): some condition overrides it and not every one that does is the
    built-in :class:`~xdoe.conditions.EnvironmentTerminationCondition`, whose
    answer :func:`step_function` takes from the update's ``done`` without
    calling it."""
    checks = [c for c in conditions if overrides(c, "step_finished")]
    return bool(checks) and not all(type(c) is EnvironmentTerminationCondition for c in checks)


def overrides(obj: TerminationCondition, method: str) -> bool:
    """Whether ``obj``'s class overrides ``TerminationCondition.<method>``
    (the defaults answer ``CONTINUE`` and are not called)."""
    return getattr(type(obj), method) is not getattr(TerminationCondition, method)


def step_verdict(step_conditions: list[Any], progress: Any) -> int:
    """The highest answer of the phase's ``step_finished`` checks (CONTINUE
    when none); the check that gave it is left in ``progress.decided_by``
    (only when some check answered above CONTINUE: no cost on other steps)."""
    verdict = CONTINUE
    for check in step_conditions:
        answer = check(progress)
        if answer > verdict:
            verdict = answer
            progress.decided_by = check
    return verdict


def step_function(controller: SimulationController, conditions: list[TerminationCondition],
                  agents: int) -> Callable[[Worker], int]:
    """A function that runs one step of a worker (``controller.step``) and
    returns the highest ``step_finished`` answer of ``conditions`` (see the
    module docstring for its two shortcuts)."""
    checks = [c for c in conditions if overrides(c, "step_finished")]
    step_conditions = [c.step_finished for c in checks]
    done_only = bool(checks) and all(type(c) is EnvironmentTerminationCondition for c in checks)
    if type(controller) is VanillaSimController and agents == 1:
        if done_only:
            def step(worker: Worker) -> int:
                worker.act(0)
                return RESET if worker.update() else CONTINUE
        else:
            def step(worker: Worker) -> int:
                worker.act(0)
                worker.update()
                return step_verdict(step_conditions, worker.progress)
    else:
        controller_step = controller.step
        if done_only:
            def step(worker: Worker) -> int:
                controller_step(worker)
                return RESET if worker.done else CONTINUE
        else:
            def step(worker: Worker) -> int:
                controller_step(worker)
                return step_verdict(step_conditions, worker.progress)
    return step


def episode_function(controller: SimulationController, conditions: list[TerminationCondition],
                     agents: int) -> Callable[[Worker], int] | None:
    """For the phase's only active worker: a function that runs its steps to
    the end of its episode in one call and returns ``RESET``, when the step is
    :func:`step_function`'s first shortcut (one agent, the vanilla controller,
    ``done`` the only check); else ``None``. The phase loop would call the step
    function until it answers ``RESET``, with nothing in between: the same
    calls, the same state. The episode runs as ``Worker.run_episode``'s one
    loop when it has that loop's shape (one environment, see there), else as
    ``act(0)``, ``update()`` until ``done``."""
    checks = [c for c in conditions if overrides(c, "step_finished")]
    if type(controller) is not VanillaSimController or agents != 1 or not checks \
            or not all(type(c) is EnvironmentTerminationCondition for c in checks):
        return None

    def episode(worker: Worker) -> int:
        if worker.run_episode():
            return RESET
        act, update = worker.act, worker.update
        while True:
            act(0)
            if update():
                return RESET
    return episode


def lockstep_functions(controller: SimulationController, conditions: list[TerminationCondition],
                       muscles: list[type]) -> tuple[Callable[[list[Worker]], None], Callable[[Worker], int]] | None:
    """The two halves of a lockstep round of the workers of a phase in this
    process, when the controller is :class:`~xdoe.simulation.VanillaSimController`
    and the muscle class of some agent (``muscles``: one per agent, in
    document order) acts for several workers in one pass
    (:meth:`~xdoe.agent.Muscle.propose_batch` overridden); else ``None``
    (each worker then takes its whole step at its turn, :func:`step_function`).

    Returns ``(act, step)``: ``act(workers)`` lets every agent act in every
    worker, agent by agent, one :func:`~xdoe.execution._worker.act_together`
    each (the vanilla controller's ``act(i)`` for every ``i``, across the
    workers); ``step(worker)`` is the rest of that worker's step: its update
    and the highest ``step_finished`` answer of ``conditions``, as
    :func:`step_function` answers it."""
    if type(controller) is not VanillaSimController or not any(batches(cls) for cls in muscles):
        return None
    checks = [c for c in conditions if overrides(c, "step_finished")]
    step_conditions = [c.step_finished for c in checks]
    agents = range(len(muscles))

    def act(workers: list[Worker]) -> None:
        for index in agents:
            act_together(workers, index)

    if checks and all(type(c) is EnvironmentTerminationCondition for c in checks):
        def step(worker: Worker) -> int:
            return RESET if worker.update() else CONTINUE
    else:
        def step(worker: Worker) -> int:
            worker.update()
            return step_verdict(step_conditions, worker.progress)
    return act, step


def act_together(workers: list[Worker], index: int) -> None:
    """Agent number ``index`` acts in every one of ``workers`` (a lockstep
    round, :func:`lockstep_functions`) with one call
    of its muscle class's :meth:`~xdoe.agent.Muscle.propose_batch`: first
    each worker completes the agent's previous transition (in train mode its
    brain learns from it, so every muscle acts on what the brain knows after
    the whole previous round, as Stable-Baselines3's vectorised environments
    do), then the muscles of the workers where the agent is still in the
    episode propose together, then each worker checks and keeps its action
    (``Worker.act``, split around one proposal for all).

    Raises:
        RunError: a component failed, the muscle class returned a list of
            another length, or an action is outside its actuator's space.
    """
    acting: list[Worker] = []
    observations: list[Any] = []
    for worker in workers:
        agent = worker.agents[index]
        if agent.left is not None:  # left the episode (PettingZoo agents): nothing to do
            continue
        observation = worker.env_obs[agent.sensor_env] if agent.sensor_env >= 0 else worker._observation(agent)
        if agent.transition is not None:
            worker.act(index, COMPLETE)
        acting.append(worker)
        observations.append(observation)
    if not acting:
        return
    muscles = [worker.agents[index].muscle for worker in acting]
    first = acting[0].agents[index]
    cls = type(muscles[0])
    try:
        actions = cls.propose_batch(muscles, observations)
    except RunError:
        raise
    except Exception as exc:
        form = "propose_batch" if batches(cls) else first.propose_form
        raise component_error(f"agent {first.name!r}: muscle.{form}", exc) from exc
    if len(actions) != len(acting):
        raise RunError(f"agent {first.name!r}: {cls.__name__}.propose_batch returned {len(actions)} "
                       f"actions for {len(acting)} muscles")
    for worker, action in zip(acting, actions):  # transitions completed above: act keeps the action
        worker.act(index, action)
