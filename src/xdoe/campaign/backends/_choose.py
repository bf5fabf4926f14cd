"""Choosing a backend from the command line's ``--jobs``/``--dask``."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from xdoe.errors import InputError

if TYPE_CHECKING:
    from xdoe.campaign._options import CampaignOptions
    from xdoe.campaign.backends._base import Backend
    from xdoe.store import Store

__all__ = ["parse_jobs", "make_backend"]


def parse_jobs(value: str | int | None) -> int:
    """``--jobs``: a positive integer or ``auto`` (the CPU count available to us).

    Raises:
        InputError: anything else.
    """
    if value is None:
        return 1
    if isinstance(value, str) and value.strip().lower() == "auto":
        try:
            return max(1, len(os.sched_getaffinity(0)))
        except AttributeError:  # pragma: no cover - not Linux
            return max(1, os.cpu_count() or 1)
    try:
        jobs = int(value)
    except (TypeError, ValueError):
        raise InputError(f"--jobs: expected a positive integer or 'auto', got {value!r}") from None
    if jobs < 1:
        raise InputError(f"--jobs: expected a positive integer or 'auto', got {value!r}")
    return jobs


def make_backend(options: "CampaignOptions", *, forward_progress: bool = False,
                 store: "Store | None" = None) -> "Backend":
    """The backend ``options`` ask for: Dask when ``options.dask`` is given
    (``jobs`` > 1 sizes a local cluster), a process pool for ``jobs > 1``,
    else one worker process that runs the runs one after another and
    forwards their progress, so that a native crash (SIGSEGV), ``os._exit``
    or SIGKILL of plugin code fails only its run (``xrun``'s default) — or,
    with ``in_process``, this process.
    ``forward_progress``: whether that worker forwards progress (``False``
    when nothing displays it: no event is pickled, sent or read).
    ``store``: the store at ``options.store_url`` the caller holds open; the
    in-process backend records through it (not a second engine on the same
    database), and leaves closing it to the caller.

    Raises:
        InputError: the Dask scheduler cannot be reached.
    """
    # each backend is imported when chosen: parsing --jobs (xrun's first step) loads none of them, and
    # a campaign in this process loads no process pool (multiprocessing, the watchdog) nor Dask's
    if options.in_this_process:
        from xdoe.campaign.backends._sequential import SequentialBackend

        return SequentialBackend({options.store_url: store} if store is not None else None)
    if options.dask:
        from xdoe.campaign.backends._dask import DaskBackend

        return DaskBackend(options.dask, n_workers=options.jobs if options.jobs > 1 else None)
    from xdoe.campaign.backends._pool import ProcessPoolBackend

    if options.jobs > 1:
        return ProcessPoolBackend(options.jobs)
    return ProcessPoolBackend(1, start_method="auto", forward_progress=forward_progress)
