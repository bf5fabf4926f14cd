"""The step of a worker (:func:`step_function`): the general step with its
shortcuts, and value steps, a worker stepped without the per-step
information objects.

When every component of a phase supports value steps (``docs/plugins.md``,
"Value steps") — one environment whose :meth:`~xdoe.environment.Environment.value_ids`
names its single sensor, actuator and reward, one agent using exactly those,
a muscle, an objective and (in train mode) a brain that declare
``value_steps``, the exact :class:`~xdoe.simulation.VanillaSimController`,
no reward block, and termination conditions that read no environment
states — :func:`value_steppers` gives each worker a :class:`ValueStepper`,
which does what ``Worker.act(0)`` + ``Worker.update()`` do with plain values:
``propose_action_value``, ``update_values``, ``internal_reward_value`` and
``thinking_values`` instead of ``propose_actions``, ``update``,
``internal_reward`` and ``thinking``. Calls, their order, the values and the
stored rows are the same. When an episode ends, :meth:`ValueStepper.materialise`
asks the environment for its last :class:`~xdoe.environment.EnvironmentState`
and fills the agent's pending transition, so that ``Worker.end_episode``
(episode rows, the last transition, truncation) runs unchanged.

A declaration counts only on the class that defines the general method or
below it (:func:`declares`): a subclass that overrides ``propose_actions``,
``thinking``, ``internal_reward`` or ``update`` alone is stepped the general
way. ``XDOE_VALUE_STEPS=0`` in the environment turns value steps off (for
tests and benchmarks that compare both paths).
"""

from __future__ import annotations

import operator
import os
from typing import Any, Callable

from xdoe.conditions import EnvironmentTerminationCondition, TerminationCondition
from xdoe.environment import ActuatorInformation, SensorInformation
from xdoe.errors import RunError
from xdoe.simulation import SimulationController, VanillaSimController

from xdoe.execution._worker import CONTINUE, RESET, Worker, component_error

__all__ = ["ValueStepper", "declares", "episode_function", "overrides", "step_function", "step_verdict", "value_steppers",
           "value_steps_enabled"]

#: the private switch: "0" turns value steps off
_SWITCH = "XDOE_VALUE_STEPS"


def overrides(obj: TerminationCondition, method: str) -> bool:
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
                  agents: int, workers: list[Worker] | None = None) -> Callable[[Worker], int]:
    """A function that runs one step of a worker (``controller.step``) and
    returns the highest ``step_finished`` answer of ``conditions``.

    Two common cases are shortened, with the same calls and answers: a
    :class:`VanillaSimController` of one agent is its body (``act(0)``, then
    ``update()``), and when the only step checks are the built-in
    :class:`EnvironmentTerminationCondition` the answer is ``RESET`` exactly
    when the update reported ``done``, without calling them. When every
    component supports value steps (see the module docstring), each
    of ``workers`` gets a ``ValueStepper`` and the step is its ``step()``.
    """
    checks = [c for c in conditions if overrides(c, "step_finished")]
    step_conditions = [c.step_finished for c in checks]
    done_only = bool(checks) and all(type(c) is EnvironmentTerminationCondition for c in checks)
    if workers and value_steppers(workers, controller, conditions, step_conditions, done_only):
        return _value_step
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


#: ``worker.value_step()``: the bound ``ValueStepper.step`` value_steppers set
_value_step = operator.methodcaller("value_step")


def episode_function(worker: Worker) -> Callable[[Worker], int] | None:
    """For the phase's only active ``worker``: a function that runs its steps
    to the end of its episode in one call (``ValueStepper.episode``), when it
    uses value steps and its only step check is ``done``; else ``None``.
    The phase loop would call the step function until it answers ``RESET``,
    with nothing in between: the same calls, the same state."""
    stepper = worker.stepper
    if stepper is None or not stepper.done_only:
        return None
    return _value_episode


_value_episode = operator.methodcaller("value_episode")


def value_steps_enabled() -> bool:
    """False when ``XDOE_VALUE_STEPS=0`` (tests and benchmarks compare both paths)."""
    return os.environ.get(_SWITCH, "1") != "0"


