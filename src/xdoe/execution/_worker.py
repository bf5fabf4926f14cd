"""One worker of a phase at run time: its environments, the agents' muscles,
the step (act, update the environments, complete the experiences) and the
episode bookkeeping. Driven by :mod:`xdoe.execution._runner`."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from xdoe._cuts import CUT_CONDITION, CUT_ENVIRONMENT, CUT_STEP_BUDGET, CUT_STOP
from xdoe.agent import Experience
from xdoe.conditions import EpisodeProgress, PhaseProgress, StepProgress, Verdict
from xdoe.environment import (ActuatorInformation, Environment, EnvironmentState, Reward, SensorInformation,
                              observation_check)
from xdoe.errors import RunError
from xdoe.execution._agent_runtime import AgentRuntime, own_rewards, sum_rewards
from xdoe.execution._plan import PhasePlan
from xdoe.simulation import SimulationController

if TYPE_CHECKING:
    from xdoe.store import RunRecorder


CONTINUE, RESET, STOP_PHASE, STOP_RUN = (
    Verdict.CONTINUE, Verdict.RESET, Verdict.STOP_PHASE, Verdict.STOP_RUN)

__all__ = ["AgentRuntime", "Worker", "component_error", "cut_cause", "CONTINUE", "RESET", "STOP_PHASE",
           "STOP_RUN"]


def component_error(where: str, exc: BaseException) -> RunError:
    err = RunError(f"{where} raised {type(exc).__name__}: {exc}")
    err.__cause__ = exc
    return err


def cut_cause(worker: "Worker", verdict: int) -> str | None:
    """Why ``worker``'s episode ended at a step whose verdict was ``verdict``
    (``RESET`` or above): ``None`` when one of its environments reported
    ``done`` (the environment ended it: terminated, or truncated by its own
    time limit, told apart per agent by :meth:`Worker.end_episode`); else
    the cut a condition made (:mod:`xdoe._cuts`): ``step_budget`` for a
    :class:`~xdoe.conditions.MaxStepsTerminationCondition` whose
    ``phase_steps`` ran out, ``stop`` for another ``STOP_PHASE``/``STOP_RUN``,
    the condition's class name for a ``RESET``."""
    if worker.done:
        return None
    check = worker.progress.decided_by
    condition = getattr(check, "__self__", None)
    if verdict >= STOP_PHASE:
        from xdoe.conditions import MaxStepsTerminationCondition

        if isinstance(condition, MaxStepsTerminationCondition) and condition.phase_steps is not None:
            return CUT_STEP_BUDGET
        return CUT_STOP
    return CUT_CONDITION if condition is None else type(condition).__name__


