"""The rows a :class:`xdoe.store.Store` reads and writes itself (no view
modules): run and instance queries, checkpoints, claims, stop requests, rungs.

The campaign views (:mod:`xdoe.store._views`) and the recorder type their
store as :class:`StoreRows`, which imports none of them.
"""

from __future__ import annotations

from xdoe.store._checkpoint_rows import CheckpointRows
from xdoe.store._claims import ClaimRows
from xdoe.store._instance_rows import InstanceRows
from xdoe.store._run_rows import RunRows
from xdoe.store._rungs import RungRows
from xdoe.store._stop import StopRows

__all__ = ["StoreRows"]


class StoreRows(RunRows, InstanceRows, CheckpointRows, ClaimRows, StopRows, RungRows):
    """Run, instance, checkpoint, claim, stop-request and rung rows of a store."""
