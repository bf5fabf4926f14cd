"""Where the runs of a campaign execute, behind one interface
(:class:`Backend`): in this process, a local process pool, a Dask cluster or
SLURM job arrays. See :mod:`xdoe.campaign.backends._base`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xdoe._lazy import lazy_exports, public_names

if TYPE_CHECKING:  # the same names for type checkers (`Name as Name`: a re-export)
    from xdoe.campaign.backends._base import Backend as Backend, FutureBackend as FutureBackend
    from xdoe.campaign.backends._choose import make_backend as make_backend, parse_jobs as parse_jobs
    from xdoe.campaign.backends._dask import DaskBackend as DaskBackend
    from xdoe.campaign.backends._pool import ProcessPoolBackend as ProcessPoolBackend
    from xdoe.campaign.backends._sbatch import SlurmError as SlurmError, SlurmOptions as SlurmOptions
    from xdoe.campaign.backends._sequential import SequentialBackend as SequentialBackend
    from xdoe.campaign.backends._slurm import SlurmBackend as SlurmBackend, SlurmJob as SlurmJob

_EXPORTS = {
    "xdoe.campaign.backends._base": ["Backend", "FutureBackend"],
    "xdoe.campaign.backends._choose": ["make_backend", "parse_jobs"],
    "xdoe.campaign.backends._dask": ["DaskBackend"],
    "xdoe.campaign.backends._pool": ["ProcessPoolBackend"],
    "xdoe.campaign.backends._sbatch": ["SlurmError", "SlurmOptions"],
    "xdoe.campaign.backends._sequential": ["SequentialBackend"],
    "xdoe.campaign.backends._slurm": ["SlurmBackend", "SlurmJob"],
}

__all__ = public_names(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)
