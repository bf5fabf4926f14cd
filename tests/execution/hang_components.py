"""A plugin that hangs, for the time-limit tests (issue 25):
``hang_components:HangingEnvironment`` is
:class:`~scale_components.CountdownEnvironment` whose ``update()`` never
returns from the first update of episode ``at_episode`` on.

``how``:

* ``sleep``: sleeps forever, a tenth of a second at a time;
* ``spin``: a pure-Python busy loop;
* ``stubborn``: sleeps forever and swallows every exception, the time
  limit's too (only killing its process ends it);
* ``masked``: blocks every signal of its thread (``signal.pthread_sigmask``),
  SIGALRM too, then sleeps forever;
* ``gil``: blocks in C code that holds the GIL (libc ``sleep`` called through
  ``ctypes.PyDLL``), signals blocked: no Python thread of the process runs,
  the watchdog's neither; only another process can end it.
"""

from __future__ import annotations

import ctypes
import signal
import time

from scale_components import CountdownEnvironment

__all__ = ["HangingEnvironment"]


class HangingEnvironment(CountdownEnvironment):
    def __init__(self, uid: str, seed: int, how: str = "sleep", at_episode: int = 1, **params) -> None:
        super().__init__(uid, seed, **params)
        self.how, self.at = how, at_episode

    def update(self, actuators):
        if self.episode >= self.at:
            self._hang()
        return super().update(actuators)

    def _hang(self) -> None:
        if self.how in ("masked", "gil"):
            signal.pthread_sigmask(signal.SIG_BLOCK, set(signal.Signals) - {signal.SIGKILL, signal.SIGSTOP})
        if self.how == "gil":
            ctypes.PyDLL(None).sleep(120)  # GIL held; 120 s: a test that fails still ends
        if self.how == "spin":
            x = 0
            while True:
                x += 1
        while True:
            try:
                time.sleep(0.1)
            except BaseException:  # noqa: BLE001 - the point: it will not stop
                if self.how != "stubborn":
                    raise
