"""A phase at run time (:class:`PhaseRuntime`): its components built and
seeded, sensor and actuator ids resolved, termination conditions and progress,
parameter samplers, and the in-process episode loop (:meth:`PhaseRuntime.run`,
the in-process :class:`~xdoe.execution._phase_runner.PhaseRunner`); its
builders are shared with the parallel workers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence

from numpy.random import Generator as _Generator

from xdoe.agent import Brain, Mode, Muscle, Objective
from xdoe.conditions import EnvironmentTerminationCondition, PhaseProgress, TerminationCondition, Verdict
from xdoe.environment import ActuatorInformation, Environment, Reward, SensorInformation
from xdoe.errors import ComponentError
from xdoe.execution._loading import construct, load_class
from xdoe.execution._plan import AgentSpec, ComponentPlan, EnvironmentPlan, PhasePlan, RunPlan
from xdoe.execution._hooks import EpisodeEnd, episode_hooks, step_hooks
from xdoe.execution._seeding import Seeds
from xdoe.execution._stepping import (episode_function, lockstep_functions, overrides, reads_progress, reads_states,
                                      step_function,
                                      step_verdict)
from xdoe._cuts import BUDGET_CUTS, CUT_STOP
from xdoe.execution._worker import (CONTINUE, RESET, STOP_PHASE, STOP_RUN, AgentRuntime, Worker, component_error,
                                    cut_cause)
from xdoe.simulation import SimulationController

if TYPE_CHECKING:
    import numpy as np

    from xdoe.execution._events import PhaseResult
    from xdoe.execution._hooks import Hook
    from xdoe.execution._resume import WorkerState
    from xdoe.store import RunRecorder

__all__ = ["PhaseRuntime", "build_component", "overrides", "phase_conditions", "phase_progress",
           "step_function", "step_verdict", "make_environment"]


# -- construction -------------------------------------------------------------

def build_component(spec: ComponentPlan, base: type, **fixed: Any) -> Any:
    cls = load_class(spec.name, spec.key, base=base)
    return construct(cls, spec.key, spec.params, **fixed)


def phase_conditions(phase: PhasePlan, run_condition: TerminationCondition | None
                      ) -> list[TerminationCondition]:
    """The phase's termination conditions (``EnvironmentTerminationCondition``
    when it names none), then the run's condition."""
    conditions: list[TerminationCondition] = [
        build_component(spec, TerminationCondition) for spec in phase.conditions
    ] or [EnvironmentTerminationCondition()]
    if run_condition is not None:
        conditions.append(run_condition)
    return conditions


def phase_progress(phase: PhasePlan) -> PhaseProgress:
    """Fresh progress counters of a phase (nothing done yet)."""
    return PhaseProgress(
        index=phase.index, name=phase.name, mode=phase.mode, workers=phase.workers,
        episodes=phase.episodes, agents=[a.name for a in phase.agents],
        episodes_done=[0] * phase.workers,
    )


