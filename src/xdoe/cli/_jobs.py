"""``xrun experiment-start`` at scale: the options ``--jobs``, ``--dask``,
``--in-process`` and ``--parallel-workers`` (fields of
:class:`xdoe.campaign.CampaignOptions`; :class:`xdoe.campaign.Campaign` routes
the runs to a backend), and skipping finished files before they are read."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

import click

if TYPE_CHECKING:
    from xdoe.execution import RunResult

__all__ = ["scale_options", "skip_finished_files"]

F = Callable[..., Any]


def scale_options(func: F) -> F:
    """``--jobs N|auto``, ``--in-process``, ``--dask ADDRESS|local``, ``--parallel-workers``."""
    func = click.option(
        "--in-process", is_flag=True,
        help="With --jobs 1, run the runs in this process instead of one worker process (for "
             "debuggers and profilers; a native crash of plugin code then ends xrun).",
    )(func)
    func = click.option(
        "--parallel-workers", is_flag=True,
        help="Run the workers of phases with worker > 1 in separate processes feeding the one brain "
             "(faster on CPU-bound environments; the order of experiences becomes timing-dependent).",
    )(func)
    func = click.option(
        "--dask", metavar="ADDRESS|local", default=None,
        help="Run each run as a task on a Dask cluster (scheduler address, or 'local' for a local "
             "cluster with --jobs workers); results go to the shared store.",
    )(func)
    func = click.option(
        "--jobs", "-j", metavar="N|auto", default="1", show_default=True,
        help="Run N run documents at once in separate processes ('auto': one per CPU).",
    )(func)
    return func


def skip_finished_files(files: Sequence[str | Path], store_url: str | None
                        ) -> tuple[list[int], list[tuple[int, "RunResult"]]]:
    """:func:`xdoe.campaign.skip_finished_files` with the store at ``store_url``
    (a store that does not exist yet is not created: nothing finished in it)."""
    from xdoe.campaign import skip_finished_files as skip
    from xdoe.errors import NoStoreError
    from xdoe.store import Store

    try:
        with Store(store_url, create=False) as store:  # a new store is created only when a run starts
            return skip(files, store)
    except NoStoreError:
        return list(range(len(files))), []
