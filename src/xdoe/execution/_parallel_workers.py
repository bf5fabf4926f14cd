"""Parallel rollout workers: the workers of a phase in separate processes.

(the switch; the implementation follows below)
"""

from __future__ import annotations

import contextlib
import contextvars
from typing import Iterator

__all__ = ["parallel_workers", "parallel_workers_enabled"]

_ENABLED: contextvars.ContextVar[bool] = contextvars.ContextVar("xdoe_parallel_workers", default=False)


@contextlib.contextmanager
def parallel_workers(enabled: bool = True) -> Iterator[None]:
    """Within the block, runs executed in this thread run every phase with
    ``worker > 1`` in worker processes (``xrun experiment-start
    --parallel-workers``); ``enabled=False`` keeps the in-process default."""
    token = _ENABLED.set(bool(enabled))
    try:
        yield
    finally:
        _ENABLED.reset(token)


def parallel_workers_enabled() -> bool:
    """Whether :func:`parallel_workers` is in effect."""
    return _ENABLED.get()
