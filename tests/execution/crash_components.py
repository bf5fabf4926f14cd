"""A tiny hostile plugin for the plugin-failure tests (issue 10):
``crash_components:CrashingEnvironment`` in a run document fails in the way
its ``how`` parameter names, in the first update of episode ``at_episode``
(``at_episode: -1``: when it is constructed, as ``xrun``'s preflight check does too).

``how``:

* ``raise``: ``RuntimeError(message)`` (default ``"plugin exploded"``);
* ``exit``: ``sys.exit(3)``;
* ``keyboard``: ``raise KeyboardInterrupt`` (no Ctrl-C was pressed);
* ``segv``: a native crash, ``ctypes.string_at(0)`` (SIGSEGV);
* ``kill``: ``os.kill(os.getpid(), signal.SIGKILL)`` (like the OOM killer);
* ``term``: ``os.kill(os.getpid(), signal.SIGTERM)`` (like ``kill PID``);
* ``fill``: fills the file system holding ``fill_dir`` (writes
  ``fill_dir/filler`` until ``ENOSPC``), once: only while ``marker`` does not
  exist, which it then creates (``marker`` lives on another file system);
* ``fork``: leaves a daemon behind (double fork, SIGTERM and SIGINT ignored,
  sleeping 600 s with the run's stdout and stderr open), its pid written
  to ``marker``; the run goes on (issue 33, item 7);
* ``fork_kill``: ``fork``, then SIGKILLs its own process.
"""

from __future__ import annotations

import ctypes
import errno
import os
import signal
import sys
import time
from pathlib import Path

from scale_components import CountdownEnvironment

__all__ = ["CrashingEnvironment"]


class CrashingEnvironment(CountdownEnvironment):
    """:class:`~scale_components.CountdownEnvironment` that fails as ``how`` says."""

    def __init__(self, uid: str, seed: int, how: str = "none", at_episode: int = 1,
                 fill_dir: str = "", marker: str = "", message: str = "plugin exploded", **params) -> None:
        super().__init__(uid, seed, **params)
        self.how, self.at, self.fill_dir, self.marker = how, at_episode, fill_dir, marker
        self.message = message
        if at_episode == -1:
            self._fail()

    def update(self, actuators):
        if self.episode == self.at and self.left == self.length:
            self._fail()
        return super().update(actuators)

    def _fail(self) -> None:
        if self.how == "raise":
            raise RuntimeError(self.message)
        if self.how == "exit":
            sys.exit(3)
        if self.how == "keyboard":
            raise KeyboardInterrupt
        if self.how == "segv":
            ctypes.string_at(0)
        if self.how == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        if self.how == "term":
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(10)  # the signal's handler runs meanwhile
        if self.how in ("fork", "fork_kill"):
            _leave_a_daemon(Path(self.marker))
            if self.how == "fork_kill":
                os.kill(os.getpid(), signal.SIGKILL)
        if self.how == "fill" and not Path(self.marker).exists():
            Path(self.marker).touch()
            with open(Path(self.fill_dir) / "filler", "ab", buffering=0) as fh:
                try:
                    while True:
                        fh.write(b"\0" * 4096)
                except OSError as exc:
                    if exc.errno != errno.ENOSPC:
                        raise


def _leave_a_daemon(pidfile: Path) -> None:
    """Double-fork a process that ignores SIGTERM and SIGINT and sleeps 600 s;
    return once it has written its pid to ``pidfile`` (it ignores the
    signals by then)."""
    child = os.fork()
    if child == 0:
        try:
            if os.fork() > 0:
                os._exit(0)  # the daemon is an orphan now
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            tmp = pidfile.with_name(pidfile.name + ".tmp")
            tmp.write_text(str(os.getpid()))
            os.replace(tmp, pidfile)
            time.sleep(600)
        finally:
            os._exit(0)
    os.waitpid(child, 0)
    while not pidfile.exists():
        time.sleep(0.01)
