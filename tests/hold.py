"""Holding a study at a chosen point so that a test can SIGKILL it there,
whatever the machine's speed (no race between the study and the test).

An environment of a test calls :func:`hold_here` at each episode start: the
episodes started are counted across every process of the study (a counter
file under ``flock``) in the folder named by the environment variable
:data:`HOLD`. When the test has written a number to
``<folder>/at`` and the count reaches it at an episode that is at least the
:data:`LEAST`-th of its run's environment (so earlier episodes of that run
are in the store), the episode does not start: ``<folder>/held`` is written
and the process waits to be killed. Without :data:`HOLD` (the unkilled
studies, the restarts that run to the end) nothing changes: the same
episodes, rewards and decisions. Used by ``tests/optuna/held_environments.py``."""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

HOLD = "XDOE_TEST_HOLD"
LEAST = 5


def episodes_started(folder: Path) -> int:
    """Episodes started so far by every process holding at ``folder``."""
    count = folder / "count"
    return int(count.read_text() or 0) if count.exists() else 0


def hold_here(run_episode: int) -> None:
    """Count an episode start (``run_episode``: its index in its environment)
    and hold (wait to be killed) if the test asked for it here."""
    folder = os.environ.get(HOLD)
    if not folder:
        return
    folder_path = Path(folder)
    with open(folder_path / "count", "a+") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        f.seek(0)
        n = int(f.read() or 0) + 1
        f.seek(0)
        f.truncate()
        f.write(str(n))
        f.flush()
        at = folder_path / "at"
        if run_episode < LEAST or not at.exists() or n < int(at.read_text()):
            return
        at.unlink()  # one hold per request
    (folder_path / "held").write_text(str(os.getpid()))
    while True:  # until SIGKILL
        time.sleep(0.05)
