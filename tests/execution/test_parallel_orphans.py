"""No process outlives ``xrun experiment-start --parallel-workers``: SIGKILL
of xrun while a phase's workers run in their own processes; 5 s later
nothing of its process group runs any more (the worker processes watch the
run process that started them, as the pool's workers watch xrun). The
restart after such a kill is tests/campaign/test_orphans.py's."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from scale_components import countdown_run, write_runs

COMPONENTS = Path(__file__).resolve().parent  # scale_components (on sys.path: conftest.py)
EPISODES, WORKERS = 600, 3  # ~50 s of episodes: the workers are mid-phase at the kill


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(COMPONENTS), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env.pop("XRUN_STORE", None)
    return env


def _group(pgid: int) -> list[psutil.Process]:
    """The live processes (not zombies) of process group ``pgid``."""
    left = []
    for proc in psutil.process_iter():
        try:
            if os.getpgid(proc.pid) == pgid and proc.status() != psutil.STATUS_ZOMBIE:
                left.append(proc)
        except (ProcessLookupError, psutil.NoSuchProcess):
            continue
    return left


def _workers_started(pgid: int, timeout: float = 90.0) -> bool:
    """Until the group has the phase's worker processes (spawned children)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        spawned = [p for p in _group(pgid) if "spawn_main" in " ".join(p.cmdline())]
        if len(spawned) >= WORKERS:
            return True
        time.sleep(0.1)
    return False


@pytest.mark.slow
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_sigkilled_xrun_leaves_no_worker_process(tmp_path: Path, jobs: str) -> None:
    files = write_runs(tmp_path / "runs", [countdown_run("r0", episodes=EPISODES, length=5, worker=WORKERS,
                                                         sleep=0.05)])
    url = f"sqlite:///{tmp_path / 'x.sqlite'}"
    argv = [sys.executable, "-m", "xdoe.cli._xrun", "experiment-start", "--quiet", "--jobs", jobs,
            "--parallel-workers", "--store", url, "--results", str(tmp_path / "results"), *files]
    proc = subprocess.Popen(argv, cwd=tmp_path, env=_env(), start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert _workers_started(proc.pid), "the phase's worker processes never started"
        time.sleep(4.0)  # past their start-up: mid-phase
        assert proc.poll() is None, "the run ended before the kill (make it longer)"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        time.sleep(5.0)
        left = _group(proc.pid)
        names = [" ".join(p.cmdline())[:120] for p in left if p.is_running()]
    finally:
        for orphan in _group(proc.pid):
            orphan.kill()
    assert names == []