def _defining(cls: type, name: str) -> type | None:
    for klass in cls.__mro__:
        if name in vars(klass):
            return klass
    return None


def declares(obj: Any, general: str, *lean: str, flag: str | None = "value_steps") -> bool:
    """Whether ``obj`` supports value steps for its method ``general``: its
    ``flag`` attribute is ``True`` (unless ``flag`` is ``None``) and each
    method in ``lean`` is defined on the class defining ``general`` or on a
    subclass of it (none of them set on the instance)."""
    if flag is not None and getattr(obj, flag, False) is not True:
        return False
    own = getattr(obj, "__dict__", {})
    if general in own or any(name in own for name in lean):
        return False
    cls = type(obj)
    base = _defining(cls, general)
    if base is None:
        return False
    for name in lean:
        klass = _defining(cls, name)
        if klass is None or not issubclass(klass, base):
            return False
    return True


def _states_free(condition: TerminationCondition) -> bool:
    """The condition's ``step_finished`` reads no ``StepProgress.states``."""
    cls = type(condition)
    checks = _defining(cls, "step_finished")
    if checks is TerminationCondition or checks is None:
        return True
    declared = _defining(cls, "needs_states")
    return condition.needs_states is False and declared is not None and issubclass(declared, checks) \
        and "needs_states" not in getattr(condition, "__dict__", {})


def _ids(worker: Worker) -> tuple[str, str, str] | None:
    """The environment's value ids when worker's phase can use value steps
    (apart from the conditions and the controller)."""
    if len(worker.envs) != 1 or len(worker.agents) != 1 or worker.has_reward_blocks or worker.need_map:
        return None
    env, agent = worker.envs[0], worker.agents[0]
    if not declares(env, "update", "value_ids", "update_values", "last_state", flag=None):
        return None
    ids = env.value_ids()
    if ids is None:
        return None
    sensor_id, actuator_id, _ = ids
    sensors = worker.env_sensors[0]
    if agent.sensor_ids != [sensor_id] or [a.uid for a in agent.templates] != [actuator_id] \
            or agent.sensor_env != 0 or agent.reward_envs != [0] or len(sensors) != 1 \
            or sensors[0].uid != sensor_id:
        return None
    if not declares(agent.muscle, "propose_actions", "propose_action_value") \
            or not declares(agent.objective, "internal_reward", "internal_reward_value"):
        return None
    if worker.train and not declares(agent.brain, "thinking", "thinking_values"):
        return None
    return ids


def value_steppers(workers: list[Worker], controller: SimulationController,
                   conditions: list[TerminationCondition], step_conditions: list[Any],
                   done_only: bool) -> "list[ValueStepper] | None":
    """One :class:`ValueStepper` per worker (also set as ``worker.stepper``)
    when the phase can use value steps, else ``None`` (and nothing set)."""
    if not workers or not value_steps_enabled() or type(controller) is not VanillaSimController:
        return None
    if not all(_states_free(c) for c in conditions):
        return None
    found = [_ids(worker) for worker in workers]
    if any(ids is None for ids in found):
        return None
    steppers = [ValueStepper(w, ids, step_conditions, done_only) for w, ids in zip(workers, found)]  # type: ignore[arg-type]
    for worker, stepper in zip(workers, steppers):
        worker.stepper = stepper
        worker.value_step = stepper.step
        worker.value_episode = stepper.episode
    return steppers


