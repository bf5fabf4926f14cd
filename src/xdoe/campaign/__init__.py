"""Many runs: a campaign of run documents executed, skipped or resumed.

* :mod:`xdoe.campaign._campaign`: :class:`Campaign`, which owns the store,
  one frozen :class:`CampaignOptions` (:mod:`xdoe.campaign._options`) and the
  run/skip/resume decision (one store query for the state of all its runs,
  one hash per document); :func:`skip_finished_files` skips finished files
  unread (one query);
* :mod:`xdoe.campaign._tasks`: the one path a run takes (:class:`RunTask`,
  :func:`execute_task`: claim, decide under the claim, run, release), the
  plan parsed once and carried by the task;
* :mod:`xdoe.campaign.backends`: where the runs execute, behind one
  :class:`Backend` interface (``SequentialBackend``, ``ProcessPoolBackend``,
  ``DaskBackend``, ``SlurmBackend``, all in :mod:`xdoe.campaign.backends`),
  chosen from the options by :func:`make_backend`;
* :mod:`xdoe.campaign._waiting`: :func:`run_all`, a campaign to the end,
  waiting for (or taking over) the runs other processes hold.

Looking at a campaign (status, export, tree) reads the store:
:meth:`store.views.campaign_status <xdoe.store.views._views.Views.campaign_status>`, :meth:`store.views.export_episodes <xdoe.store.views._views.Views.export_episodes>`,
:meth:`store.views.build_lineage <xdoe.store.views._views.Views.build_lineage>`.

>>> from xdoe.campaign import Campaign, CampaignOptions
>>> from xdoe.execution import load_plan
>>> plans = [load_plan(f) for f in files]                            # doctest: +SKIP
>>> results = Campaign(plans, CampaignOptions(store_url=url, jobs=2)).run()  # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xdoe._lazy import lazy_exports, public_names

if TYPE_CHECKING:  # the same names for type checkers (`Name as Name`: a re-export)
    from xdoe.campaign._campaign import (
        Campaign as Campaign,
        all_done as all_done,
        skip_finished_files as skip_finished_files,
    )
    from xdoe.campaign._options import STORE_WAIT as STORE_WAIT, CampaignOptions as CampaignOptions
    from xdoe.campaign._stop import (
        clear_stop as clear_stop,
        request_stop as request_stop,
        stop_requested as stop_requested,
    )
    from xdoe.campaign._tasks import (
        DEFAULT_STALE_AFTER as DEFAULT_STALE_AFTER,
        DONE_STATUSES as DONE_STATUSES,
        RunTask as RunTask,
        execute_task as execute_task,
        task_for as task_for,
    )
    from xdoe.campaign._waiting import run_all as run_all
    from xdoe.campaign.backends import (
        Backend as Backend,
        make_backend as make_backend,
        parse_jobs as parse_jobs,
    )
    from xdoe.campaign.backends._warm import (
        forkserver_started as forkserver_started,
        start_forkserver as start_forkserver,
    )

_EXPORTS = {
    "xdoe.campaign._campaign": ["Campaign", "all_done", "skip_finished_files"],
    "xdoe.campaign._options": ["CampaignOptions", "STORE_WAIT"],
    "xdoe.campaign._stop": ["clear_stop", "request_stop", "stop_requested"],
    "xdoe.campaign._tasks": ["DEFAULT_STALE_AFTER", "DONE_STATUSES", "RunTask", "execute_task", "task_for"],
    "xdoe.campaign._waiting": ["run_all"],
    "xdoe.campaign.backends": ["Backend", "make_backend", "parse_jobs"],
    "xdoe.campaign.backends._warm": ["forkserver_started", "start_forkserver"],
}

__all__ = public_names(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)
