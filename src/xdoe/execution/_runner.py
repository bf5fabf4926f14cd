"""The phase / episode / step loop: the one place where a run is executed.

Order of events in a run (see :func:`execute_plan`):

1. for each phase, in schedule order:
   a. the simulation controller and the phase's termination conditions are
      constructed (the run's ``run_config.condition`` once per run); every
      condition gets ``phase_started``;
   b. per worker ``w``: each environment is constructed with
      ``seed = environment_seed(run_seed, phase, w, uid)`` and started
      (``start_environment``: the first episode's reset); the baselines of
      worker 0 resolve every agent's sensor and actuator ids (unknown id:
      :class:`~xdoe.errors.ComponentError` with the offered ids);
   c. per agent: its brain is constructed the first time the agent appears in
      the run (``seed = brain_seed(run_seed, name)``), given ``setup`` and
      kept by name for later phases; ``brain.mode`` is set;
   d. per worker and agent: a muscle (``uid`` = agent name,
      ``seed = muscle_seed(run_seed, phase, w, name)``) gets ``setup``, its
      ``mode`` and ``brain.muscle_state()`` (via ``update``) when not ``None``;
2. episodes: workers advance in lockstep, round-robin (worker 0 steps, then
   worker 1, ...), so a run is deterministic for any ``worker``. A step is one
   ``controller.step(worker)``; after it every condition's ``step_finished``
   is asked (the highest verdict wins). ``RESET`` ends the worker's
   episode: pending transitions are handed to the brain with ``done=True``,
   the episode is recorded per agent, ``episode_finished`` is asked; the
   worker then starts its next episode (``muscle.reset()``,
   ``env.start_environment()``) unless it has run ``phase_config.episodes``
   episodes, in which case it waits for the others. ``STOP_PHASE`` ends the
   phase for every worker (episodes in progress are recorded with
   ``extras.truncated``); ``STOP_RUN`` also skips the remaining phases.
3. defaults: a phase whose simulation lists no conditions uses
   ``EnvironmentTerminationCondition`` (an episode ends when an environment
   is done); a phase always ends when every worker has run its episodes.

Transitions: an agent's transition runs from its action to its next action
(or the end of the episode); rewards and objective are summed over the
environment updates in between (one update with the vanilla controller).
In train mode each completed transition goes to ``brain.thinking`` as an
:class:`~xdoe.agent.Experience`; a non-``None`` result goes to
``update`` of every muscle of the agent (all workers). In test mode
``thinking`` is not called.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from xdoe.agent import Brain, Experience, Mode, Muscle, Objective
from xdoe.conditions import (
    EnvironmentTerminationCondition,
    EpisodeProgress,
    PhaseProgress,
    StepProgress,
    TerminationCondition,
    Verdict,
)
from xdoe.environment import (
    ActuatorInformation,
    Environment,
    EnvironmentState,
    Reward,
    RewardInformation,
    SensorInformation,
)
from xdoe.errors import ComponentError, RunError
from xdoe.execution._loading import construct, load_class
from xdoe.execution._plan import AgentSpec, ComponentSpec, EnvironmentSpec, PhasePlan, RunPlan
from xdoe.execution._seeding import brain_seed, environment_seed, muscle_seed, sampler_rng
from xdoe.simulation import SimulationController
from numpy.random import Generator as _Generator

if TYPE_CHECKING:
    import numpy as np

    from xdoe.execution._resume import ResumePoint, WorkerState
    from xdoe.store import RunRecorder

__all__ = ["PhaseResult", "ProgressEvent", "execute_plan", "check_plan"]

_CONTINUE, _RESET, _STOP_PHASE, _STOP_RUN = (
    Verdict.CONTINUE, Verdict.RESET, Verdict.STOP_PHASE, Verdict.STOP_RUN)
#: Seconds between heartbeats (sent at episode ends; see ``xrun --heartbeat-timeout``).
_HEARTBEAT_SECONDS = 10.0


@dataclass
class PhaseResult:
    """What one phase produced.

    Attributes:
        index, name, mode: the phase.
        episodes: episodes finished, all workers together (truncated ones included).
        steps: environment updates, all workers together.
        rewards: agent name -> mean over episodes of the episode's summed
            environment rewards.
        objectives: agent name -> mean over episodes of the summed objective.
        wall_time: seconds.
        stopped_by: ``"episodes"`` (every worker ran its budget),
            ``"condition"`` (a STOP_PHASE verdict) or ``"run_condition"``
            (STOP_RUN).
    """

    index: int
    name: str
    mode: str
    episodes: int = 0
    steps: int = 0
    rewards: dict[str, float] = field(default_factory=dict)
    objectives: dict[str, float] = field(default_factory=dict)
    wall_time: float = 0.0
    stopped_by: str = "episodes"


@dataclass
class ProgressEvent:
    """Sent to a progress callback at every phase start and episode end.

    Attributes:
        run: the run uid; phase, phase_index, phases: the current phase, its
        index and the number of phases; episodes / episodes_total: episodes
        finished in the phase / planned (workers x episodes); steps: updates
        in the run so far.
    """

    run: str
    phase: str
    phase_index: int
    phases: int
    episodes: int
    episodes_total: int
    steps: int


ProgressCallback = Callable[[ProgressEvent], None]


def _component_error(where: str, exc: BaseException) -> RunError:
    err = RunError(f"{where} raised {type(exc).__name__}: {exc}")
    err.__cause__ = exc
    return err


# -- runtime state ---------------------------------------------------------

class _Agent:
    """One agent in one worker: its muscle and the transition in progress."""

    __slots__ = (
        "name", "brain", "muscle", "muscles", "objective", "sensor_ids", "templates",
        "spaces", "sensor_env", "reward_envs", "reward_env", "pending", "t_sensors",
        "t_actions", "t_rewards", "t_objective", "t_step", "t_updates", "ep_reward",
        "ep_objective",
    )

    def __init__(self, name: str, brain: Brain, muscle: Muscle, muscles: list[Muscle],
                 objective: Objective, sensor_ids: list[str], actuators: list[ActuatorInformation],
                 sensor_env: int, reward_envs: list[int]) -> None:
        self.name = name
        self.brain = brain
        self.muscle = muscle
        self.muscles = muscles  # every muscle of the agent (all workers)
        self.objective = objective
        self.sensor_ids = sensor_ids
        self.templates = actuators
        self.spaces = {a.uid: _bounds(a.space) for a in actuators}
        self.sensor_env = sensor_env  # >= 0: the agent sees exactly that env's sensors, in order
        self.reward_envs = reward_envs
        self.reward_env = reward_envs[0] if len(reward_envs) == 1 else -1
        self.pending = False
        self.t_sensors: list[SensorInformation] = []
        self.t_actions: list[ActuatorInformation] = []
        self.t_rewards: list[RewardInformation] | None = None
        self.t_objective = 0.0
        self.t_step = 0
        self.t_updates = 0
        self.ep_reward = 0.0
        self.ep_objective = 0.0


class _Worker:
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
        self.agents: list[_Agent] = []
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
        self.active = True
        self.in_episode = False
        self.started_at = 0.0
        #: merged into the extras of the episode rows (e.g. ``env_params``)
        self.episode_extras: dict[str, Any] | None = None

    # -- SimulationWorker --------------------------------------------------
    def _sensors_for(self, agent: _Agent) -> list[SensorInformation]:
        if agent.sensor_env >= 0:
            return self.env_sensors[agent.sensor_env]
        m = self.sensor_map
        return [m[uid] for uid in agent.sensor_ids]

    def act(self, index: int) -> None:
        agent = self.agents[index]
        if agent.sensor_env >= 0:
            sensors = self.env_sensors[agent.sensor_env]
        else:
            m = self.sensor_map
            sensors = [m[uid] for uid in agent.sensor_ids]
        if agent.pending:
            self._complete(agent, sensors, False)
        templates = [ActuatorInformation(a.uid, a.space) for a in agent.templates]
        try:
            actions = agent.muscle.propose_actions(sensors, templates)
        except Exception as exc:
            raise _component_error(f"agent {agent.name!r}: muscle.propose_actions", exc) from exc
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
        self.phase_progress.steps += 1
        objectives = self.objectives
        for agent in self.agents:
            if agent.reward_env >= 0:
                rewards = self.states[agent.reward_env].rewards  # type: ignore[union-attr]
            else:
                rewards = [r for i in agent.reward_envs for r in self.states[i].rewards]  # type: ignore[union-attr]
            try:
                objective = float(agent.objective.internal_reward(rewards))
            except Exception as exc:
                raise _component_error(f"agent {agent.name!r}: objective.internal_reward", exc) from exc
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
                    agent.t_rewards = _sum_rewards(agent.t_rewards, rewards)
                agent.t_objective += objective
                agent.t_updates += 1
        progress = self.progress
        progress.step = self.step
        progress.done = done
        self.done = done
        return done

    # -- internals ---------------------------------------------------------
    def _update_env(self, i: int, actions: list[ActuatorInformation]) -> EnvironmentState:
        try:
            state = self.envs[i].update(actions)
        except Exception as exc:
            raise _component_error(f"environment {self.env_uids[i]!r}: update", exc) from exc
        block = self.reward_blocks[i] if self.has_reward_blocks else None
        if block is not None:
            try:
                state.rewards = list(block(state.sensors, state.rewards))
            except Exception as exc:
                raise _component_error(f"environment {self.env_uids[i]!r}: reward", exc) from exc
        self.states[i] = state
        self.env_sensors[i] = state.sensors
        self.progress.states[i] = state
        return state

    def _rebuild_map(self) -> None:
        m = self.sensor_map
        for sensors in self.env_sensors:
            for s in sensors:
                m[s.uid] = s

    def _complete(self, agent: _Agent, next_sensors: list[SensorInformation], done: bool) -> None:
        agent.pending = False
        rewards = agent.t_rewards if agent.t_rewards is not None else []
        if self.train:
            experience = Experience(
                self.index, self.episode, agent.t_step, agent.t_sensors, agent.t_actions,
                rewards, agent.t_objective, next_sensors, done,
            )
            try:
                update = agent.brain.thinking(experience)
            except Exception as exc:
                raise _component_error(f"agent {agent.name!r}: brain.thinking", exc) from exc
            if update is not None:
                for muscle in agent.muscles:
                    try:
                        muscle.update(update)
                    except Exception as exc:
                        raise _component_error(f"agent {agent.name!r}: muscle.update", exc) from exc
        policy = self.policy
        if policy is not None and policy.wants(agent.t_step, done):
            self.recorder.step(  # type: ignore[union-attr]
                self.index, self.episode, agent.t_step, agent.name,
                {s.uid: s.value for s in agent.t_sensors},
                {a.uid: a.value for a in agent.t_actions},
                {r.uid: r.value for r in rewards},
                agent.t_objective, done,
            )

    def start_episode(self, controller: SimulationController, *, started: bool = False) -> None:
        """Reset the environments (unless ``started``: the phase set-up already
        did) and the muscles, and tell the controller."""
        if not started:
            for i, env in enumerate(self.envs):
                try:
                    baseline = env.start_environment()
                except Exception as exc:
                    raise _component_error(f"environment {self.env_uids[i]!r}: start_environment", exc) from exc
                self.env_sensors[i] = baseline.sensors
                self.states[i] = None
            if self.need_map:
                self._rebuild_map()
        for agent in self.agents:
            try:
                agent.muscle.reset()
            except Exception as exc:
                raise _component_error(f"agent {agent.name!r}: muscle.reset", exc) from exc
            agent.pending = False
            agent.ep_reward = 0.0
            agent.ep_objective = 0.0
        self.step = 0
        self.done = False
        self.actions = []
        self.progress.episode = self.episode
        self.progress.step = 0
        self.progress.done = False
        self.in_episode = True
        self.started_at = time.perf_counter()
        controller.start_episode(self)

    def end_episode(self, truncated: bool) -> EpisodeProgress:
        """Complete pending transitions (``done=True``), record the episode per
        agent and return it for the conditions."""
        for agent in self.agents:
            if agent.pending:
                self._complete(agent, self._sensors_for(agent), True)
        wall = time.perf_counter() - self.started_at
        rewards = {a.name: a.ep_reward for a in self.agents}
        objectives = {a.name: a.ep_objective for a in self.agents}
        if self.recorder is not None:
            extras: dict[str, Any] = {}
            if truncated:
                extras["truncated"] = True
            infos = {uid: s.info for uid, s in zip(self.env_uids, self.states) if s is not None and s.info}
            if infos:
                extras["info"] = infos
            if self.episode_extras:
                extras.update(self.episode_extras)
            for agent in self.agents:
                self.recorder.episode_finished(
                    self.index, self.episode, agent.name, self.step, agent.ep_reward,
                    agent.ep_objective, wall, extras or None,
                )
        episode = EpisodeProgress(
            self.phase_progress, self.index, self.episode, self.step, rewards, objectives)
        self.phase_progress.episodes_done[self.index] += 1
        self.episode += 1
        self.in_episode = False
        return episode


def _bounds(space: Any) -> tuple[Any, int | None, int | None]:
    """``(space, low, high)``; for a ``Discrete`` space ``low <= value < high``
    is the whole membership test of a Python int."""
    from gymnasium.spaces import Discrete

    if type(space) is Discrete:
        return space, int(space.start), int(space.start + space.n)
    return space, None, None


def _sum_rewards(a: list[RewardInformation], b: list[RewardInformation]) -> list[RewardInformation]:
    totals: dict[str, RewardInformation] = {}
    for r in a:
        totals[r.uid] = RewardInformation(r.uid, float(r.value), r.space)
    for r in b:
        if r.uid in totals:
            totals[r.uid].value += float(r.value)
        else:
            totals[r.uid] = RewardInformation(r.uid, float(r.value), r.space)
    return list(totals.values())


# -- construction -------------------------------------------------------------

def _build(spec: ComponentSpec, base: type, **fixed: Any) -> Any:
    cls = load_class(spec.name, spec.key, base=base)
    return construct(cls, spec.key, spec.params, **fixed)


def _overrides(obj: TerminationCondition, method: str) -> bool:
    return getattr(type(obj), method) is not getattr(TerminationCondition, method)


def _phase_conditions(phase: PhasePlan, run_condition: TerminationCondition | None
                      ) -> list[TerminationCondition]:
    """The phase's termination conditions (``EnvironmentTerminationCondition``
    when it names none), then the run's condition."""
    conditions: list[TerminationCondition] = [
        _build(spec, TerminationCondition) for spec in phase.conditions
    ] or [EnvironmentTerminationCondition()]
    if run_condition is not None:
        conditions.append(run_condition)
    return conditions