class ValueStepper:
    """``act(0)`` + ``update()`` + the verdict of one worker, with values
    (see the module docstring)."""

    __slots__ = ("worker", "agent", "sensor", "actuator", "reward_id", "uid", "low", "high", "space",
                 "step_conditions", "done_only", "obs", "t_obs", "t_action", "t_reward",
                 "t_objective", "t_step", "env", "propose", "internal", "thinking", "progress", "write_row")

    def __init__(self, worker: Worker, ids: tuple[str, str, str], step_conditions: list[Any],
                 done_only: bool) -> None:
        self.worker = worker
        self.agent = agent = worker.agents[0]
        self.sensor: SensorInformation = worker.env_sensors[0][0]
        self.actuator: ActuatorInformation = agent.templates[0]
        self.reward_id = ids[2]
        self.uid = worker.env_uids[0]
        self.space, self.low, self.high = agent.spaces[self.actuator.uid]
        self.step_conditions = step_conditions
        self.done_only = done_only
        self.progress = worker.progress
        # bound once: the same objects all phase (the environment: see step)
        self.env = worker.envs[0]
        self.propose = agent.muscle.propose_action_value
        self.internal = agent.objective.internal_reward_value
        self.thinking = agent.brain.thinking_values if worker.train else None
        #: RunRecorder.value_row_writer's function of this worker's rows (a
        #: worker process's stand-in recorder has only step)
        writer = getattr(worker.recorder, "value_row_writer", None)
        self.write_row = self._record if writer is None else writer(
            worker.index, agent.name, self.sensor.uid, self.actuator.uid, self.reward_id)
        self.obs: Any = None
        self.t_obs: Any = None
        self.t_action: Any = None
        self.t_reward = 0.0
        self.t_objective = 0.0
        self.t_step = 0

    def step(self) -> int:
        """One step of the worker; returns the verdict of its step checks."""
        return self._run(False)

    def episode(self) -> int:
        """Steps until the episode ends (``done_only``: the verdict is then
        ``RESET``); for the phase's only active worker, whose steps follow
        each other with nothing in between. Returns ``RESET``."""
        return self._run(True)

    def _run(self, whole: bool) -> int:
        """One step, or (``whole``) every step to the episode's end. The
        state per step lives in locals and is written back when the loop
        ends, also by an exception (the same state as after each step's
        writes); with step checks beyond ``done`` the progress is written
        before they are asked, every step."""
        worker, agent = self.worker, self.agent
        step = worker.step
        if step == 0:  # a new episode: the observation of start_environment's baseline
            obs = worker.env_sensors[0][0].value
            self.env = worker.envs[0]  # re-made when its parameters are drawn anew
        else:
            obs = self.obs
        update_values, propose, internal, thinking = self.env.update_values, self.propose, self.internal, \
            self.thinking
        low, high = self.low, self.high
        policy = worker.policy  # StepPolicy.wants(step, False), inlined below
        every = 0 if policy is None else policy.every
        write_row, episode = self.write_row, worker.episode
        done_only = self.done_only
        progress = self.progress
        pending = agent.pending
        t_obs, t_action, t_reward, t_step, t_objective = self.t_obs, self.t_action, self.t_reward, \
            self.t_step, self.t_objective
        ep_reward, ep_objective = agent.ep_reward, agent.ep_objective
        first, objective, done = step, None, worker.done
        check = worker.observation_check
        try:
            while True:
                if pending:  # Worker._complete of the previous transition (not the episode's last)
                    pending = False
                    if thinking is not None:
                        try:
                            update = thinking(t_obs, t_action, t_objective, obs, False, False)
                        except Exception as exc:
                            raise component_error(f"agent {agent.name!r}: brain.thinking_values", exc) from exc
                        if update is not None:
                            self._send(update)
                    if every and t_step % every == 0:
                        write_row(episode, t_step, t_obs, t_action, t_reward, t_objective)
                try:
                    action = propose(obs)
                except Exception as exc:
                    raise component_error(f"agent {agent.name!r}: muscle.propose_action_value", exc) from exc
                if action is not None:
                    if type(action) is int and low is not None:  # Discrete and a Python int
                        if not low <= action < high:
                            self._outside(action)
                    elif not self.space.contains(action):
                        self._outside(action)
                try:
                    obs2, reward, terminated, truncated = update_values(action)
                except Exception as exc:
                    raise component_error(f"environment {self.uid!r}: update_values", exc) from exc
                done = terminated or truncated
                step += 1
                if check is not None and check.due(step):  # issue 25 hook
                    check.value(self.sensor.uid, self.sensor.space, obs2, episode, step)
                try:
                    objective = float(internal(reward))
                except Exception as exc:
                    raise component_error(f"agent {agent.name!r}: objective.internal_reward_value", exc) from exc
                ep_reward += 0.0 + reward  # Worker.update's sum of the rewards
                ep_objective += objective
                pending = True
                t_obs, t_action, t_reward, t_step = obs, action, reward, step - 1
                t_objective = 0.0 + objective
                obs = obs2
                if done_only:
                    if done:
                        return RESET
                    if not whole:
                        return CONTINUE
                    continue
                # the progress the step checks read, as after Worker.update
                worker.phase_progress.steps += step - first
                first = worker.step = progress.step = step
                worker.objectives[agent.name] = objective
                progress.done = worker.done = done
                verdict = step_verdict(self.step_conditions, progress)
                if not whole or verdict >= RESET:
                    return verdict
        finally:
            worker.phase_progress.steps += step - first
            worker.step = step
            agent.pending = pending
            agent.ep_reward, agent.ep_objective = ep_reward, ep_objective
            if objective is not None:
                worker.objectives[agent.name] = objective
            self.t_obs, self.t_action, self.t_reward, self.t_step = t_obs, t_action, t_reward, t_step
            self.t_objective = t_objective
            self.obs = obs
            progress.step = step
            progress.done = worker.done = done

    def _outside(self, action: Any) -> None:
        raise RunError(f"agent {self.agent.name!r}: value {action!r} for actuator {self.actuator.uid!r} "
                       f"is outside its space {self.space}")

    def _send(self, update: Any) -> None:
        """The brain's update to every muscle of the agent (all workers)."""
        agent = self.agent
        for muscle in agent.muscles:
            try:
                muscle.update(update)
            except Exception as exc:
                raise component_error(f"agent {agent.name!r}: muscle.update", exc) from exc

    def _record(self, episode: int, t_step: int, obs: Any, action: Any, reward: Any, objective: float) -> None:
        """The step row of the pending transition (not done) through the
        recorder's general ``step`` (a worker process's stand-in recorder);
        a :class:`~xdoe.store.RunRecorder` writes it with its
        ``value_row_writer`` function instead."""
        worker = self.worker
        worker.recorder.step(  # type: ignore[union-attr]
            worker.index, episode, t_step, self.agent.name, {self.sensor.uid: obs},
            {self.actuator.uid: action}, {self.reward_id: reward}, objective, False,
        )

    def record_last(self, agent: Any, rewards: list[Any], done: bool, terminated: bool = False,
                    truncated: bool = False, cut_by: str | None = None) -> bool:
        """For ``Worker._complete`` of the episode's last transition (after
        :meth:`materialise`): write its step row through the recorder's row
        writer when the row has exactly this stepper's sensor, actuator and
        reward (the row ``recorder.step`` would write from them); ``False``
        (nothing written) otherwise, or without a ``RunRecorder``."""
        write_row = self.write_row
        if write_row == self._record:  # a worker process's stand-in recorder
            return False
        sensors, actions = agent.t_sensors, agent.t_actions
        if len(sensors) != 1 or len(actions) != 1 or len(rewards) != 1 or sensors[0].uid != self.sensor.uid \
                or actions[0].uid != self.actuator.uid or rewards[0].uid != self.reward_id:
            return False
        write_row(self.worker.episode, agent.t_step, sensors[0].value, actions[0].value, rewards[0].value,
                  agent.t_objective, done, terminated, truncated, cut_by)
        return True

    def materialise(self) -> None:
        """Before ``Worker.end_episode``: the environment's last state as the
        worker's state and sensors, and the pending transition as objects."""
        worker, agent = self.worker, self.agent
        if worker.step == 0:
            return  # nothing stepped this episode: the worker holds start_environment's sensors
        try:
            state = worker.envs[0].last_state()
        except Exception as exc:
            raise component_error(f"environment {self.uid!r}: last_state", exc) from exc
        worker.states[0] = worker.progress.states[0] = state
        worker.env_sensors[0] = state.sensors
        if agent.pending:
            sensor, actuator = self.sensor, self.actuator
            agent.t_sensors = [SensorInformation(sensor.uid, sensor.space, self.t_obs)]
            agent.t_actions = [ActuatorInformation(actuator.uid, actuator.space, self.t_action)]
            agent.t_rewards = state.rewards
            agent.t_objective = self.t_objective
            agent.t_step = self.t_step
            agent.t_updates = 1
            agent.t_extras = agent.muscle.extras
