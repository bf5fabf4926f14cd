"""Many runs: a campaign of run documents executed, skipped or resumed.

* :mod:`xdoe.campaign._tasks`: the one path a run takes (:class:`RunTask`,
  :func:`execute_task`: claim, skip, decide, run, release), the plan parsed
  once and carried by the task; skipping a campaign's finished runs with one
  query (:func:`skip_finished`, :func:`skip_finished_files`);
* :mod:`xdoe.campaign.backends`: where the runs execute, behind one
  :class:`Backend` interface (``SequentialBackend``, ``ProcessPoolBackend``,
  ``DaskBackend``, ``SlurmBackend``, all in :mod:`xdoe.campaign.backends`);
* :mod:`xdoe.campaign._waiting`: :func:`run_all`, a campaign to the end,
  waiting for (or taking over) the runs other processes hold.

Looking at a campaign (status, export, tree) reads the store:
:meth:`xdoe.store.Store.campaign_status`, :meth:`~xdoe.store.Store.export_episodes`,
:meth:`~xdoe.store.Store.build_lineage`.

>>> from xdoe.campaign import make_backend, task_for
>>> with make_backend(jobs=2) as backend:                       # doctest: +SKIP
...     results = list(backend.map_runs([task_for(p, store_url=url) for p in plans]))
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xdoe._lazy import lazy_exports, public_names

if TYPE_CHECKING:  # the same names for type checkers (`Name as Name`: a re-export)
    from xdoe.campaign._tasks import (
        DEFAULT_STALE_AFTER as DEFAULT_STALE_AFTER,
        DONE_STATUSES as DONE_STATUSES,
        RunTask as RunTask,
        execute_task as execute_task,
        skip_finished as skip_finished,
        skip_finished_files as skip_finished_files,
        task_for as task_for,
    )
    from xdoe.campaign._waiting import run_all as run_all
    from xdoe.campaign.backends import (
        Backend as Backend,
        make_backend as make_backend,
        parse_jobs as parse_jobs,
    )

_EXPORTS = {
    "xdoe.campaign._tasks": [
        "DEFAULT_STALE_AFTER", "DONE_STATUSES", "RunTask", "execute_task", "skip_finished",
        "skip_finished_files", "task_for",
    ],
    "xdoe.campaign._waiting": ["run_all"],
    "xdoe.campaign.backends": ["Backend", "make_backend", "parse_jobs"],
}

__all__ = public_names(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)
