"""Warm worker processes for the local process pool (``--jobs``): a
forkserver that has imported what every run needs, so that each worker is a
cheap fork of it instead of a fresh Python start-up.

``xrun experiment-start --jobs N`` starts the forkserver first thing
(:func:`start_forkserver`), so that its imports overlap with the parent's
own work (reading the run documents, asking the store what finished).
"""

from __future__ import annotations

import multiprocessing
import os
from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    from xdoe.campaign._tasks import RunTask

__all__ = ["WARM_MODULES", "warm_modules", "default_start_method", "forkserver_started", "start_forkserver"]

#: what every worker imports: the pool's worker loop (``concurrent.futures.process``
#: and this package's pool module, whose initializer and task every worker runs), the
#: component check (``xrun`` runs it in the first worker), and what every run imports (the
#: executor with the modules it imports when a run starts, the store: ``xdoe.campaign._tasks``
#: imports ``xdoe.store.Store`` with its recorder and claims, numpy, gymnasium): loaded once
#: into the forkserver, so that each worker forked from it starts warm instead of importing
#: them after its fork (and the common built-in components, with the packages of their
#: old names). Not matplotlib: the workers never draw, xrun draws each run's laydown.svg
#: itself; not pydantic's run-document models: a task carries its plan, parsed by xrun;
#: not the store's database driver, which depends on the store.
WARM_MODULES = ("concurrent.futures.process", "multiprocessing.popen_forkserver", "xdoe.campaign.backends._pool",
                "xdoe.campaign._tasks", "xdoe.execution._preflight", "xdoe.execution._runner",
                "xdoe.execution._api", "xdoe.execution._checkpoints", "xdoe.execution._lineage",
                "xdoe.execution._pruning", "xdoe.execution._parallel_workers", "xdoe.execution._resume",
                "xdoe.store.runs._checkpoints", "xdoe.documents._identifiers",
                "xdoe.environment", "xdoe.agent", "numpy", "gymnasium",
                "xdoe.components.environments._gymnasium", "xdoe.components.agents._qlearning",
                "xdoe.components.agents._objectives", "xdoe.environments", "xdoe.agents",
                "xdoe.simulation", "xdoe.conditions")


def warm_modules(tasks: Sequence["RunTask"]) -> list[str]:
    """:data:`WARM_MODULES` and the xdoe modules defining the built-in
    components ``tasks`` name (``xdoe.environments:GymnasiumEnvironment`` ->
    ``xdoe.environments._gymnasium``, found without importing it). User modules
    are not preloaded: their import may have side effects; a worker imports them."""
    from importlib import import_module

    from xdoe._lazy import lazy_origin

    names: set[str] = set()
    for task in tasks:
        plan = task.plan
        if plan is None:
            continue
        for phase in plan.phases:
            names.update(env.environment.name for env in phase.environments)
            names.update(env.reward.name for env in phase.environments if env.reward is not None)
            for agent in phase.agents:
                names.update((agent.brain.name, agent.muscle.name, agent.objective.name))
            names.add(phase.simulation.name)
            names.update(c.name for c in phase.conditions)
    modules = list(WARM_MODULES)
    for name in sorted(names):
        module, _, attr = name.partition(":") if ":" in name else name.rpartition(".")
        if not module.startswith("xdoe."):
            continue
        try:
            import_module(module)  # a package's lazy table (cheap), not the component's module
        except ImportError:
            continue
        origin = lazy_origin(module, attr) or module
        if origin not in modules:
            modules.append(origin)
    return modules


def default_start_method() -> str:
    return "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"


_STARTED_BY: int | None = None  # the pid of the process that started its forkserver here


def forkserver_started() -> bool:
    """Whether :func:`start_forkserver` started this process's forkserver
    (its preloaded modules can no longer change)."""
    return _STARTED_BY == os.getpid()


def start_forkserver(modules: Sequence[str] = WARM_MODULES) -> bool:
    """Start this process's forkserver (if the platform has one and it is
    not running yet) with ``modules`` preloaded; returns whether it runs.
    Preloading only imports: a module that fails to import is skipped there
    and imported by the worker that needs it."""
    global _STARTED_BY
    if default_start_method() != "forkserver":
        return False
    from multiprocessing import forkserver

    context = multiprocessing.get_context("forkserver")
    # no effect once the server runs; the collector is off while it imports (see _gc_paused)
    context.set_forkserver_preload([f"{__package__}._gc_paused", *modules, f"{__package__}._gc_resumed"])
    forkserver.ensure_running()
    _STARTED_BY = os.getpid()
    return True
