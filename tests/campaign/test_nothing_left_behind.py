"""Issue 33, item 7: a run's worker process and everything it started end
with the run. A plugin leaves a daemon behind (double fork, SIGTERM ignored,
holding xrun's stdout and stderr open); with ``--jobs 1`` and ``--jobs 2``,
whether its run finishes or its worker is SIGKILLed, the daemon is gone
once xrun exits, and xrun's output ends with it (before: the daemon lived
on with PPID 1 and the pipe stayed open, so reading it never ended).

xrun runs in a real subprocess; its output is read to the end (a timeout
fails the test instead of hanging it).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

HERE = Path(__file__).resolve().parent
COMPONENTS = HERE.parent / "execution"
if str(COMPONENTS) not in sys.path:
    sys.path.insert(0, str(COMPONENTS))

from scale_components import countdown_run, write_runs  # noqa: E402


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(COMPONENTS), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env.pop("XRUN_STORE", None)
    return env


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


@pytest.mark.parametrize("how", ["fork", "fork_kill"])
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_what_a_run_forks_ends_with_it(tmp_path: Path, jobs: str, how: str) -> None:
    pidfile = tmp_path / "daemon.pid"
    doc = countdown_run("forker", episodes=3, length=4)
    env = doc["schedule"][0]["training"]["environments"][0]["environment"]
    env["name"] = "crash_components:CrashingEnvironment"
    env["params"] = {"length": 4, "how": how, "at_episode": 1, "marker": str(pidfile)}
    files = write_runs(tmp_path / "runs", [doc, countdown_run("ok", seed=2)])
    argv = [sys.executable, "-m", "xdoe.cli._xrun", "experiment-start", "--jobs", jobs, "--no-laydown",
            "--store", f"sqlite:///{tmp_path / 'x.sqlite'}", "--results", str(tmp_path / "results"), *files]
    try:
        done = subprocess.run(argv, cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=120)
    finally:
        if pidfile.exists() and _alive(int(pidfile.read_text())):  # before the fix: do not leave it running
            daemon = int(pidfile.read_text())
            os.kill(daemon, signal.SIGKILL)
            pytest.fail(f"the daemon {daemon} a run forked outlived xrun")
    assert pidfile.exists()
    assert done.returncode == (0 if how == "fork" else 1), (done.stdout, done.stderr)
    if how == "fork_kill":
        assert "run forker failed: worker process died (killed by SIGKILL)" in done.stderr, done.stderr
    assert not _alive(int(pidfile.read_text()))


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_campaign_leaves_every_row_in_the_sqlite_file_itself(tmp_path: Path, jobs: str) -> None:
    """The worker processes close their store when they end, so the last
    connection folds the WAL into the file and removes ``-wal``/``-shm``:
    a user who copies ``xrun.sqlite`` alone copies every episode (before,
    the worker processes ended with the connection open, and most rows of a
    campaign were only in the 2.5 MB ``-wal`` beside a 150 kB file)."""
    import sqlite3

    files = write_runs(tmp_path / "runs", [countdown_run(f"r{i}", seed=i, episodes=4) for i in range(3)])
    store = tmp_path / "store" / "x.sqlite"
    argv = [sys.executable, "-m", "xdoe.cli._xrun", "experiment-start", "--jobs", jobs, "--no-laydown", "--quiet",
            "--store", f"sqlite:///{store}", "--results", str(tmp_path / "results"), *files]
    done = subprocess.run(argv, cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(p.name for p in store.parent.iterdir()) == ["x.sqlite"]
    copy = tmp_path / "copy.sqlite"
    copy.write_bytes(store.read_bytes())  # the file alone, as a user copies it
    con = sqlite3.connect(copy)
    try:
        assert con.execute("SELECT count(*) FROM episode").fetchone()[0] == 3 * (4 + 1)  # 4 training episodes and 1 test episode per run
    finally:
        con.close()