def resolve_ids(
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
class AgentSetup:
    spec: AgentSpec
    sensors: list[SensorInformation]
    actuators: list[ActuatorInformation]
    sensor_env: int
    reward_envs: list[int]


def agent_setups(phase: PhasePlan, baselines: list[Any]) -> list[AgentSetup]:
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
        sensors = resolve_ids(agent.sensors, all_sensors, "sensors", agent.key)
        actuators = resolve_ids(agent.actuators, all_actuators, "actuators", agent.key)
        envs = sorted({env_of[x.uid] for x in (*sensors, *actuators)})
        sensor_env = -1
        for i, baseline in enumerate(baselines):
            if [s.uid for s in sensors] == [s.uid for s in baseline.sensors]:
                sensor_env = i
                break
        if not envs:
            envs = list(range(len(baselines)))
        setups.append(AgentSetup(agent, sensors, actuators, sensor_env, envs))
    return setups


class PhaseRuntime:
    """Everything constructed for one phase; the in-process
    :class:`~xdoe.execution._phase_runner.PhaseRunner` (:meth:`run`)."""

    def __init__(self, plan: RunPlan, phase: PhasePlan, brains: dict[str, Brain],
                 run_condition: TerminationCondition | None, recorder: "RunRecorder | None",
                 *, seeds: Seeds | None = None,
                 prepare_brain: Callable[[AgentSpec, Brain, bool], None] | None = None,
                 restore: "list[WorkerState] | None" = None,
                 only_workers: "list[int] | None" = None) -> None:
        """Construct the phase. ``prepare_brain(spec, brain, fresh)`` is called
        for every agent once its brain is set up and in the phase's mode, before
        the muscles are made (lineage: ``load``/``replay``/resume);
        ``restore`` (resuming a phase) holds each worker's saved state;
        ``seeds``: where the components' seeds come from (default: the run seed's)."""
        self.phase = phase
        if seeds is None:
            seeds = Seeds(plan.seed)
        #: per worker, per environment: the sampler generator (``None`` without samplers)
        self.samplers: list[list[np.random.Generator | None]] = []
        self.controller: SimulationController = build_component(phase.simulation, SimulationController)
        self.conditions = phase_conditions(phase, run_condition)
        states, reports = reads_states(self.conditions), reads_progress(self.conditions)
        self.progress = phase_progress(phase)
        mode = Mode(phase.mode)
        train = mode is Mode.TRAIN
        self.workers: list[Worker] = []
        baselines_0: list[Any] = []
        for w in range(phase.workers) if only_workers is None else only_workers:  # parallel workers: one
            envs: list[Environment] = []
            reward_components: list[Reward | None] = []
            generators: list[np.random.Generator | None] = []
            drawn: dict[str, Any] = {}
            saved = restore[w] if restore is not None and w < len(restore) else None
            for i, spec in enumerate(phase.environments):
                gen = None if spec.samplers is None else seeds.sampler(phase.index, w, spec.uid)
                if gen is not None and saved is not None and i < len(saved.samplers) \
                        and saved.samplers[i] is not None:
                    gen.bit_generator.state = saved.samplers[i]
                generators.append(gen)
                env, params = make_environment(spec, seeds.environment(phase.index, w, spec.uid), gen)
                if params is not None:
                    drawn[spec.uid] = params
                if saved is not None and i < len(saved.envs) and saved.envs[i] is not None \
                        and isinstance(getattr(env, "rng", None), _Generator):
                    env.rng.bit_generator.state = saved.envs[i]
                envs.append(env)
                reward_components.append(None if spec.reward is None else build_component(spec.reward, Reward))
            self.samplers.append(generators)
            worker = Worker(w, phase, envs, reward_components, self.progress, train, recorder, states, reports)
            if drawn:
                worker.episode_extras = {"env_params": drawn}
            worker.progress.states = [None] * len(envs)  # type: ignore[list-item]
            baselines = []
            for i, env in enumerate(envs):
                try:
                    baselines.append(env.start_environment())
                except Exception as exc:
                    raise component_error(
                        f"{phase.environments[i].key}: environment {env.uid!r}: start_environment", exc
                    ) from exc
                worker.set_baseline(i, baselines[-1])
            if not self.workers:
                baselines_0 = baselines
            self.workers.append(worker)
        setups = agent_setups(phase, baselines_0)
        muscles_of: dict[str, list[Muscle]] = {s.spec.name: [] for s in setups}
        for setup in setups:
            spec = setup.spec
            brain = brains.get(spec.name)
            if brain is None:
                brain = build_component(spec.brain, Brain, seed=seeds.brain(spec.name))
                try:
                    brain.setup(setup.sensors, setup.actuators)
                except Exception as exc:
                    raise component_error(f"{spec.key}.brain: setup", exc) from exc
                brains[spec.name] = brain
                fresh = True
            else:
                fresh = False
            brain.mode = mode
            brain.workers = phase.workers
            if prepare_brain is not None:
                prepare_brain(spec, brain, fresh)
        for worker in self.workers:
            for setup in setups:
                spec = setup.spec
                brain = brains[spec.name]
                muscle = build_component(spec.muscle, Muscle, uid=spec.name,
                                         seed=seeds.muscle(phase.index, worker.index, spec.name))
                objective = build_component(spec.objective, Objective)
                try:
                    muscle.setup(setup.sensors, setup.actuators)
                    muscle.mode = mode
                    state = brain.muscle_state()
                    if state is not None:
                        muscle.update(state)
                except Exception as exc:
                    raise component_error(f"{spec.key}.muscle: setup", exc) from exc
                muscles_of[spec.name].append(muscle)
                agent = AgentRuntime(
                    spec.name, brain, muscle, muscles_of[spec.name], objective,
                    setup.sensors, setup.actuators, setup.sensor_env,
                    setup.reward_envs,
                )
                worker.agents.append(agent)
                agent.write_step = worker.step_writer(agent)
                if setup.sensor_env < 0:
                    worker.need_map = True
            worker.bind_actions()
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

    def run(self, result: "PhaseResult", hooks: "Sequence[Hook]" = (), *, judge: bool = True) -> Verdict:
        """The episode loop of the phase's workers in this process (the one
        loop: the run process's, and each parallel worker process's with its
        one worker, :mod:`xdoe.execution._parallel_child`), in rounds: in each
        round every active worker takes one step, in worker order; a worker
        whose episode ended records it and starts its next one before the
        next round, a worker whose episodes are done leaves the rounds. When
        an agent's muscle class acts for several workers in one pass
        (``Muscle.propose_batch``, the vanilla controller), the workers step
        in lockstep: at the start of a round every agent acts in every
        worker in one call (:func:`lockstep_functions`), then each worker
        updates its environments and asks the conditions; a round that a
        worker's step stops drops the actions of the workers after it (they
        never reached their environments). Otherwise each worker takes its
        whole step at its turn; the phase's only active worker runs whole
        episodes in one call when no hook needs steps.

        ``hooks`` (:mod:`xdoe.execution._hooks`) are told of the phase's
        start and end and of every episode end; after a step that did not
        end an episode, those that need steps. ``judge``: ask the conditions'
        ``episode_finished`` (a parallel worker process does not: the run
        process judges). Adds to ``result`` and returns the highest
        phase-level verdict."""
        phase = self.phase
        controller = self.controller
        on_step = step_hooks(hooks)
        on_end = episode_hooks(hooks)
        step = step_function(controller, self.conditions, len(phase.agents))
        # the phase's only active worker runs whole episodes in one call (the same steps)
        episode_steps = (None if on_step else episode_function(controller, self.conditions, len(phase.agents))) \
            or step
        muscles = [type(agent.muscle) for agent in self.workers[0].agents] if self.workers else []
        lockstep = lockstep_functions(controller, self.conditions, muscles)
        episode_conditions = [c.episode_finished for c in self.conditions
                              if judge and overrides(c, "episode_finished")]
        for condition in self.conditions:
            condition.phase_started(self.progress)
        for hook in hooks:
            hook.on_phase_start(self)
        budget = phase.episodes
        reward_sums: dict[str, float] = {a.name: 0.0 for a in phase.agents}
        objective_sums: dict[str, float] = {a.name: 0.0 for a in phase.agents}

        def finish(worker: Worker, truncated: bool, verdict: int, cut_by: str | None) -> int:
            episode = worker.end_episode(truncated, cut_by)
            result.episodes += 1
            result.steps += episode.steps
            for name, value in episode.rewards.items():
                reward_sums[name] += value
            for name, value in episode.objectives.items():
                objective_sums[name] += value
            judged = CONTINUE
            for check in episode_conditions:
                answer = check(episode)
                if answer > judged:
                    judged = answer
            if on_end:
                end = EpisodeEnd(worker.index, worker.episode, episode, truncated, verdict, cut_by)
                for hook in on_end:
                    answer = hook(end)
                    if answer is not None and answer > judged:
                        judged = answer
            return judged

        def steps_for(active: list[Worker]) -> tuple[Callable[[list[Worker]], None] | None, Callable[[Worker], int]]:
            """(the round's acting in lockstep or ``None``, each worker's step in the round)."""
            if len(active) == 1:
                return None, episode_steps
            if lockstep is not None:
                return lockstep
            return None, step

        active = [w for w in self.workers if w.active]  # a resumed phase may have finished workers
        for worker in active:
            worker.start_episode(controller, started=True)
        act_round, run_steps = steps_for(active)
        stop = CONTINUE
        stop_cut = CUT_STOP  # what cuts the episodes still running when the phase stops
        while active and stop < STOP_PHASE:
            retired = False
            if act_round is not None:
                act_round(active)
            for position, worker in enumerate(active):
                verdict = run_steps(worker)
                if verdict >= RESET:
                    cut = cut_cause(worker, verdict)
                    if cut in BUDGET_CUTS:
                        stop_cut = cut  # type: ignore[assignment]
                    answer = finish(worker, False, verdict, cut)
                    if answer > verdict:
                        verdict = answer
                    if verdict < STOP_PHASE and worker.episode < budget:
                        worker.start_episode(controller)
                    else:
                        worker.active = False
                        retired = True
                else:
                    for hook_step in on_step:  # empty unless a hook needs steps
                        answer = hook_step(worker)
                        if answer > verdict:
                            verdict = answer
                if verdict >= STOP_PHASE:
                    stop = verdict
                    if act_round is not None:  # the later workers acted this round, never updated
                        for later in active[position + 1:]:
                            later.retract()
                    break
            if retired:  # the rounds go on without it; steps stay cheap
                active = [w for w in active if w.active]
                act_round, run_steps = steps_for(active)
        for worker in self.workers:
            if worker.in_episode and worker.step > 0:
                finish(worker, True, CONTINUE, stop_cut)
        result.stopped_by = {
            CONTINUE: "episodes", RESET: "episodes", STOP_PHASE: "condition", STOP_RUN: "run_condition"
        }[Verdict(stop)]
        total = max(result.episodes, 1)
        result.rewards = {k: v / total for k, v in reward_sums.items()}
        result.objectives = {k: v / total for k, v in objective_sums.items()}
        for hook in hooks:
            hook.on_phase_end(result)
        return Verdict(stop)

    def redraw(self, worker: "Worker") -> None:
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
                raise component_error(f"environment {spec.uid!r}: close", exc) from exc
            worker.envs[i], drawn[spec.uid] = make_environment(spec, 0, gen)  # type: ignore[assignment]
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
            raise component_error("environment close", errors[0]) from errors[0]


def make_environment(spec: EnvironmentPlan, seed: int,
                      sampler: "np.random.Generator | None") -> tuple[Environment, dict[str, Any] | None]:
    """Construct an environment; with samplers, from ``sampler`` draw its
    parameters, then its seed (see :mod:`xdoe.execution._seeding`), and
    return the drawn values too."""
    if spec.samplers is None or sampler is None:
        return build_component(spec.environment, Environment, uid=spec.uid, seed=seed), None
    params, drawn = spec.samplers.draw(sampler)
    env_seed = int(sampler.integers(2**32))
    cls = load_class(spec.environment.name, spec.environment.key, base=Environment)
    return construct(cls, spec.environment.key, params, uid=spec.uid, seed=env_seed), drawn
