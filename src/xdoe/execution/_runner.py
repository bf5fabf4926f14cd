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
from typing import TYPE_CHECKING, Any

from xdoe.agent import Brain
from xdoe.conditions import TerminationCondition
from xdoe.execution._events import PhaseResult, ProgressCallback
from xdoe.execution._hooks import ClockHook, Hook, ProgressHook, RedrawHook
from xdoe.execution._parallel_workers import ParallelPhase, parallel_workers_enabled
from xdoe.execution._phase import PhaseRuntime, build_component
from xdoe.execution._phase_runner import PhaseRunner
from xdoe.execution._plan import AgentSpec, PhasePlan, RunPlan
from xdoe.execution._seeding import Seeds
from xdoe.execution._worker import STOP_RUN

if TYPE_CHECKING:
    from xdoe.errors import ComponentError
    from xdoe.execution._resume import ResumePoint
    from xdoe.store import RunRecorder

__all__ = ["execute_plan", "check_plan"]


def _phase_runtime(plan: RunPlan, phase: PhasePlan, brains: dict[str, Brain],
                   run_condition: TerminationCondition | None, recorder: "RunRecorder | None",
                   **kwargs: Any) -> PhaseRunner:
    """The phase's :class:`PhaseRunner`: in-process (:class:`PhaseRuntime`), or
    worker processes when parallel workers are on and the phase has several
    workers (:mod:`xdoe.execution._parallel_workers`)."""
    if phase.workers > 1 and kwargs.get("restore") is None:
        if parallel_workers_enabled():
            return ParallelPhase(plan, phase, brains, run_condition, recorder,
                                 prepare_brain=kwargs.get("prepare_brain"))
    return PhaseRuntime(plan, phase, brains, run_condition, recorder, **kwargs)


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
    return PhaseResult.from_sums(phase.index, phase.name, phase.mode, resume.aggregates.get(phase.index))


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
    from xdoe.execution._pruning import PruneTracker, pruned_phase
    from xdoe.execution._resume import PhaseCheckpointer

    results = phases_done if phases_done is not None else []
    brains: dict[str, Brain] = {}
    run_condition = None
    if plan.run_condition is not None:
        run_condition = build_component(plan.run_condition, TerminationCondition)
    store = recorder.store if recorder is not None else None
    changes = _lineage_changes(plan)
    prune_phase = pruned_phase(plan) if recorder is not None else None  # run_config.prune
    steps_before = 0
    # the recorder's clock-driven work, one hook for the whole run
    run_hooks: list[Hook] = [] if recorder is None else [ClockHook(recorder)]
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
        hooks: list[Hook] = []
        if checkpointer is not None:
            hooks.append(checkpointer)
        if rt.has_samplers:
            hooks.append(RedrawHook(rt, rt.workers))
        if progress is not None:
            hooks.append(ProgressHook(progress, plan, phase, steps_before))
        hooks.extend(run_hooks)
        if prune_phase is not None and prune_phase.index == phase.index and recorder is not None:
            # a rung reached: Optuna's pruner decides (RunPruned ends the run)
            hooks.append(PruneTracker(plan, phase, recorder,
                                      kept_phase_id=resume.phase_id if continuing and resume is not None else None))
        try:
            verdict = rt.run(result, hooks)
        except BaseException:
            results.append(result)  # the phase so far: a failed run still counts its episodes
            raise
        finally:
            result.wall_time = time.perf_counter() - started
        rt.close()
        if continuing and resume is not None:
            _merge_kept(result, resume.aggregates.get(phase.index, (0, 0, {}, {})))
        steps_before += result.steps
        results.append(result)
        if recorder is not None:  # recorded with the next phase's start or the run's end (one transaction)
            recorder.phase_finished("finished", deferred=True)
        if verdict >= STOP_RUN:
            break
    return results


def import_errors(plan: RunPlan) -> list[str]:
    """As :func:`component_errors`, one line each."""
    return list(dict.fromkeys(str(exc) for exc in component_errors(plan)))


def component_errors(plan: RunPlan) -> "list[ComponentError]":
    """Import every component class of ``plan`` (each ``name: module:Class``
    once, checked against the base class the executor requires) without
    constructing anything, and report every failure, not only the first.

    Returns:
        one error per component that cannot be imported
        (:class:`~xdoe.errors.ComponentImportError`) or is not a suitable
        class, ``key: message`` (:func:`xdoe.execution.load_class`'s
        messages), in document order; ``[]`` when all import.
    """
    from xdoe.environment import Environment, Reward
    from xdoe.agent import Muscle, Objective
    from xdoe.errors import ComponentError
    from xdoe.execution._loading import load_class
    from xdoe.simulation import SimulationController

    specs: list[tuple[Any, type]] = []
    for phase in plan.phases:
        for env in phase.environments:
            specs.append((env.environment, Environment))
            if env.reward is not None:
                specs.append((env.reward, Reward))
        for agent in phase.agents:
            specs += [(agent.brain, Brain), (agent.muscle, Muscle), (agent.objective, Objective)]
        specs.append((phase.simulation, SimulationController))
        specs += [(c, TerminationCondition) for c in phase.conditions]
    if plan.run_condition is not None:
        specs.append((plan.run_condition, TerminationCondition))
    errors: list[ComponentError] = []
    seen: set[tuple[str, type]] = set()
    for spec, base in specs:
        if (spec.name, base) in seen:
            continue  # the same class under another key: once is enough
        seen.add((spec.name, base))
        try:
            load_class(spec.name, spec.key, base=base)
        except ComponentError as exc:
            errors.append(exc)
    return errors


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
        run_condition = build_component(plan.run_condition, TerminationCondition)
    for phase in plan.phases:
        rt = PhaseRuntime(plan, phase, brains, run_condition, None, seeds=Seeds(plan.seed, fixed=seed))
        rt.close()
        lines.append(
            f"{phase.key}: {len(phase.environments)} environment(s), {len(phase.agents)} agent(s), "
            f"{len(rt.conditions)} condition(s), mode {phase.mode}, "
            f"{phase.workers} worker(s) x {phase.episodes} episode(s)"
        )
    return lines
