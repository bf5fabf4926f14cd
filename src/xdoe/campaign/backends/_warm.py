"""Warm worker processes for the local process pool (``--jobs``): a
forkserver that has imported what every run needs, so that each worker is a
cheap fork of it instead of a fresh Python start-up.

``xrun experiment-start --jobs N`` starts the forkserver first thing
(:func:`start_forkserver`), so that its imports overlap with the parent's
own work (reading the run documents, asking the store what finished).
"""

from __future__ import annotations

import multiprocessing
from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    from xdoe.campaign._tasks import RunTask

__all__ = ["WARM_MODULES", "warm_modules", "default_start_method", "start_forkserver"]

#: what every run imports (the executor, the store: ``xdoe.campaign._tasks`` imports
#: ``xdoe.store.Store`` with its recorder and claims, numpy, gymnasium, pydantic):
#: loaded once into the forkserver, so that each worker forked from it starts warm
#: (and the common built-in components; not matplotlib: the workers never draw, xrun draws
#: each run's laydown.svg itself)
WARM_MODULES = ("xdoe.campaign._tasks", "xdoe.execution._runner", "xdoe.execution._api",
                "xdoe.documents._run", "xdoe.environment", "xdoe.agent", "numpy", "gymnasium",
                "xdoe.components.environments._gymnasium", "xdoe.components.agents._qlearning",
                "xdoe.components.agents._objectives", "xdoe.simulation", "xdoe.conditions")


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



def start_forkserver(modules: Sequence[str] = WARM_MODULES) -> bool:
    """Start this process's forkserver (if the platform has one and it is
    not running yet) with ``modules`` preloaded; returns whether it runs.
    Preloading only imports: a module that fails to import is skipped there
    and imported by the worker that needs it."""
    if default_start_method() != "forkserver":
        return False
    from multiprocessing import forkserver

    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(list(modules))  # no effect once the server runs
    forkserver.ensure_running()
    return True
