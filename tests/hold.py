"""Holding a process of a test at a chosen point so that the test can kill
it (SIGKILL, SIGINT) there, whatever the machine's speed: no race between
the process and the test, which never polls for a moment to kill at.

Code of a test (an environment at each episode start, a function patched
into a child process, e.g. xgen's file writing) calls :func:`hold_here` at
each of its points: the points passed are counted across every process of
the test (a counter file under ``flock``) in the folder named by the
environment variable :data:`HOLD`. The test asks for a hold with
:func:`request` (``<folder>/at``): when the count reaches it at a point whose
``index`` (e.g. the episode's index in its environment) is at least the
request's ``least`` (so that earlier episodes of that run are in the store),
the point does not run on: its process's pid is added to ``<folder>/held``
and it waits to be killed (a SIGINT raises ``KeyboardInterrupt`` there, as
anywhere) or released (:func:`release`). One hold per request, or, with ``every``, every process holds at
its next point from then on (all the runs in flight of ``--jobs 2``).
:func:`wait_held` waits for the holds. Without :data:`HOLD` (the unkilled
runs, the restarts that run to the end) nothing changes: the same points,
episodes, rewards and decisions, so killed and unkilled runs use the same
documents. Used by the kill, Ctrl-C and leftover tests."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import time
from pathlib import Path

HOLD = "XDOE_TEST_HOLD"
#: tests/ (this module) and tests/execution (the test components)
_TESTS = Path(__file__).resolve().parent
#: The least episode index of a hold in the optuna kill tests (their runs have episodes stored).
LEAST = 5


def points_passed(folder: Path) -> int:
    """Points passed so far by every process holding at ``folder``."""
    count = folder / "count"
    return int(count.read_text() or 0) if count.exists() else 0


def request(folder: Path, points: int, *, least: int = 0, every: bool = False) -> None:
    """Ask for a hold at the ``points``-th point (>= 1) passed from now on
    (at a later one if its ``index`` is below ``least``); with ``every``,
    each process holds at its first point from there on. Clears the holds
    of an earlier request."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "held").unlink(missing_ok=True)
    at = {"at": points_passed(folder) + points, "least": least, "every": every}
    (folder / "at").write_text(json.dumps(at))


def held(folder: Path) -> list[int]:
    """The pids of the processes holding at ``folder``."""
    path = folder / "held"
    return [int(pid) for pid in path.read_text().split()] if path.exists() else []


def wait_held(proc: subprocess.Popen, folder: Path, count: int = 1, timeout: float = 600) -> list[int]:
    """Until ``count`` processes hold at ``folder`` (their pids), or ``proc``
    ended first (the pids holding then, fewer than ``count``: the test
    fails). ``timeout``: a hang guard only, never a moment of the test."""
    deadline = time.monotonic() + timeout
    while len(held(folder)) < count and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    return held(folder)


def hold_here(index: int = 0) -> None:
    """Count a point passed (``index``: its index in its run, e.g. the
    episode's in its environment) and hold (wait to be killed) if the test
    asked for it here."""
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
        at_path = folder_path / "at"
        if not at_path.exists():
            return
        at = json.loads(at_path.read_text())
        if index < at["least"] or n < at["at"]:
            return
        if not at["every"]:
            at_path.unlink()  # one hold per request
        with open(folder_path / "held", "a") as out:  # under the lock: one line per process
            out.write(f"{os.getpid()}\n")
    released = folder_path / "released"
    while not (released.exists() and str(os.getpid()) in released.read_text().split()):  # until killed or released
        time.sleep(0.05)


def release(folder: Path, pids: list[int]) -> None:
    """Let the processes ``pids`` holding at ``folder`` go on (a test that
    needs them alive: a SLURM array task the driver's restart waits for)."""
    with open(folder / "released", "a") as out:
        out.write("".join(f"{pid}\n" for pid in pids))


def child_env(held: Path | None = None) -> dict[str, str]:
    """The environment of an ``xrun`` child process of a test: the test
    components (tests/execution) and this module importable, no
    ``XRUN_STORE`` of the caller's; ``held``: holding at that folder."""
    env = dict(os.environ)
    path = [str(_TESTS / "execution"), str(_TESTS), env.get("PYTHONPATH", "")]
    env["PYTHONPATH"] = os.pathsep.join(path).rstrip(os.pathsep)
    env.pop("XRUN_STORE", None)
    if held is not None:
        env[HOLD] = str(held)
    return env
