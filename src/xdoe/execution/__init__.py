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
"""

from xdoe.execution._api import (
    DEFAULT_RESULTS,
    RunResult,
    check_document,
    execute_file,
    load_plan,
    run,
)
from xdoe.execution._backends import (
    Backend,
    DaskBackend,
    ProcessPoolBackend,
    RunTask,
    SequentialBackend,
    execute_task,
    make_backend,
)
from xdoe.execution._parallel_workers import parallel_workers
from xdoe.execution._loading import accepted_parameters, construct, load_class
from xdoe.execution._plan import (
    AgentSpec,
    ComponentSpec,
    EnvironmentSpec,
    PhasePlan,
    RunPlan,
    plan_run,
)
from xdoe.execution._runner import PhaseResult, ProgressEvent, check_plan, execute_plan
from xdoe.execution._seeding import brain_seed, derive_seed, environment_seed, muscle_seed

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
    "execute_file",
    "check_document",
    "load_plan",
    "DEFAULT_RESULTS",
    "load_class",
    "construct",
    "accepted_parameters",
    "RunPlan",
    "PhasePlan",
    "AgentSpec",
    "EnvironmentSpec",
    "ComponentSpec",
    "plan_run",
    "execute_plan",
    "check_plan",
    "derive_seed",
    "brain_seed",
    "environment_seed",
    "muscle_seed",
]

# Checkpoints and the loop-agnostic training session (issue 4).
from xdoe.execution._checkpoints import (  # noqa: E402
    CheckpointInfo,
    CheckpointManager,
    checkpoints_of,
    latest_checkpoint,
    load_brain,
)
from xdoe.execution._session import TrainingSession  # noqa: E402

__all__ += ["CheckpointManager", "CheckpointInfo", "latest_checkpoint", "checkpoints_of",
            "load_brain", "TrainingSession"]
