"""Where the runs of a campaign execute, behind one interface
(:class:`Backend`): in this process, a local process pool, a Dask cluster or
SLURM job arrays. See :mod:`xdoe.campaign.backends._base`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xdoe._lazy import lazy_exports

if TYPE_CHECKING:
    from xdoe.campaign.backends._base import Backend, FutureBackend
    from xdoe.campaign.backends._choose import make_backend, parse_jobs
    from xdoe.campaign.backends._dask import DaskBackend
    from xdoe.campaign.backends._pool import ProcessPoolBackend
    from xdoe.campaign.backends._sbatch import SlurmError, SlurmOptions
    from xdoe.campaign.backends._sequential import SequentialBackend
    from xdoe.campaign.backends._slurm import SlurmBackend, SlurmJob

__all__ = [
    "Backend",
    "FutureBackend",
    "SequentialBackend",
    "ProcessPoolBackend",
    "DaskBackend",
    "SlurmBackend",
    "SlurmJob",
    "SlurmOptions",
    "SlurmError",
    "make_backend",
    "parse_jobs",
]

__getattr__, __dir__ = lazy_exports(__name__, globals(), {
    "xdoe.campaign.backends._base": ["Backend", "FutureBackend"],
    "xdoe.campaign.backends._choose": ["make_backend", "parse_jobs"],
    "xdoe.campaign.backends._dask": ["DaskBackend"],
    "xdoe.campaign.backends._pool": ["ProcessPoolBackend"],
    "xdoe.campaign.backends._sbatch": ["SlurmError", "SlurmOptions"],
    "xdoe.campaign.backends._sequential": ["SequentialBackend"],
    "xdoe.campaign.backends._slurm": ["SlurmBackend", "SlurmJob"],
})