def _phase_progress(phase: PhasePlan) -> PhaseProgress:
    """Fresh progress counters of a phase (nothing done yet)."""
    return PhaseProgress(
        index=phase.index, name=phase.name, mode=phase.mode, workers=phase.workers,
        episodes=phase.episodes, agents=[a.name for a in phase.agents],
        episodes_done=[0] * phase.workers,
    )


def _step_verdict(step_conditions: list[Any], progress: Any) -> int:
    """The highest answer of the phase's ``step_finished`` checks (CONTINUE when none)."""
    verdict = _CONTINUE
    for check in step_conditions:
        answer = check(progress)
        if answer > verdict:
            verdict = answer
    return verdict


def _resolve_ids(
    requested: tuple[str, ...] | None,
    offered: list[Any],
    what: str,
    key: str,
) -> list[Any]:
    """The offered items (sensors or actuators) the agent asked for, in the
    order asked; all of them when ``requested`` is ``None``."""
    if requested is None:
        return list(offered)
    by_id = {item.uid: item for item in offered}
    out = []
    for i, uid in enumerate(requested):
        item = by_id.get(uid)
        if item is None:
            import difflib

            close = difflib.get_close_matches(uid, list(by_id), n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise ComponentError(
                f"{key}.{what}[{i}]: the environments offer no {what[:-1]} {uid!r}; "
                f"{hint}offered: {', '.join(by_id) or 'none'}"
            )
        out.append(item)
    return out


@dataclass
class _AgentSetup:
    spec: AgentSpec
    sensors: list[SensorInformation]
    actuators: list[ActuatorInformation]
    sensor_env: int
    reward_envs: list[int]


def _agent_setups(phase: PhasePlan, baselines: list[Any]) -> list[_AgentSetup]:
    env_of: dict[str, int] = {}
    all_sensors: list[SensorInformation] = []
    all_actuators: list[ActuatorInformation] = []
    for i, baseline in enumerate(baselines):
        for s in baseline.sensors:
            env_of[s.uid] = i
        for a in baseline.actuators:
            env_of[a.uid] = i
        all_sensors.extend(baseline.sensors)
        all_actuators.extend(baseline.actuators)
    setups = []
    for agent in phase.agents:
        sensors = _resolve_ids(agent.sensors, all_sensors, "sensors", agent.key)
        actuators = _resolve_ids(agent.actuators, all_actuators, "actuators", agent.key)
        envs = sorted({env_of[x.uid] for x in (*sensors, *actuators)})
        sensor_env = -1
        for i, baseline in enumerate(baselines):
            if [s.uid for s in sensors] == [s.uid for s in baseline.sensors]:
                sensor_env = i
                break
        if not envs:
            envs = list(range(len(baselines)))
        setups.append(_AgentSetup(agent, sensors, actuators, sensor_env, envs))
    return setups


class _PhaseRuntime:
    """Everything constructed for one phase."""

    def __init__(self, plan: RunPlan, phase: PhasePlan, brains: dict[str, Brain],
                 run_condition: TerminationCondition | None, recorder: "RunRecorder | None",
                 *, seed_override: int | None = None,
                 prepare_brain: Callable[[AgentSpec, Brain, bool], None] | None = None,
                 restore: "list[WorkerState] | None" = None,
                 only_workers: "list[int] | None" = None) -> None:
        """Construct the phase. ``prepare_brain(spec, brain, fresh)`` is called
        for every agent once its brain is set up and in the phase's mode, before
        the muscles are made (lineage: ``load``/``replay``/resume);
        ``restore`` (resuming a phase) holds each worker's saved state."""
        self.phase = phase
        seed = plan.seed
        base_seed = seed_override if seed_override is not None else seed
        #: per worker, per environment: the sampler generator (``None`` without samplers)
        self.samplers: list[list[np.random.Generator | None]] = []
        self.controller: SimulationController = _build(phase.simulation, SimulationController)
        self.conditions = _phase_conditions(phase, run_condition)
        self.progress = _phase_progress(phase)
        mode = Mode(phase.mode)
        train = mode is Mode.TRAIN
        self.workers: list[_Worker] = []
        baselines_0: list[Any] = []
        for w in range(phase.workers) if only_workers is None else only_workers:  # parallel workers: one
            envs: list[Environment] = []
            reward_blocks: list[Reward | None] = []
            generators: list[np.random.Generator | None] = []
            drawn: dict[str, Any] = {}
            saved = restore[w] if restore is not None and w < len(restore) else None
            for i, spec in enumerate(phase.environments):
                gen = None if spec.samplers is None else sampler_rng(base_seed, phase.index, w, spec.uid)
                if gen is not None and saved is not None and i < len(saved.samplers) \
                        and saved.samplers[i] is not None:
                    gen.bit_generator.state = saved.samplers[i]
                generators.append(gen)
                env_seed = seed_override if seed_override is not None else environment_seed(
                    seed, phase.index, w, spec.uid)
                env, params = _make_environment(spec, env_seed, gen)
                if params is not None:
                    drawn[spec.uid] = params
                if saved is not None and i < len(saved.envs) and saved.envs[i] is not None \
                        and isinstance(getattr(env, "rng", None), _Generator):
                    env.rng.bit_generator.state = saved.envs[i]
                envs.append(env)
                reward_blocks.append(None if spec.reward is None else _build(spec.reward, Reward))
            self.samplers.append(generators)
            worker = _Worker(w, phase, envs, reward_blocks, self.progress, train, recorder)
            if drawn:
                worker.episode_extras = {"env_params": drawn}
            worker.progress.states = [None] * len(envs)  # type: ignore[list-item]
            baselines = []
            for i, env in enumerate(envs):
                try:
                    baselines.append(env.start_environment())
                except Exception as exc:
                    raise _component_error(
                        f"{phase.environments[i].key}: environment {env.uid!r}: start_environment", exc
                    ) from exc
                worker.env_sensors[i] = baselines[-1].sensors
                for a in baselines[-1].actuators:
                    worker.action_env[a.uid] = i
            if not self.workers:
                baselines_0 = baselines
            self.workers.append(worker)
        setups = _agent_setups(phase, baselines_0)
        muscles_of: dict[str, list[Muscle]] = {s.spec.name: [] for s in setups}
        for setup in setups:
            spec = setup.spec
            brain = brains.get(spec.name)
            if brain is None:
                b_seed = seed_override if seed_override is not None else brain_seed(seed, spec.name)
                brain = _build(spec.brain, Brain, seed=b_seed)
                try:
                    brain.setup(setup.sensors, setup.actuators)
                except Exception as exc:
                    raise _component_error(f"{spec.key}.brain: setup", exc) from exc
                brains[spec.name] = brain
                fresh = True
            else:
                fresh = False
            brain.mode = mode
            if prepare_brain is not None:
                prepare_brain(spec, brain, fresh)
        for worker in self.workers:
            for setup in setups:
                spec = setup.spec
                brain = brains[spec.name]
                m_seed = seed_override if seed_override is not None else muscle_seed(
                    seed, phase.index, worker.index, spec.name)
                muscle = _build(spec.muscle, Muscle, uid=spec.name, seed=m_seed)
                objective = _build(spec.objective, Objective)
                try:
                    muscle.setup(setup.sensors, setup.actuators)
                    muscle.mode = mode
                    state = brain.muscle_state()
                    if state is not None:
                        muscle.update(state)
                except Exception as exc:
                    raise _component_error(f"{spec.key}.muscle: setup", exc) from exc
                muscles_of[spec.name].append(muscle)
                agent = _Agent(
                    spec.name, brain, muscle, muscles_of[spec.name], objective,
                    [s.uid for s in setup.sensors], setup.actuators, setup.sensor_env,
                    setup.reward_envs,
                )
                worker.agents.append(agent)
                if setup.sensor_env < 0:
                    worker.need_map = True
            if worker.need_map:
                worker._rebuild_map()
        if restore is not None:
            from xdoe.execution._resume import restore_worker

            for worker, saved_state in zip(self.workers, restore):
                restore_worker(worker, saved_state, brains)
                worker.episode = saved_state.next_episode
                self.progress.episodes_done[worker.index] = saved_state.next_episode
                if worker.episode >= phase.episodes:
                    worker.active = False

    def redraw(self, worker: "_Worker") -> None:
        """Re-create the worker's environments that have parameter samplers,
        with freshly drawn parameters (before its next episode starts)."""
        drawn: dict[str, Any] = {}
        for i, spec in enumerate(self.phase.environments):
            gen = self.samplers[worker.index][i]
            if gen is None:
                continue
            old = worker.envs[i]
            try:
                old.close()
            except Exception as exc:
                raise _component_error(f"environment {spec.uid!r}: close", exc) from exc
            worker.envs[i], drawn[spec.uid] = _make_environment(spec, 0, gen)  # type: ignore[assignment]
        if drawn:
            worker.episode_extras = {"env_params": drawn}

    @property
    def has_samplers(self) -> bool:
        return any(s.samplers is not None for s in self.phase.environments)

    def close(self) -> None:
        errors = []
        for worker in self.workers:
            for env in worker.envs:
                try:
                    env.close()
                except Exception as exc:  # pragma: no cover - reported below
                    errors.append(exc)
        if errors:
            raise _component_error("environment close", errors[0]) from errors[0]


def _make_environment(spec: EnvironmentSpec, seed: int,
                      sampler: "np.random.Generator | None") -> tuple[Environment, dict[str, Any] | None]:
    """Construct an environment; with samplers, from ``sampler`` draw its
    parameters, then its seed (see :mod:`xdoe.execution._seeding`), and
    return the drawn values too."""
    if spec.samplers is None or sampler is None:
        return _build(spec.environment, Environment, uid=spec.uid, seed=seed), None
    params, drawn = spec.samplers.draw(sampler)
    env_seed = int(sampler.integers(2**32))
    cls = load_class(spec.environment.name, spec.environment.key, base=Environment)
    return construct(cls, spec.environment.key, params, uid=spec.uid, seed=env_seed), drawn


def _phase_runtime(plan: RunPlan, phase: PhasePlan, brains: dict[str, Brain],
                   run_condition: TerminationCondition | None, recorder: "RunRecorder | None",
                   **kwargs: Any) -> Any:
    """The phase's runtime: in-process (:class:`_PhaseRuntime`), or worker
    processes when parallel workers are on and the phase has several
    workers (:mod:`xdoe.execution._parallel_workers`)."""
    if phase.workers > 1 and kwargs.get("restore") is None:
        from xdoe.execution._parallel_workers import ParallelPhase, parallel_workers_enabled

        if parallel_workers_enabled():
            return ParallelPhase(plan, phase, brains, run_condition, recorder,
                                 prepare_brain=kwargs.get("prepare_brain"))
    return _PhaseRuntime(plan, phase, brains, run_condition, recorder, **kwargs)


def _run_phase(rt: _PhaseRuntime, result: PhaseResult,
               on_episode: Callable[["_Worker", EpisodeProgress], None]) -> Verdict:
    """The episode loop of one phase; returns the highest phase-level verdict."""
    if not isinstance(rt, _PhaseRuntime):  # parallel workers
        return rt.run(result, on_episode)  # type: ignore[no-any-return]
    phase = rt.phase
    controller = rt.controller
    step_conditions = [c.step_finished for c in rt.conditions if _overrides(c, "step_finished")]
    episode_conditions = [c.episode_finished for c in rt.conditions if _overrides(c, "episode_finished")]
    for condition in rt.conditions:
        condition.phase_started(rt.progress)
    budget = phase.episodes
    reward_sums: dict[str, float] = {a.name: 0.0 for a in phase.agents}
    objective_sums: dict[str, float] = {a.name: 0.0 for a in phase.agents}

    def finish(worker: _Worker, truncated: bool) -> Verdict:
        episode = worker.end_episode(truncated)
        result.episodes += 1
        result.steps += episode.steps
        for name, value in episode.rewards.items():
            reward_sums[name] += value
        for name, value in episode.objectives.items():
            objective_sums[name] += value
        verdict = _CONTINUE
        for check in episode_conditions:
            answer = check(episode)
            if answer > verdict:
                verdict = answer
        on_episode(worker, episode)
        return verdict

    active = [w for w in rt.workers if w.active]  # a resumed phase may have finished workers
    for worker in active:
        worker.start_episode(controller, started=True)
    stop = _CONTINUE
    while active and stop < _STOP_PHASE:
        ended = False
        for worker in active:
            controller.step(worker)
            verdict = _step_verdict(step_conditions, worker.progress)
            if verdict >= _RESET:
                ended = True
                answer = finish(worker, False)
                if answer > verdict:
                    verdict = answer
                if verdict < _STOP_PHASE and worker.episode < budget:
                    worker.start_episode(controller)
                else:
                    worker.active = False
                if verdict >= _STOP_PHASE:
                    stop = verdict
                    break
        if ended:  # only an ended episode can retire a worker; steps stay cheap
            active = [w for w in active if w.active]
    for worker in rt.workers:
        if worker.in_episode and worker.step > 0:
            finish(worker, True)
    result.stopped_by = {
        _CONTINUE: "episodes", _RESET: "episodes", _STOP_PHASE: "condition", _STOP_RUN: "run_condition"
    }[Verdict(stop)]
    total = max(result.episodes, 1)
    result.rewards = {k: v / total for k, v in reward_sums.items()}
    result.objectives = {k: v / total for k, v in objective_sums.items()}
    return Verdict(stop)


def _lineage_changes(plan: RunPlan) -> dict[tuple[int, str], tuple[bool, bool]]:
    """``(phase index, agent) -> (apply load, apply replay)``: an agent's
    ``load``/``replay`` applies in the first phase it appears in and whenever
    it differs from the one of its previous phase (not when inherited as is)."""
    def ident(spec: Any) -> Any:
        return None if spec is None else (spec.agent, spec.run, spec.phase,
                                          getattr(spec, "path", None), getattr(spec, "which", None))

    last: dict[str, tuple[Any, Any]] = {}
    out: dict[tuple[int, str], tuple[bool, bool]] = {}
    for phase in plan.phases:
        for agent in phase.agents:
            load = ident(agent.load_spec)
            replay = tuple(ident(r) for r in agent.replay_specs)
            prev = last.get(agent.name)
            out[(phase.index, agent.name)] = (
                load is not None and (prev is None or prev[0] != load),
                bool(replay) and (prev is None or prev[1] != replay),
            )
            last[agent.name] = (load, replay)
    return out


def _stored_result(phase: PhasePlan, resume: "ResumePoint") -> PhaseResult:
    """The result of a phase a resumed instance finished before, from the store."""
    n, steps, rewards, objectives = resume.aggregates.get(phase.index, (0, 0, {}, {}))
    total = max(n, 1)
    return PhaseResult(phase.index, phase.name, phase.mode, episodes=n, steps=steps,
                       rewards={a: v / total for a, v in rewards.items()},
                       objectives={a: v / total for a, v in objectives.items()})


def _merge_kept(result: PhaseResult, kept: tuple[int, int, dict[str, float], dict[str, float]]) -> None:
    """Add the episodes a resumed phase kept from before the interruption."""
    n_old, s_old, rewards, objectives = kept
    if not n_old:
        return
    n_new = result.episodes
    total = n_new + n_old
    result.rewards = {a: (result.rewards.get(a, 0.0) * n_new + rewards.get(a, 0.0)) / total
                      for a in set(result.rewards) | set(rewards)}
    result.objectives = {a: (result.objectives.get(a, 0.0) * n_new + objectives.get(a, 0.0)) / total
                         for a in set(result.objectives) | set(objectives)}
    result.episodes = total
    result.steps += s_old


def execute_plan(
    plan: RunPlan,
    recorder: "RunRecorder | None",
    *,
    progress: ProgressCallback | None = None,
    phases_done: list[PhaseResult] | None = None,
    resume: "ResumePoint | None" = None,
) -> list[PhaseResult]:
    """Execute every phase of ``plan`` (see the module docstring for the order
    of events), recording into ``recorder`` (``None``: record nothing).

    With a recorder, every agent's brain is checkpointed at every phase end
    and every ``phase_config.checkpoint_every`` steps, and a ``brain_source``
    row per agent records where its brain came from at each phase start
    (:mod:`xdoe.execution._lineage`: ``load``, ``replay``).

    Args:
        plan: the resolved run document.
        recorder: a started (or resumed) :class:`xdoe.store.RunRecorder`, or ``None``.
        progress: called at every phase start and episode end.
        phases_done: a list that receives each phase's result as soon as the
            phase ends (so a caller keeps the finished phases of a run that
            fails later); the same list is returned.
        resume: where a resumed instance continues
            (:func:`xdoe.execution._resume.prepare_resume`).

    Raises:
        ComponentError: a component cannot be imported or constructed, or an
            agent names a sensor/actuator its environments do not offer.
        RunError: a component raised while running, a muscle set a value
            outside its actuator's space, or a ``load``/``replay`` source does
            not exist.
    """
    from xdoe.execution._checkpoints import CheckpointManager, load_brain
    from xdoe.execution._lineage import SourceRow, apply_load, apply_replay, record_sources
    from xdoe.execution._resume import PhaseCheckpointer

    results = phases_done if phases_done is not None else []
    brains: dict[str, Brain] = {}
    run_condition = None
    if plan.run_condition is not None:
        run_condition = _build(plan.run_condition, TerminationCondition)
    store = recorder.store if recorder is not None else None
    changes = _lineage_changes(plan)
    steps_before = 0
    last_beat = time.monotonic()
    for phase in plan.phases:
        if resume is not None and phase.index < resume.phase_index:
            result = _stored_result(phase, resume)
            results.append(result)
            steps_before += result.steps
            continue
        continuing = (resume is not None and phase.index == resume.phase_index
                      and resume.state is not None and resume.phase_id is not None)
        started = time.perf_counter()
        if recorder is not None:
            if continuing:
                assert resume is not None and resume.phase_id is not None
                recorder.phase_resumed(resume.phase_id, phase.index, phase.name, phase.mode, phase.config)
            else:
                recorder.phase_started(phase.index, phase.name, phase.mode, phase.config)
        result = PhaseResult(phase.index, phase.name, phase.mode)
        sources: list[SourceRow] = []

        def prepare(spec: AgentSpec, brain: Brain, fresh: bool, phase: PhasePlan = phase,
                    continuing: bool = continuing, sources: list[SourceRow] = sources) -> None:
            restored = resume.brains.get(spec.name) if resume is not None else None
            if continuing:  # the phase's own checkpoint; its lineage rows exist already
                if restored is not None:
                    load_brain(brain, restored)
                return
            if not fresh:
                restored = None
            elif restored is not None:  # kept brain of an earlier phase of this instance
                load_brain(brain, restored)
            do_load, do_replay = changes[(phase.index, spec.name)]
            if do_load:
                assert spec.load_spec is not None
                sources.append(apply_load(store, spec.load_spec, brain, spec.name))
            elif restored is not None:
                sources.append(SourceRow(spec.name, "previous_phase", run_uid=restored.run_uid,
                                         phase=restored.phase, checkpoint_id=restored.id,
                                         path=str(restored.path), sha256=restored.sha256))
            else:
                sources.append(SourceRow(spec.name, "fresh" if fresh else "previous_phase"))
            if do_replay:
                sources.extend(apply_replay(store, spec.replay_specs, brain, spec.name))

        restore = resume.state.workers if continuing and resume is not None and resume.state else None
        rt = _phase_runtime(plan, phase, brains, run_condition, recorder, prepare_brain=prepare,
                            restore=restore)
        checkpointer: PhaseCheckpointer | None = None
        if continuing and resume is not None and resume.state is not None:
            rt.progress.steps = resume.state.steps
        if recorder is not None and store is not None and recorder.instance_id is not None:
            record_sources(store, recorder.instance_id, recorder.phase_id, sources)
            if recorder.paths is not None:
                manager = CheckpointManager(store, recorder.instance_id, recorder.paths.checkpoints,
                                            keep=phase.keep_checkpoints, best_window=phase.best_window)
                checkpointer = PhaseCheckpointer(
                    manager, recorder, phase, rt, brains, rt.samplers,
                    episodes_done=resume.state.episodes if continuing and resume and resume.state else 0)
        redraw = rt.has_samplers
        total = phase.workers * phase.episodes

        def on_episode(worker: _Worker, episode: EpisodeProgress, rt: _PhaseRuntime = rt,
                       result: PhaseResult = result, base: int = steps_before,
                       checkpointer: PhaseCheckpointer | None = checkpointer,
                       redraw: bool = redraw, phase: PhasePlan = phase) -> None:
            nonlocal last_beat
            if checkpointer is not None:
                checkpointer.episode_done(episode.objectives)
            if redraw and worker.episode < phase.episodes:
                rt.redraw(worker)
            if progress is not None:
                progress(ProgressEvent(plan.uid, phase.name, phase.index, len(plan.phases),
                                       result.episodes, total, base + rt.progress.steps))
            if recorder is not None and time.monotonic() - last_beat > _HEARTBEAT_SECONDS:
                recorder.heartbeat()
                last_beat = time.monotonic()

        if progress is not None:
            progress(ProgressEvent(plan.uid, phase.name, phase.index, len(plan.phases), 0, total,
                                   steps_before))
        try:
            verdict = _run_phase(rt, result, on_episode)
            if checkpointer is not None:
                checkpointer.save(final=True)
        finally:
            result.wall_time = time.perf_counter() - started
        rt.close()
        if continuing and resume is not None:
            _merge_kept(result, resume.aggregates.get(phase.index, (0, 0, {}, {})))
        steps_before += result.steps
        results.append(result)
        if recorder is not None:
            recorder.phase_finished("finished")
        if verdict >= _STOP_RUN:
            break
    return results


def check_plan(plan: RunPlan, seed: int) -> list[str]:
    """Import and construct every component of every phase (seeds all
    ``seed``), start the environments once to resolve sensor and actuator
    ids, and close them; nothing steps.

    Returns:
        one line per phase describing what was checked.

    Raises:
        ComponentError / RunError: as :func:`execute_plan` would.
    """
    lines = []
    brains: dict[str, Brain] = {}
    run_condition = None
    if plan.run_condition is not None:
        run_condition = _build(plan.run_condition, TerminationCondition)
    for phase in plan.phases:
        rt = _PhaseRuntime(plan, phase, brains, run_condition, None, seed_override=seed)
        rt.close()
        lines.append(
            f"{phase.key}: {len(phase.environments)} environment(s), {len(phase.agents)} agent(s), "
            f"{len(rt.conditions)} condition(s), mode {phase.mode}, "
            f"{phase.workers} worker(s) x {phase.episodes} episode(s)"
        )
    return lines
