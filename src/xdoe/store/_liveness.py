"""The one liveness rule: a ``running`` instance still runs while its
heartbeat is at most :data:`HEARTBEAT_TIMEOUT` seconds old and, on this host,
its process exists (:func:`xdoe._process.process_alive`: not a zombie, not a
later process that reused the pid); :func:`dead_reason` says why it is not.
Used by resuming, ``xrun status`` and ``xrun tree``; claims go stale after the
same timeout. Light to import (no SQLAlchemy): the command line reads the
default from here.
"""

from __future__ import annotations

import datetime as _dt
import os
import socket

from xdoe._process import process_alive

__all__ = ["HEARTBEAT_TIMEOUT", "dead_reason"]

#: Seconds without a heartbeat after which a ``running`` instance (or a claim)
#: counts as abandoned; the default of every ``--heartbeat-timeout`` option.
HEARTBEAT_TIMEOUT = 120.0


def dead_reason(host: str, pid: int, heartbeat: _dt.datetime | None, start: _dt.datetime, *,
                now: _dt.datetime | None = None, timeout: float = HEARTBEAT_TIMEOUT,
                hostname: str | None = None, this_process_is_dead: bool = False) -> str | None:
    """Why a *running* instance is in fact dead, or ``None`` when it may be alive.

    Args:
        host, pid, heartbeat, start: as recorded (aware UTC datetimes).
        now: the moment to judge at (default: now).
        timeout: seconds of heartbeat age after which it is dead.
        hostname: this host's name (default ``socket.gethostname()``).
        this_process_is_dead: count an instance recorded by this very process
            as dead (a leftover of an earlier ``run()`` in it that died).
    """
    here = hostname if hostname is not None else socket.gethostname()
    if host == here:
        if this_process_is_dead and pid == os.getpid():
            return f"process {pid} on {host} is this process (a leftover)"
        if process_alive(socket.gethostname(), pid, start) is False:
            return f"process {pid} on {host} is gone"
    age = ((now or _dt.datetime.now(_dt.timezone.utc)) - (heartbeat or start)).total_seconds()
    if age > timeout:
        return f"no heartbeat for {age:.0f} s (host {host}, pid {pid})"
    return None
