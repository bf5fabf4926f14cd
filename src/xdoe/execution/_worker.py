"""One worker of a phase at run time: its environments, the agents' muscles,
the step (act, update the environments, complete the experiences) and the
episode bookkeeping. Driven by :mod:`xdoe.execution._runner`.

The step is value-first (gymnasium's ``Env.step``): the worker calls the
value forms of the plugin methods (``Muscle.propose_values``,
``Environment.update_values``, ``Objective.internal_reward_values``,
``Brain.thinking_values``) and holds sensors, actions and rewards as values
(``xdoe._plugins._forms``); a plugin that writes the object form
(``propose_actions``, ...) gets its value form derived by its base class,
which builds the information objects; an environment that writes ``update``
is stepped through it by its :class:`EnvironmentRuntime`, which holds the
actuators' ids and spaces. The worker reads an
environment's :class:`~xdoe.environment.EnvironmentState` (``last_state``)
only where objects are needed: an environment that wrote ``update`` (the
state is at hand: rewards with an ``owner``, agents that ``left``), a reward
component, a condition that reads ``StepProgress.states``, the episode's
``info`` at its end."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from xdoe._cuts import CUT_CONDITION, CUT_ENVIRONMENT, CUT_STEP_BUDGET, CUT_STOP
from xdoe.conditions import PhaseProgress, StepProgress, Verdict
from xdoe._plugins import int_range, observation_check, values_of
from xdoe.environment import Environment, EnvironmentBaseline, EnvironmentState, Reward, SensorInformation
from xdoe.errors import RunError
from xdoe.execution._agent_runtime import COMPLETE, GOING_ON, PROPOSE, AgentRuntime, own_rewards, sum_rewards
from xdoe.execution._environment_runtime import EnvironmentRuntime
from xdoe.execution._plan import PhasePlan
from xdoe.execution._worker_episodes import WorkerEpisodes, component_error

if TYPE_CHECKING:
    from xdoe.store import RunRecorder


CONTINUE, RESET, STOP_PHASE, STOP_RUN = (
    Verdict.CONTINUE, Verdict.RESET, Verdict.STOP_PHASE, Verdict.STOP_RUN)

__all__ = ["AgentRuntime", "Worker", "component_error", "cut_cause", "COMPLETE", "CONTINUE", "GOING_ON", "PROPOSE",
           "RESET", "STOP_PHASE", "STOP_RUN"]


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


class Worker(WorkerEpisodes):
    """One worker: a copy of the phase's environments and one muscle per
    agent. Implements :class:`xdoe.simulation.SimulationWorker`.

    ``reads_states``: a termination condition of the phase reads
    ``StepProgress.states`` (:func:`xdoe.execution._stepping.reads_states`):
    every environment's state is then read at every step. ``reads_progress``:
    the phase's steps ask a condition's ``step_finished``
    (:func:`xdoe.execution._stepping.reads_progress`): each update's
    ``step``, ``done`` and ``objectives`` are then written into
    :attr:`progress` (else they are left as the episode's start set them:
    nothing reads them).

    Its state is held in slots: a worker has more attributes than CPython
    3.11 keeps in an instance's shared-key dict (30), and the step reads and
    writes about twenty of them (a slot is read directly; a dict attribute
    through a look-up in the instance's own dict)."""

    __slots__ = (
        "index", "phase", "envs", "env_uids", "reward_components", "reads_states", "agents", "agent_names",
        "train", "recorder", "env_sensors", "env_specs", "env_checks", "env_runtimes", "env_steps", "env_obs",
        "env_rewards", "env_terminated", "fetch", "states", "sensor_values", "need_map", "action_env",
        "env_actions", "phase_progress", "progress", "objectives", "episode", "step", "done", "left_any",
        "active", "in_episode", "started_at", "episode_extras", "observation_check", "check_at", "check_range",
        "next_due", "one_env",
    )

    def __init__(self, index: int, phase: PhasePlan, envs: list[Environment],
                 rewards: list[Reward | None], progress: PhaseProgress, train: bool,
                 recorder: "RunRecorder | None", reads_states: bool = True, reads_progress: bool = True) -> None:
        self.index = index
        self.phase = phase
        self.envs = envs
        self.env_uids = [e.uid for e in phase.environments]
        self.reward_components = rewards
        self.reads_states = reads_states
        self.agents: list[AgentRuntime] = []
        self.agent_names: list[str] = [a.name for a in phase.agents]
        self.train = train
        self.recorder = recorder
        n = len(envs)
        #: per environment: the sensors of its last baseline (ids, spaces, the episode's first values)
        self.env_sensors: list[list[SensorInformation]] = [[] for _ in envs]
        #: per environment: ``(uid, space)`` of its sensors (the baseline's)
        self.env_specs: list[tuple[tuple[str, Any], ...]] = [() for _ in envs]
        #: per environment, when observations are checked: ``(uid, space, low, high)`` of its
        #: sensors, ``low``/``high`` their :func:`~xdoe._plugins.int_range`
        self.env_checks: list[tuple[tuple[str, Any, int, int], ...]] = [() for _ in envs]
        #: per environment: the executor's side of it (its value-form step, its last state, its
        #: actuators' ``(uid, space)``, the form of ``update`` its class wrote), from its baseline;
        #: kept from one episode to the next while the environment and its actuators stay
        self.env_runtimes: list[EnvironmentRuntime] = [EnvironmentRuntime(env, ()) for env in envs]
        #: per environment, what :meth:`update` reads of it, bound when its runtime is made:
        #: ``(index, the runtime's update_values, the id of its only actuator or None, fetch)``
        self.env_steps: list[tuple[int, Callable[[Any], tuple[Any, dict[str, float], bool, bool]], str | None,
                                   bool]] = [(i, runtime.update_values, None, True)
                                             for i, runtime in enumerate(self.env_runtimes)]
        #: per environment: the value form of its sensors now, its rewards of the last update, its terminated flag
        self.env_obs: list[Any] = [None] * n
        self.env_rewards: list[dict[str, float]] = [{} for _ in envs]
        self.env_terminated = [False] * n
        #: per environment: its state is read at every step (see the module docstring)
        self.fetch = [True] * n
        #: per environment: its last state, when read (``fetch``, or at the episode's end)
        self.states: list[EnvironmentState | None] = [None] * n
        #: sensor id -> value of every environment (agents that see sensors of several)
        self.sensor_values: dict[str, Any] = {}
        self.need_map = False
        #: actuator id -> the index of its environment (its last baseline's actuators: set_baseline)
        self.action_env: dict[str, int] = {}
        #: per environment, the actions set since its last update: the plain value for an
        #: environment with one actuator (``None``: not set), else a dict ``uid -> value``
        #: (``None``: none set); what its next ``update_values`` receives
        self.env_actions: list[Any] = [None] * n
        self.phase_progress = progress
        self.progress = StepProgress(phase=progress, worker=index)
        #: the progress's objectives, written at every update when a step condition reads them, else None
        self.objectives: dict[str, float] | None = self.progress.objectives if reads_progress else None
        self.episode = 0
        self.step = 0
        self.done = False
        self.left_any = False
        self.active = True
        self.in_episode = False
        self.started_at = 0.0
        #: merged into the extras of the episode rows (e.g. ``env_params``)
        self.episode_extras: dict[str, Any] | None = None
        #: phase_config.observation_check (xdoe._plugins._observations); None when off (and without
        #: environments: no sensor to check)
        self.observation_check = observation_check(phase.observation_check,
                                                   f"phase {phase.name!r} worker {index}") if n else None
        #: the next step whose observations are checked (reset at every episode start); never when off
        self.check_at: float = 1 if self.observation_check is not None else float("inf")
        #: ``(low, high)``: the :func:`~xdoe._plugins.int_range` of the only sensor of the only
        #: environment (set_baseline), which :meth:`update` compares a due step's observation with
        #: itself; ``(1, 0)`` (empty: every value goes to :meth:`_check_observations`) otherwise
        self.check_range: tuple[int, int] = (1, 0)
        #: the rule's :meth:`~xdoe._plugins.ObservationCheck.next_due` (a plain function, held in a slot)
        self.next_due: Callable[[int], int] | None = (None if self.observation_check is None
                                                      else self.observation_check.next_due)
        self.one_env = n == 1

    def set_baseline(self, i: int, baseline: EnvironmentBaseline) -> None:
        """Environment ``i`` started an episode with ``baseline``. Its
        :class:`EnvironmentRuntime` is kept when the environment object and
        its actuators (ids and spaces) are those of its last baseline (the
        usual case: every episode of a worker), else made anew with what
        :meth:`update` binds of it, and :attr:`action_env` maps its actuators
        (those it has now) to it."""
        env = self.envs[i]
        sensors = baseline.sensors
        self.env_sensors[i] = sensors
        specs = tuple([(s.uid, s.space) for s in sensors])
        if self.observation_check is not None and specs != self.env_specs[i]:  # the same as a rule
            self.env_checks[i] = checks = tuple([(uid, space, *int_range(space)) for uid, space in specs])
            self.check_range = checks[0][2:] if self.one_env and len(checks) == 1 else (1, 0)
        self.env_specs[i] = specs
        self.env_obs[i] = values_of(sensors)
        actuators = tuple([(a.uid, a.space) for a in baseline.actuators])
        runtime = self.env_runtimes[i]
        if runtime.env is env and runtime.actuators == actuators:
            runtime.restart()
        else:
            self.env_runtimes[i] = runtime = EnvironmentRuntime(env, actuators)
            action_env = {uid: j for uid, j in self.action_env.items() if j != i}  # the actuators it has now
            action_env.update((uid, i) for uid, _ in actuators)
            self.action_env = action_env
            action_id = actuators[0][0] if len(actuators) == 1 else None
            derived = runtime.form == "update"
            self.fetch[i] = fetch = derived or self.reads_states or self.reward_components[i] is not None
            self.env_steps[i] = (i, runtime.update_values, action_id, fetch)
            self.bind_actions()
        self.env_terminated[i] = False
        self.env_rewards[i] = {}
        self.states[i] = None

    # -- SimulationWorker --------------------------------------------------
    def _observation(self, agent: AgentRuntime) -> Any:
        """The value form of ``agent``'s sensors now."""
        if agent.sensor_env >= 0:
            return self.env_obs[agent.sensor_env]
        m = self.sensor_values
        ids = agent.sensor_ids
        if len(ids) == 1:
            return m[ids[0]]
        return {uid: m[uid] for uid in ids}

    def act(self, index: int, proposed: Any = PROPOSE, end: tuple[bool, bool, str | None] = GOING_ON) -> None:
        """Agent number ``index`` acts: its previous transition completes
        (in train mode its brain learns from it; its step row is written
        when steps are stored), its muscle proposes on what it senses now,
        the action is checked against the actuators' spaces and kept for the
        next :meth:`update`, and the next transition starts (its extras are
        the muscle's :attr:`~xdoe.agent.Muscle.extras`). The one place where
        a transition completes and starts.

        ``proposed``: :data:`PROPOSE` (the default: the muscle proposes),
        an action already proposed (a lockstep round,
        :func:`xdoe.execution._stepping.act_together`), or :data:`COMPLETE`
        (only complete the transition: the first half of a lockstep round,
        the agent leaving or the episode ending). ``end``: how the transition
        ends, ``(done, truncated, cut_by)`` (:data:`GOING_ON`: the episode
        goes on); an agent that left the episode acts only to complete.

        Raises:
            RunError: a component failed, the action is outside its actuator's
                space, or sets an actuator not assigned to the agent.
        """
        agent = self.agents[index]
        if agent.left is not None and end is GOING_ON:  # left the episode (PettingZoo agents): nothing to do
            return
        observation = self.env_obs[agent.sensor_env] if agent.sensor_env >= 0 else self._observation(agent)
        transition = agent.transition
        if transition is not None:  # the transition since its last action completes (replaced below)
            step, last, action, extras = transition
            done, truncated, cut_by = end
            rewards = agent.t_rewards
            if rewards is None:  # no update since it acted: nothing received
                rewards, objective = {}, 0.0
            else:
                objective = agent.t_objective
            if self.train:
                think = agent.think  # a slot holding a bound method: called from a local (see update)
                try:
                    update = think(self.index, self.episode, step, last, action, rewards, objective,
                                   observation, done, {} if extras is None else extras, truncated)
                except Exception as exc:
                    raise component_error(f"agent {agent.name!r}: brain.{agent.think_form}", exc) from exc
                if update is not None:
                    for muscle in agent.muscles:
                        try:
                            muscle.update(update)
                        except Exception as exc:
                            raise component_error(f"agent {agent.name!r}: muscle.update", exc) from exc
            write = agent.write_step
            if write is not None:
                write(self.episode, step, last, action, rewards, objective, done,
                      done and not truncated, done and truncated, cut_by)
        if proposed is PROPOSE:
            propose = agent.propose
            try:
                action = propose(observation)
            except RunError:
                raise
            except Exception as exc:
                raise component_error(f"agent {agent.name!r}: muscle.{agent.propose_form}", exc) from exc
        elif proposed is COMPLETE:
            agent.transition = None
            return
        else:
            action = proposed
        uid = agent.actuator_id
        if uid is not None:  # one actuator: the plain value
            # a Python int inside a Discrete space's range is in it; anything else is checked by the space
            # (``not (low <= action and action < high)``: ``low <= action < high`` costs three bytecodes more)
            if (type(action) is not int or not (agent.low <= action and action < agent.high)) and action is not None:
                _check_action(agent, uid, action, agent.bounds)
            slot = agent.action_slot
            if slot >= 0:  # its environment's only actuator: the environment's whole input
                self.env_actions[slot] = action
            else:
                self._set_action(uid, action)
        else:
            if type(action) is not dict:
                raise RunError(f"agent {agent.name!r}: its muscle proposed {action!r}; an agent with "
                               f"{len(agent.spaces)} actuators proposes a dict actuator id -> value")
            spaces = agent.spaces
            for uid, value in action.items():
                bounds = spaces.get(uid)
                if bounds is None:
                    raise RunError(
                        f"agent {agent.name!r} set actuator {uid!r}, which is not assigned to it "
                        f"(assigned: {', '.join(spaces) or 'none'})"
                    )
                if value is not None:
                    _check_action(agent, uid, value, bounds)
            for uid, value in action.items():
                self._set_action(uid, value)
        agent.transition = (self.step, observation, action, agent.muscle.extras)
        agent.t_rewards = None  # t_objective is set with it, at the transition's first update

    def update(self) -> bool:
        done = owned = False
        # each environment's step: the one place where its observation, rewards and flags come back;
        # the worker's lists are read in place (one environment as a rule: locals would cost more)
        for i, update_values, uid, fetched in self.env_steps:
            actions = self.env_actions
            value = actions[i]  # the actions set since its last update
            actions[i] = None
            if value is None and uid is None:  # several actuators, none set
                value = {}
            # the runtime's update_values, bound in env_steps: ``obj.slot(...)`` would be a method
            # call CPython 3.11 does not specialise (a generic attribute look-up at every step)
            try:
                observation, rewards, terminated, truncated = update_values(value)
            except Exception as exc:
                raise component_error(f"environment {self.env_uids[i]!r}: {self.env_runtimes[i].form}", exc) \
                    from exc
            if fetched:
                rewards, found = self._read_state(i, rewards)
                if found:
                    owned = True
            self.env_obs[i] = observation
            self.env_rewards[i] = rewards
            self.env_terminated[i] = terminated
            if terminated or truncated:
                done = True
        if self.need_map:
            self._rebuild_map()
        self.step = step = self.step + 1
        if step >= self.check_at:  # the observation check (issue 25), at the steps it is due
            # the usual case, one environment with one Discrete sensor (check_range): its value, the
            # loop's last observation, compared here; any other value, or several sensors, checked by
            # _check_observations (a call per due step costs as much as the comparison twice over)
            low, high = self.check_range
            if type(observation) is not int or not (low <= observation and observation < high):
                self._check_observations()
            self.check_at = self.next_due(step)  # type: ignore[misc]
        self.phase_progress.steps += 1
        objectives = self.objectives
        for agent in self.agents:
            if owned:
                rewards, seen = self._owned_rewards(agent)
            elif agent.reward_env >= 0:
                rewards = seen = self.env_rewards[agent.reward_env]
            else:
                rewards = {}
                for i in agent.reward_envs:
                    rewards.update(self.env_rewards[i])
                seen = rewards
            internal = agent.internal
            try:
                objective = internal(seen)
                if type(objective) is not float:
                    objective = float(objective)
            except Exception as exc:
                raise component_error(f"agent {agent.name!r}: objective.{agent.internal_form}", exc) from exc
            agent.ep_reward += sum(rewards.values(), 0.0)  # a float start: sum's loop over floats in C
            agent.ep_objective += objective
            if objectives is not None:
                objectives[agent.name] = objective
            if agent.transition is not None:
                t_rewards = agent.t_rewards
                if t_rewards is None:  # the transition's first update
                    agent.t_rewards = rewards
                    agent.t_objective = objective
                else:  # a later one (a controller that updates more than once between the agent's actions)
                    agent.t_rewards = sum_rewards(t_rewards, rewards)
                    agent.t_objective += objective
        if self.left_any:
            self._leave()
        self.done = done
        if objectives is not None:  # a step condition reads the progress (see the class docstring)
            progress = self.progress
            progress.step = step
            progress.done = done
        return done

    def run_episode(self) -> bool:
        """Run the rest of the episode of a worker with one agent, under
        the vanilla controller with the environment's ``done`` the only step
        check (:func:`xdoe.execution._stepping.episode_function`), as one
        loop; ``False`` (nothing done) when the episode is not of the shape
        the loop keeps in locals: one environment whose only actuator the
        agent sets and whose sensors and rewards are the agent's, its state
        not read at every step (``fetch``), nothing reading the step's
        progress.

        Each step makes the calls :meth:`act` then :meth:`update` make, in
        their order, with the same arguments, the same checks and the same
        errors: the muscle proposes, the action is checked against its
        actuator's space, the environment updates, the observation check
        when it is due, the objective, the episode's sums; then, in train
        mode, the brain learns from the transition (``done`` false: an
        episode goes on after it) and its step row is written (when steps
        are stored) before the next proposal. At the step
        whose update reports ``done`` the loop returns with that transition
        pending, as after :meth:`update`: the episode's end completes it
        (:meth:`end_episode`). What the loop holds in locals (the step
        count, the episode's sums, the observation) is written back to the
        worker when it returns or raises.

        Raises:
            RunError: as :meth:`act` and :meth:`update`.
        """
        agent = self.agents[0]
        if (len(self.env_steps) != 1 or agent.action_slot != 0 or agent.sensor_env != 0 or agent.reward_env != 0
                or agent.transition is not None or self.objectives is not None or self.left_any):
            return False
        ((_, update_values, _, fetched),) = self.env_steps
        if fetched:
            return False
        propose, internal, muscle, muscles = agent.propose, agent.internal, agent.muscle, agent.muscles
        think = agent.think if self.train else None
        write = agent.write_step
        low, high = agent.low, agent.high
        index, episode = self.index, self.episode
        check_at, (check_low, check_high), next_due = self.check_at, self.check_range, self.next_due
        step = start = self.step
        observation = self.env_obs[0]
        ep_reward, ep_objective = agent.ep_reward, agent.ep_objective
        try:
            while True:
                try:
                    action = propose(observation)
                except RunError:
                    raise
                except Exception as exc:
                    raise component_error(f"agent {agent.name!r}: muscle.{agent.propose_form}", exc) from exc
                if (type(action) is not int or not (low <= action and action < high)) and action is not None:
                    _check_action(agent, agent.actuator_id, action, agent.bounds)  # type: ignore[arg-type]
                extras = muscle.extras
                try:
                    next_observation, rewards, terminated, truncated = update_values(action)
                except Exception as exc:
                    raise component_error(f"environment {self.env_uids[0]!r}: {self.env_runtimes[0].form}", exc) \
                        from exc
                step += 1
                if step >= check_at:  # the observation check, at the steps it is due (as update)
                    if type(next_observation) is not int \
                            or not (check_low <= next_observation and next_observation < check_high):
                        self.env_obs[0] = next_observation
                        self.step = step
                        self._check_observations()
                    check_at = next_due(step)  # type: ignore[misc]
                try:
                    objective = internal(rewards)
                    if type(objective) is not float:
                        objective = float(objective)
                except Exception as exc:
                    raise component_error(f"agent {agent.name!r}: objective.{agent.internal_form}", exc) from exc
                ep_reward += sum(rewards.values(), 0.0)  # as update
                ep_objective += objective
                if terminated or truncated:  # the transition stays pending for the episode's end
                    agent.transition = (step - 1, observation, action, extras)
                    agent.t_rewards = rewards
                    agent.t_objective = objective
                    self.env_obs[0] = next_observation
                    self.env_rewards[0] = rewards
                    self.env_terminated[0] = terminated
                    self.done = True
                    return True
                if think is not None:  # the transition completes before the next proposal (as act)
                    try:
                        update = think(index, episode, step - 1, observation, action, rewards, objective,
                                       next_observation, False, {} if extras is None else extras, False)
                    except Exception as exc:
                        raise component_error(f"agent {agent.name!r}: brain.{agent.think_form}", exc) from exc
                    if update is not None:
                        for each in muscles:
                            try:
                                each.update(update)
                            except Exception as exc:
                                raise component_error(f"agent {agent.name!r}: muscle.update", exc) from exc
                if write is not None:  # its step row, as act writes it
                    write(episode, step - 1, observation, action, rewards, objective, False, False, False, None)
                observation = next_observation
        finally:
            self.step = step
            self.check_at = check_at
            self.phase_progress.steps += step - start
            agent.ep_reward = ep_reward
            agent.ep_objective = ep_objective

    def retract(self) -> None:
        """Drop the actions the agents proposed since the last update (a
        lockstep round that stopped before this worker's update: the actions
        never reached the environments, so no transition)."""
        for agent in self.agents:
            agent.transition = None
        self.env_actions[:] = [None] * len(self.env_actions)

    # -- internals ---------------------------------------------------------
    def _read_state(self, i: int, rewards: dict[str, float]) -> tuple[dict[str, float], bool]:
        """After environment ``i``'s update, when its state is read at every
        step (``fetch``): the state for the conditions, its reward component
        applied, agents that left noted; returns the rewards (the component's,
        if there is one) and whether one of them has an ``owner``."""
        state = self._last_state(i)
        component = self.reward_components[i]
        if component is not None:
            try:
                state.rewards = list(component(state.sensors, state.rewards))
            except Exception as exc:
                raise component_error(f"environment {self.env_uids[i]!r}: reward", exc) from exc
            rewards = {r.uid: r.value for r in state.rewards}
        owned = False
        for r in state.rewards:
            if r.owner is not None:
                owned = True
                break
        if state.left:
            self.left_any = True
        self.progress.states[i] = state
        return rewards, owned

    def _last_state(self, i: int) -> EnvironmentState:
        """Environment ``i``'s state of its last update (kept in ``states``)."""
        try:
            state = self.env_runtimes[i].last_state()
        except Exception as exc:
            raise component_error(f"environment {self.env_uids[i]!r}: last_state", exc) from exc
        self.states[i] = state
        return state

    def _owned_rewards(self, agent: AgentRuntime) -> tuple[dict[str, float], dict[str, float]]:
        """The rewards ``agent`` receives and those its objective sees when
        an environment attributed rewards to owners this step."""
        items = []
        for i in agent.reward_envs:
            state = self.states[i]
            if self.fetch[i] and state is not None:
                items.extend(state.rewards)
            else:
                from xdoe.environment import RewardInformation

                items.extend(RewardInformation(uid, value) for uid, value in self.env_rewards[i].items())
        own = {r.uid: r.value for r in own_rewards(agent, items)}
        return own, ({r.uid: r.value for r in items} if agent.all_rewards else own)

    def _check_observations(self) -> None:
        """The observation check (``phase_config.observation_check``) of every
        sensor's value at a step it is due (:meth:`update` keeps ``check_at``,
        and compares the only sensor of a worker's only environment with
        ``check_range`` first: a value inside it needs no call). A Python
        ``int`` inside its ``Discrete`` sensor's range (``env_checks``) is in
        its space; every other value goes to :meth:`ObservationCheck.value`."""
        check = self.observation_check
        assert check is not None
        step = self.step
        for checks, observation in zip(self.env_checks, self.env_obs):
            if len(checks) == 1:
                uid, space, low, high = checks[0]
                if type(observation) is not int or not low <= observation < high:
                    check.value(uid, space, observation, self.episode, step)
            else:
                for uid, space, low, high in checks:
                    value = observation.get(uid)
                    if type(value) is not int or not low <= value < high:
                        check.value(uid, space, value, self.episode, step)

    def bind_actions(self) -> None:
        """Bind every agent's :attr:`~AgentRuntime.action_slot` to the
        environments' actuators now: when an agent joins the worker and when
        an environment's actuators change."""
        for agent in self.agents:
            uid = agent.actuator_id
            slot = -1
            if uid is not None:
                slot = self.action_env.get(uid, 0 if self.one_env else -1)
                if slot >= 0 and self.env_steps[slot][2] != uid:
                    slot = -1
            agent.action_slot = slot

    def _set_action(self, uid: str, value: Any) -> None:
        """Keep ``value`` for actuator ``uid`` until its environment's next
        update (:attr:`env_actions`): the plain value for an environment
        whose only actuator it is, else in the environment's dict."""
        i = self.action_env.get(uid, 0) if self.one_env else self.action_env[uid]
        if self.env_steps[i][2] == uid:
            self.env_actions[i] = value
        else:
            actions = self.env_actions[i]
            if actions is None:
                self.env_actions[i] = {uid: value}
            else:
                actions[uid] = value

    def _leave(self) -> None:
        """Agents all of whose actuators left the episode complete their
        transition (``done``) and stop acting until the episode ends."""
        self.left_any = False
        left: dict[str, bool] = {}
        for fetched, state in zip(self.fetch, self.states):
            if fetched and state is not None and state.left:
                left.update(state.left)
        for index, agent in enumerate(self.agents):
            if agent.left is None and agent.actuator_ids and agent.actuator_ids <= left.keys():
                agent.left = all(left[uid] for uid in agent.actuator_ids)
                if agent.transition is not None:
                    self.act(index, COMPLETE, (True, agent.left, CUT_ENVIRONMENT if agent.left else None))

    def _rebuild_map(self) -> None:
        m = self.sensor_values
        for specs, observation in zip(self.env_specs, self.env_obs):
            if len(specs) == 1:
                m[specs[0][0]] = observation
            else:
                m.update(observation)

    def step_writer(self, agent: AgentRuntime) -> Callable[..., None] | None:
        """The recorder's writer of ``agent``'s step rows in this worker, for
        the transition held as values (:meth:`RunRecorder.step_writer`);
        ``None`` when no step is stored. Taken once, when the agent joins."""
        if self.recorder is None:
            return None
        ids = agent.sensor_ids
        return self.recorder.step_writer(self.index, agent.name, ids[0] if len(ids) == 1 else None, agent.actuator_id)


def _check_action(agent: AgentRuntime, uid: str, action: Any, bounds: tuple[Any, int, int]) -> None:
    """Check ``agent``'s action for actuator ``uid`` against its ``(space,
    low, high)`` (:func:`~xdoe.execution._agent_runtime._bounds`): a Python
    int inside ``low <= action < high`` is in the space, anything else is
    asked of the space's ``contains``.

    Raises:
        RunError: the action is outside the space.
    """
    space, low, high = bounds
    if not (type(action) is int and low <= action < high) and not space.contains(action):
        _outside(agent, uid, action, space)


def _outside(agent: AgentRuntime, uid: str, value: Any, space: Any) -> None:
    raise RunError(f"agent {agent.name!r}: value {value!r} for actuator {uid!r} is outside its space {space}")
