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
* :func:`become_subreaper` and :func:`end_descendants`: nothing a run
  started outlives it (issue 33, item 7). A worker process is made a
  subreaper (Linux ``PR_SET_CHILD_SUBREAPER``), so whatever plugin code
  forks, even a double-forked daemon, stays its descendant; after each run
  it ends them all: SIGTERM, then SIGKILL for those that ignore it. ``xrun``
  is a subreaper too, so the descendants of a worker that died (SIGKILL, a
  crash) come to it, and it ends them when its pool breaks or closes.
"""

from __future__ import annotations

import datetime as _dt
import os
import select
import socket
import threading
import time
from typing import Callable

__all__ = ["process_alive", "watch_process", "become_subreaper", "end_descendants", "helper_pids", "pid_ended"]

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


#: ``prctl`` option: orphaned descendants are re-parented to this process, not to init (Linux >= 3.4).
_PR_SET_CHILD_SUBREAPER = 36
#: Seconds descendants get to end on SIGTERM before they are SIGKILLed.
TERM_GRACE = 1.0


def become_subreaper() -> bool:
    """Make this process the reaper of its orphaned descendants (Linux;
    elsewhere nothing happens). Returns whether it is one now."""
    import sys

    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    except (OSError, AttributeError):  # pragma: no cover - no prctl here
        return False


def helper_pids() -> set[int]:
    """The pids of multiprocessing's own helper processes started by this
    process (the forkserver, the resource tracker): not a run's leftovers."""
    pids: set[int] = set()
    try:
        from multiprocessing import forkserver, resource_tracker

        for pid in (getattr(forkserver._forkserver, "_forkserver_pid", None),
                    getattr(resource_tracker._resource_tracker, "_pid", None)):
            if pid:
                pids.add(int(pid))
    except Exception:  # noqa: BLE001 - private attributes of another Python version: keep none
        pass
    return pids


def end_descendants(keep: "set[int] | frozenset[int]" = frozenset(), grace: float = TERM_GRACE) -> list[int]:
    """End every descendant of this process but ``keep`` (and their own
    descendants) and :func:`helper_pids`: SIGTERM, up to ``grace`` seconds,
    then SIGKILL for those still there; reaped where they are our children.

    Returns:
        the pids that were ended.
    """
    keep = set(keep) | helper_pids()
    children = _proc_children(os.getpid())
    if children is not None and not children - keep:
        return []  # nothing to end, known without psutil (~15 ms of every command's start-up)
    import psutil  # on use, as in process_alive
    try:
        me = psutil.Process()
        kept_trees = set()
        for pid in keep:
            try:
                kept_trees |= {p.pid for p in psutil.Process(pid).children(recursive=True)}
            except psutil.Error:
                pass
        procs = [p for p in me.children(recursive=True) if p.pid not in keep and p.pid not in kept_trees]
    except psutil.Error:
        return []
    if not procs:
        return []
    for proc in procs:
        try:
            proc.terminate()
        except psutil.Error:
            pass
    _gone, alive = psutil.wait_procs(procs, timeout=grace)
    for proc in alive:
        try:
            proc.kill()
        except psutil.Error:
            pass
    psutil.wait_procs(alive, timeout=grace)
    return [p.pid for p in procs]


def _proc_children(pid: int) -> "set[int] | None":
    """The direct children of ``pid`` from ``/proc`` (Linux), ``None`` where
    that cannot be read."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
        found: set[int] = set()
        for tid in tasks:
            with open(f"/proc/{pid}/task/{tid}/children") as fh:
                found.update(int(p) for p in fh.read().split())
        return found
    except (OSError, ValueError):
        return None


def pid_ended(pid: int) -> bool:
    """Whether process ``pid`` (of this host) has ended: gone, or a zombie;
    from ``/proc`` where it can be read (no psutil), else :func:`process_alive`."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rpartition(")")[2].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True
    except (OSError, IndexError):
        return not process_alive(socket.gethostname(), pid)