class Worker:
    """One worker: a copy of the phase's environments and one muscle per
    agent. Implements :class:`xdoe.simulation.SimulationWorker`."""

    def __init__(self, index: int, phase: PhasePlan, envs: list[Environment],
                 rewards: list[Reward | None], progress: PhaseProgress, train: bool,
                 recorder: "RunRecorder | None") -> None:
        self.index = index
        self.phase = phase
        self.envs = envs
        self.env_uids = [e.uid for e in phase.environments]
        self.reward_blocks = rewards
        self.has_reward_blocks = any(r is not None for r in rewards)
        self.agents: list[AgentRuntime] = []
        self.agent_names: list[str] = [a.name for a in phase.agents]
        self.train = train
        self.recorder = recorder
        self.policy = recorder.policy if recorder is not None and recorder.policy.enabled else None
        self.env_sensors: list[list[SensorInformation]] = [[] for _ in envs]
        self.states: list[EnvironmentState | None] = [None for _ in envs]
        self.sensor_map: dict[str, SensorInformation] = {}
        self.need_map = False
        self.action_env: dict[str, int] = {}
        self.actions: list[ActuatorInformation] = []
        self.phase_progress = progress
        self.progress = StepProgress(phase=progress, worker=index)
        self.objectives = self.progress.objectives
        self.episode = 0
        self.step = 0
        self.done = False
        self.left_any = False
        #: some environment reported rewards with an ``owner`` this step
        self.owned = False
        self.active = True
        self.in_episode = False
        self.started_at = 0.0
        #: merged into the extras of the episode rows (e.g. ``env_params``)
        self.episode_extras: dict[str, Any] | None = None
        #: phase_config.observation_check (xdoe.environment._spaces); None when off
        self.observation_check = observation_check(phase.observation_check, f"phase {phase.name!r} worker {index}")

    # -- SimulationWorker --------------------------------------------------
    def _sensors_for(self, agent: AgentRuntime) -> list[SensorInformation]:
        if agent.sensor_env >= 0:
            return self.env_sensors[agent.sensor_env]
        m = self.sensor_map
        return [m[uid] for uid in agent.sensor_ids]

    def act(self, index: int) -> None:
        agent = self.agents[index]
        if agent.left is not None:  # left the episode (PettingZoo agents): nothing to do
            return
        if agent.sensor_env >= 0:
            sensors = self.env_sensors[agent.sensor_env]
        else:
            m = self.sensor_map
            sensors = [m[uid] for uid in agent.sensor_ids]
        if agent.pending:
            self._complete(agent, sensors, False)
        templates = agent.fixed_templates
        if templates is None:  # fresh copies: the muscle may set their values
            templates = [ActuatorInformation(a.uid, a.space) for a in agent.templates]
        try:
            actions = agent.muscle.propose_actions(sensors, templates)
        except Exception as exc:
            raise component_error(f"agent {agent.name!r}: muscle.propose_actions", exc) from exc
        if templates is agent.fixed_templates:
            for template in templates:
                if template.value is not None:
                    raise RunError(
                        f"agent {agent.name!r}: its muscle declares keeps_actuators but set a value on "
                        f"actuator {template.uid!r} it was given (return new ActuatorInformation "
                        f"objects, or do not declare keeps_actuators)"
                    )
        agent.t_extras = agent.muscle.extras
        spaces = agent.spaces
        for action in actions:
            bounds = spaces.get(action.uid)
            if bounds is None:
                raise RunError(
                    f"agent {agent.name!r} set actuator {action.uid!r}, which is not assigned to it "
                    f"(assigned: {', '.join(spaces) or 'none'})"
                )
            value = action.value
            if value is None:
                continue
            space, low, high = bounds
            if type(value) is int and low is not None:  # fast path: Discrete and a Python int
                if low <= value < high:
                    continue
            elif space.contains(value):
                continue
            raise RunError(
                f"agent {agent.name!r}: value {value!r} for actuator {action.uid!r} "
                f"is outside its space {space}"
            )
        self.actions.extend(actions)
        agent.pending = True
        agent.t_sensors = sensors
        agent.t_actions = actions
        agent.t_rewards = None
        agent.t_objective = 0.0
        agent.t_step = self.step
        agent.t_updates = 0

    def update(self) -> bool:
        actions = self.actions
        self.actions = []
        envs = self.envs
        done = False
        self.owned = False
        if len(envs) == 1:
            state = self._update_env(0, actions)
            done = state.done
        else:
            routed: list[list[ActuatorInformation]] = [[] for _ in envs]
            action_env = self.action_env
            for action in actions:
                routed[action_env[action.uid]].append(action)
            for i in range(len(envs)):
                if self._update_env(i, routed[i]).done:
                    done = True
        if self.need_map:
            self._rebuild_map()
        self.step += 1
        if self.observation_check is not None and self.observation_check.due(self.step):  # issue 25 hook
            self.observation_check.sensors(self.env_sensors, self.episode, self.step)
        self.phase_progress.steps += 1
        objectives = self.objectives
        for agent in self.agents:
            if agent.reward_env >= 0:
                rewards = self.states[agent.reward_env].rewards  # type: ignore[union-attr]
            else:
                rewards = [r for i in agent.reward_envs for r in self.states[i].rewards]  # type: ignore[union-attr]
            seen = rewards
            if self.owned:
                rewards = own_rewards(agent, rewards)
                if not agent.all_rewards:
                    seen = rewards
            try:
                objective = float(agent.objective.internal_reward(seen))
            except Exception as exc:
                raise component_error(f"agent {agent.name!r}: objective.internal_reward", exc) from exc
            total = 0.0
            for reward in rewards:
                total += reward.value
            agent.ep_reward += total
            agent.ep_objective += objective
            objectives[agent.name] = objective
            if agent.pending:
                if agent.t_rewards is None:
                    agent.t_rewards = rewards
                else:
                    agent.t_rewards = sum_rewards(agent.t_rewards, rewards)
                agent.t_objective += objective
                agent.t_updates += 1
        if self.left_any:
            self._leave()
        progress = self.progress
        progress.step = self.step
        progress.done = done
        self.done = done
        return done

    # -- internals ---------------------------------------------------------
    def _update_env(self, i: int, actions: list[ActuatorInformation]) -> EnvironmentState:
        """Step environment ``i`` with ``actions``: the one place where an
        environment's state (its observation, rewards and flags) comes back
        during a phase; everything after reads ``self.states[i]``."""
        try:
            state = self.envs[i].update(actions)
        except Exception as exc:
            raise component_error(f"environment {self.env_uids[i]!r}: update", exc) from exc
        block = self.reward_blocks[i] if self.has_reward_blocks else None
        if block is not None:
            try:
                state.rewards = list(block(state.sensors, state.rewards))
            except Exception as exc:
                raise component_error(f"environment {self.env_uids[i]!r}: reward", exc) from exc
        for r in state.rewards:
            if r.owner is not None:
                self.owned = True
                break
        if state.left:
            self.left_any = True
        self.states[i] = state
        self.env_sensors[i] = state.sensors
        self.progress.states[i] = state
        return state

    def _leave(self) -> None:
        """Agents all of whose actuators left the episode complete their
        transition (``done``) and stop acting until the episode ends."""
        self.left_any = False
        left: dict[str, bool] = {}
        for state in self.states:
            if state is not None and state.left:
                left.update(state.left)
        for agent in self.agents:
            if agent.left is None and agent.actuator_ids and agent.actuator_ids <= left.keys():
                agent.left = all(left[uid] for uid in agent.actuator_ids)
                if agent.pending:
                    self._complete(agent, self._sensors_for(agent), True, agent.left,
                                   CUT_ENVIRONMENT if agent.left else None)

    def _terminated(self, agent: AgentRuntime) -> bool:
        """Whether one of the agent's environments reported ``terminated``."""
        states = self.states
        for i in agent.reward_envs:  # a loop, not any() of a generator: once per episode and agent
            state = states[i]
            if state is not None and state.terminated:
                return True
        return False

    def _rebuild_map(self) -> None:
        m = self.sensor_map
        for sensors in self.env_sensors:
            for s in sensors:
                m[s.uid] = s

    def _complete(self, agent: AgentRuntime, next_sensors: list[SensorInformation], done: bool,
                  truncated: bool = False, cut_by: str | None = None) -> None:
        agent.pending = False
        rewards = agent.t_rewards if agent.t_rewards is not None else []
        if self.train:
            extras = agent.t_extras
            experience = Experience(
                self.index, self.episode, agent.t_step, agent.t_sensors, agent.t_actions,
                rewards, agent.t_objective, next_sensors, done, {} if extras is None else extras,
                truncated,
            )
            try:
                update = agent.brain.thinking(experience)
            except Exception as exc:
                raise component_error(f"agent {agent.name!r}: brain.thinking", exc) from exc
            if update is not None:
                for muscle in agent.muscles:
                    try:
                        muscle.update(update)
                    except Exception as exc:
                        raise component_error(f"agent {agent.name!r}: muscle.update", exc) from exc
        policy = self.policy
        if policy is not None and policy.wants(agent.t_step, done):
            self.recorder.step(  # type: ignore[union-attr]
                self.index, self.episode, agent.t_step, agent.name, _values(agent.t_sensors),
                _values(agent.t_actions), _values(rewards), agent.t_objective, done,
                done and not truncated, done and truncated, cut_by,
            )

    def start_episode(self, controller: SimulationController, *, started: bool = False) -> None:
        """Reset the environments (unless ``started``: the phase set-up already
        did) and the muscles, and tell the controller."""
        if not started:
            for i, env in enumerate(self.envs):
                try:
                    baseline = env.start_environment()
                except Exception as exc:
                    raise component_error(f"environment {self.env_uids[i]!r}: start_environment", exc) from exc
                self.env_sensors[i] = baseline.sensors
                self.states[i] = None
            if self.need_map:
                self._rebuild_map()
        for agent in self.agents:
            try:
                agent.muscle.reset()
            except Exception as exc:
                raise component_error(f"agent {agent.name!r}: muscle.reset", exc) from exc
            agent.pending = False
            agent.left = None
            agent.ep_reward = 0.0
            agent.ep_objective = 0.0
        self.left_any = False
        self.step = 0
        self.done = False
        self.actions = []
        self.progress.episode = self.episode
        self.progress.step = 0
        self.progress.done = False
        self.in_episode = True
        self.started_at = time.perf_counter()
        controller.start_episode(self)

    def end_episode(self, truncated: bool, cut_by: str | None = None) -> EpisodeProgress:
        """Complete pending transitions (``done=True``; terminated when one of
        the agent's environments reported ``terminated``, else truncated: by
        the environment's time limit, a termination condition or the phase's
        end), record the episode per agent and return it for the conditions.

        ``truncated``: the phase ended while the episode ran (``extras.truncated``);
        ``cut_by``: what cut the episode (:func:`cut_cause`, :mod:`xdoe._cuts`),
        ``None`` when the environment ended it. Each agent's episode row and
        last step row say how it ended: an agent that left the episode early
        (PettingZoo) as it left; else terminated when its environments
        reported ``terminated`` and nothing cut the episode, truncated with
        its cause (``cut_by``, or ``environment``) otherwise."""
        if truncated and cut_by is None:
            cut_by = CUT_STOP
        agents = self.agents
        ends: list[tuple[bool, bool, str | None]] = []
        for agent in agents:
            if agent.left is not None:  # left before the end: as it left
                ends.append((not agent.left, agent.left, CUT_ENVIRONMENT if agent.left else None))
            elif cut_by is None and self._terminated(agent):
                ends.append((True, False, None))
            else:
                ends.append((False, True, cut_by or (CUT_ENVIRONMENT if self.done else CUT_CONDITION)))
            if agent.pending:
                end = ends[-1]
                self._complete(agent, self._sensors_for(agent), True, end[1], end[2])
        wall = time.perf_counter() - self.started_at
        rewards: dict[str, float] = {}
        objectives: dict[str, float] = {}
        for agent in agents:
            rewards[agent.name] = agent.ep_reward
            objectives[agent.name] = agent.ep_objective
        recorder = self.recorder
        if recorder is not None:
            extras: dict[str, Any] = {"truncated": True} if truncated else {}
            infos = {uid: s.info for uid, s in zip(self.env_uids, self.states) if s is not None and s.info}
            if infos:
                extras["info"] = infos
            if self.episode_extras:
                extras.update(self.episode_extras)
            for agent, (terminated, cut, cause) in zip(agents, ends):
                recorder.episode_finished(
                    self.index, self.episode, agent.name, self.step, agent.ep_reward,
                    agent.ep_objective, wall, extras or None, terminated, cut, cause,
                )
            recorder.flush()  # durable before the next episode starts: a crash loses at most that one
        episode = EpisodeProgress(
            self.phase_progress, self.index, self.episode, self.step, rewards, objectives)
        self.phase_progress.episodes_done[self.index] += 1
        self.episode += 1
        self.in_episode = False
        return episode


def _values(items: list[Any]) -> dict[str, Any]:
    """``{item.uid: item.value}`` of sensors, actuators or rewards."""
    if len(items) == 1:  # the usual case, without a comprehension's frame
        item = items[0]
        return {item.uid: item.value}
    return {item.uid: item.value for item in items}
