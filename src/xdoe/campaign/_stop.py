"""Stopping a campaign from outside its loop: the first Ctrl-C of
``xrun experiment-start`` (issue 33, item 9).

:func:`request_stop` sets a process-wide flag that every local backend reads
before it starts a run (:func:`stop_requested`): no new run starts, the
runs in flight go on until they end (on a Ctrl-C in a terminal, which
reaches the worker processes too, each records itself ``interrupted`` and
stays resumable), and the campaign returns its results; :func:`clear_stop`
resets the flag (a new campaign in the same process).
"""

from __future__ import annotations

import threading

__all__ = ["request_stop", "stop_requested", "clear_stop"]

_STOP = threading.Event()


def request_stop() -> None:
    """Start no more runs in this process (safe in a signal handler)."""
    _STOP.set()


def stop_requested() -> bool:
    """Whether :func:`request_stop` was called since the last :func:`clear_stop`."""
    return _STOP.is_set()


def clear_stop() -> None:
    """Let runs start again."""
    _STOP.clear()
