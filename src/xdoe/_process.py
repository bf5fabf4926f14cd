"""Processes: whether a recorded process still runs, and noticing that one ended.

* :func:`process_alive`: the one liveness rule used by resume, work claiming
  and ``xrun status``: on this host a process is alive when its pid exists,
  is not a zombie and was not started after the recorded start (a later
  process that reused the pid). On another host nothing can be told
  (``None``); callers then rely on heartbeats.
* :func:`watch_process`: a daemon thread that calls back when a process
  (``xrun``, seen from its worker processes) ends, however it ends (SIGKILL
  too): a Linux pidfd polled without a timeout (no cost while it lives),
  else a check every half second. Worker processes use it so that none
  outlives the ``xrun`` that started it (issue 25). (Not ``prctl``'s
  ``PR_SET_PDEATHSIG``: it fires when the parent *thread* ends, and a
  forkserver's workers have the forkserver, not ``xrun``, as their parent.)
"""

from __future__ import annotations

import datetime as _dt
import os
import select
import socket
import threading
import time
from typing import Callable

__all__ = ["process_alive", "watch_process"]

#: Seconds between two checks of a watched process where no pidfd is available.
POLL_INTERVAL = 0.5


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


def watch_process(pid: int, on_exit: Callable[[], None], *, name: str = "xdoe-watch-process") -> threading.Thread:
    """Call ``on_exit()`` (in a daemon thread) once process ``pid`` has ended.

    Linux: a pidfd (``os.pidfd_open``) polled without a timeout; elsewhere,
    or where pidfds are refused, ``os.kill(pid, 0)`` every
    :data:`POLL_INTERVAL` seconds. A process already gone calls back at once.

    Returns:
        the started thread.
    """

    def wait_pidfd() -> bool:
        try:
            fd = os.pidfd_open(pid)  # type: ignore[attr-defined]
        except ProcessLookupError:
            return True
        except (AttributeError, OSError):
            return False  # no pidfds here: poll
        try:
            poller = select.poll()
            poller.register(fd, select.POLLIN)
            while not poller.poll():
                pass
        finally:
            os.close(fd)
        return True

    def watch() -> None:
        if not wait_pidfd():
            while True:
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    break
                except PermissionError:
                    pass
                time.sleep(POLL_INTERVAL)
        on_exit()

    thread = threading.Thread(target=watch, name=name, daemon=True)
    thread.start()
    return thread
