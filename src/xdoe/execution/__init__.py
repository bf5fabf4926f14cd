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
Running many documents (tasks, backends) is :mod:`xdoe.campaign`; its
``Backend``, ``RunTask``... are re-exported here for the old import paths.
Names are imported on first use (:mod:`xdoe._lazy`), so ``from
xdoe.execution import run`` loads neither the backends nor the training
session.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xdoe._lazy import lazy_exports

if TYPE_CHECKING:
    from xdoe.execution._api import (
        DEFAULT_RESULTS,
        RunResult,
        check_document,
        load_file_plan,
        load_plan,
        run,
    )
    # many runs live in xdoe.campaign; re-exported here for the old import paths
    from xdoe.campaign import RunTask, execute_task
    from xdoe.campaign.backends import (
        Backend,
        DaskBackend,
        ProcessPoolBackend,
        SequentialBackend,
        make_backend,
    )
    from xdoe.execution._checkpoints import (
        CheckpointInfo,
        CheckpointManager,
        checkpoints_of,
        latest_checkpoint,
        load_brain,
    )
    from xdoe.execution._loading import accepted_parameters, construct, load_class
    from xdoe.execution._parallel_workers import parallel_workers
    from xdoe.execution._plan import (
        AgentSpec,
        ComponentPlan,
        EnvironmentPlan,
        PhasePlan,
        RunPlan,
        plan_run,
    )
    from xdoe.execution._events import PhaseResult, ProgressEvent
    from xdoe.execution._phase_runner import PhaseRunner
    from xdoe.execution._runner import check_plan, execute_plan
    from xdoe.execution._seeding import brain_seed, derive_seed, environment_seed, muscle_seed
    from xdoe.session import TrainingSession  # re-exported: xdoe.TrainingSession is the home

__all__ = [
    "run",
    "RunTask",
    "execute_task",
    "Backend",
    "SequentialBackend",
    "ProcessPoolBackend",
    "DaskBackend",
    "make_backend",
    "parallel_workers",
    "RunResult",
    "PhaseResult",
    "ProgressEvent",
    "PhaseRunner",
    "check_document",
    "load_plan",
    "load_file_plan",
    "DEFAULT_RESULTS",
    "load_class",
    "construct",
    "accepted_parameters",
    "RunPlan",
    "PhasePlan",
    "AgentSpec",
    "EnvironmentPlan",
    "ComponentPlan",
    "plan_run",
    "execute_plan",
    "check_plan",
    "derive_seed",
    "brain_seed",
    "environment_seed",
    "muscle_seed",
    # checkpoints and the loop-agnostic training session (issue 4)
    "CheckpointManager",
    "CheckpointInfo",
    "latest_checkpoint",
    "checkpoints_of",
    "load_brain",
    "TrainingSession",
]

__getattr__, __dir__ = lazy_exports(__name__, globals(), {
    "xdoe.execution._api": ["DEFAULT_RESULTS", "RunResult", "check_document",
                            "load_file_plan", "load_plan", "run"],
    "xdoe.campaign": ["RunTask", "execute_task"],
    "xdoe.campaign.backends": ["Backend", "DaskBackend", "ProcessPoolBackend", "SequentialBackend",
                               "make_backend"],
    "xdoe.execution._checkpoints": ["CheckpointInfo", "CheckpointManager", "checkpoints_of",
                                    "latest_checkpoint", "load_brain"],
    "xdoe.execution._loading": ["accepted_parameters", "construct", "load_class"],
    "xdoe.execution._parallel_workers": ["parallel_workers"],
    "xdoe.execution._plan": ["AgentSpec", "ComponentPlan", "EnvironmentPlan", "PhasePlan", "RunPlan",
                             "plan_run"],
    "xdoe.execution._events": ["PhaseResult", "ProgressEvent"],
    "xdoe.execution._phase_runner": ["PhaseRunner"],
    "xdoe.execution._runner": ["check_plan", "execute_plan"],
    "xdoe.execution._seeding": ["brain_seed", "derive_seed", "environment_seed", "muscle_seed"],
    "xdoe.session": ["TrainingSession"],
})
