"""Executing run documents: component loading, seeding, the phase / episode /
step loop and :func:`run`.

>>> from xdoe.execution import run
>>> result = run("_outputs/run-taxi-study-0000.yaml")      # doctest: +SKIP
>>> result.status, result.mean_rewards("test")              # doctest: +SKIP
('finished', {'learner': 7.9})

Seeding (:mod:`xdoe.execution._seeding`): from the run seed,
``SeedSequence(run_seed, spawn_key=(0, *name_key(agent)))`` for brains,
``(1, phase, worker, *name_key(env uid))`` for environments and
``(2, phase, worker, *name_key(agent))`` for muscles and
``(3, phase, worker, *name_key(env uid))`` for environment-parameter samplers.
Skipping finished runs, resuming interrupted ones and checkpoints:
:mod:`xdoe.execution._resume`; ``load``/``replay`` lineage:
:mod:`xdoe.execution._lineage`. The loop itself is in
:mod:`xdoe.execution._runner` (its docstring lists the order of events and
the defaults).
Running many documents (one store query for all, claims, backends) is
:class:`xdoe.campaign.Campaign`; the loop-agnostic training session is
:class:`xdoe.TrainingSession`. This package imports neither (they import
it). Names are imported on first use (:mod:`xdoe._lazy`), so ``from
xdoe.execution import run`` loads only what a run needs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xdoe._lazy import lazy_exports, public_names

if TYPE_CHECKING:  # the same names for type checkers (`Name as Name`: a re-export)
    from xdoe.execution._api import (
        DEFAULT_RESULTS as DEFAULT_RESULTS,
        RunResult as RunResult,
        check_document as check_document,
        load_file_plan as load_file_plan,
        load_plan as load_plan,
        run as run,
    )
    # checkpoints (issue 4)
    from xdoe.execution._checkpoints import (
        CheckpointInfo as CheckpointInfo,
        CheckpointManager as CheckpointManager,
        checkpoints_of as checkpoints_of,
        latest_checkpoint as latest_checkpoint,
        load_brain as load_brain,
    )
    from xdoe.execution._loading import (
        accepted_parameters as accepted_parameters,
        construct as construct,
        load_class as load_class,
    )
    from xdoe.execution._parallel_workers import parallel_workers as parallel_workers
    from xdoe.execution._preflight import located as located, preflight as preflight
    from xdoe.execution._plan import (
        AgentSpec as AgentSpec,
        ComponentPlan as ComponentPlan,
        EnvironmentPlan as EnvironmentPlan,
        PhasePlan as PhasePlan,
        RunPlan as RunPlan,
        plan_run as plan_run,
    )
    from xdoe.execution._events import PhaseResult as PhaseResult, ProgressEvent as ProgressEvent
    from xdoe.execution._phase_runner import PhaseRunner as PhaseRunner
    from xdoe.execution._runner import (
        check_plan as check_plan,
        execute_plan as execute_plan,
        import_errors as import_errors,
    )
    from xdoe.execution._seeding import (
        brain_seed as brain_seed,
        derive_seed as derive_seed,
        environment_seed as environment_seed,
        muscle_seed as muscle_seed,
    )
    from xdoe.execution._interrupts import sigint_as_ctrl_c as sigint_as_ctrl_c
    from xdoe.execution._resume import (
        Decision as Decision,
        decide as decide,
        decision_for as decision_for,
    )
    from xdoe.execution._watchdog import (
        RunTimeout as RunTimeout,
        WatchBoard as WatchBoard,
        kill_stuck_runs as kill_stuck_runs,
        run_hung as run_hung,
    )

_EXPORTS = {
    "xdoe.execution._api": [
        "DEFAULT_RESULTS", "RunResult", "check_document", "load_file_plan", "load_plan", "run",
    ],
    # checkpoints (issue 4)
    "xdoe.execution._checkpoints": [
        "CheckpointInfo", "CheckpointManager", "checkpoints_of", "latest_checkpoint", "load_brain",
    ],
    "xdoe.execution._loading": ["accepted_parameters", "construct", "load_class"],
    "xdoe.execution._parallel_workers": ["parallel_workers"],
    "xdoe.execution._preflight": ["located", "preflight"],
    "xdoe.execution._plan": [
        "AgentSpec", "ComponentPlan", "EnvironmentPlan", "PhasePlan", "RunPlan", "plan_run",
    ],
    "xdoe.execution._events": ["PhaseResult", "ProgressEvent"],
    "xdoe.execution._phase_runner": ["PhaseRunner"],
    "xdoe.execution._runner": ["check_plan", "execute_plan", "import_errors"],
    "xdoe.execution._seeding": ["brain_seed", "derive_seed", "environment_seed", "muscle_seed"],
    "xdoe.execution._watchdog": ["RunTimeout", "WatchBoard", "kill_stuck_runs", "run_hung"],
    "xdoe.execution._interrupts": ["sigint_as_ctrl_c"],
    "xdoe.execution._resume": ["Decision", "decide", "decision_for"],
}

__all__ = public_names(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)
