"""Whether a recorded process (host, pid, start time) still runs.

One place for the liveness rule used by resume, work claiming and
``xrun status``: on this host a process is alive when its pid exists, is not
a zombie and was not started after the recorded start (a later process that
reused the pid). On another host nothing can be told (``None``); callers then
rely on heartbeats.
"""

from __future__ import annotations

import datetime as _dt
import os
import socket

__all__ = ["process_alive"]


def process_alive(host: str, pid: int, started: _dt.datetime | None = None) -> bool | None:
    """``True``/``False`` for a process recorded on this host, ``None`` for another host.

    Args:
        host: the host name recorded with the process.
        pid: its process id.
        started: when it was recorded as started (timezone-aware); a process
            with this pid created more than 1 s later is a different one.
    """
    if host != socket.gethostname():
        return None
    if pid <= 0:
        return False
    if pid == os.getpid():
        return True
    import psutil  # on use: ~15 ms of every command's start-up otherwise (issue 16)

    try:
        proc = psutil.Process(pid)
        if proc.status() == psutil.STATUS_ZOMBIE:
            return False
        if started is not None and proc.create_time() > started.timestamp() + 1.0:
            return False
        return True
    except psutil.NoSuchProcess:
        return False
    except psutil.AccessDenied:
        return True
