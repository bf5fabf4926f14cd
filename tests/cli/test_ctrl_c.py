"""Issue 33, item 9: Ctrl-C during ``xrun experiment-start``. The first
stops starting runs, lets the running ones record their interruption, prints
the summary and ``resume with: xrun experiment-start ...`` (the same
arguments) and exits 130; a second Ctrl-C stops at once (exit 130 too).

xrun runs in a real subprocess in its own session; SIGINT is sent to the
process group, as a terminal's Ctrl-C does, once :mod:`hold` holds each run
in flight at its second episode start (never after a sleep, nor at a state
polled for while the runs go on); or to xrun alone, once the store shows
runs with recorded episodes (runs too long to end first).
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
COMPONENTS = HERE.parent / "execution"
if str(COMPONENTS) not in sys.path:
    sys.path.insert(0, str(COMPONENTS))

import hold  # noqa: E402
from scale_components import countdown_run, write_runs  # noqa: E402

from xdoe.store import Store  # noqa: E402

XRUN = [sys.executable, "-m", "xdoe.cli._xrun"]



def _statuses(url: str) -> dict[str, list[str]]:
    with Store(url) as store:
        out: dict[str, list[str]] = {}
        for inst in sorted(store.runs.instances(), key=lambda i: i.id):
            out.setdefault(inst.run_uid, []).append(inst.status)
        return out


def _episodes(url: str) -> int:
    with Store(url) as store:
        return sum(1 for _ in store.runs.episodes())


def _wait_for(condition, proc: subprocess.Popen, what: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert proc.poll() is None, (what, proc.communicate())
        assert time.monotonic() < deadline, what
        time.sleep(0.1)  # polling the store, not timing the test


def _running_with_episodes(store_file: Path, url: str, count: int = 1):
    def check() -> bool:
        if not store_file.exists():
            return False
        try:
            running = sum(s.count("running") for s in _statuses(url).values())
            return running >= count and _episodes(url) > 0
        except Exception:  # noqa: BLE001 - the store is being created
            return False
    return check


def _start(tmp_path: Path, jobs: str, docs: list[dict], held: Path | None = None
           ) -> tuple[subprocess.Popen, list[str], str]:
    files = write_runs(tmp_path / "runs", docs)
    url = f"sqlite:///{tmp_path / 'x.sqlite'}"
    args = ["experiment-start", "--jobs", jobs, "--store", url, "--results", str(tmp_path / "results"), *files]
    proc = subprocess.Popen([*XRUN, *args], cwd=tmp_path, env=hold.child_env(held), start_new_session=True, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return proc, args, url


def _end(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_ctrl_c_stops_starting_runs_prints_the_summary_and_how_to_resume(tmp_path: Path, jobs: str) -> None:
    docs = [countdown_run(f"run-{i}", seed=i, episodes=10, length=5, held=True) for i in range(4)]
    hold.request(tmp_path / "hold", 1, least=1, every=True)  # each run in flight at its 2nd episode start
    proc, args, url = _start(tmp_path, jobs, docs, tmp_path / "hold")
    try:
        assert len(hold.wait_held(proc, tmp_path / "hold", int(jobs))) == int(jobs), proc.communicate()
        os.killpg(proc.pid, signal.SIGINT)  # a terminal's Ctrl-C: xrun and its workers
        out, err = proc.communicate(timeout=120)
    finally:
        _end(proc)
    assert proc.returncode == 130, (out, err)
    assert "Aborted!" not in out + err and "Traceback" not in out + err and "KeyboardInterrupt" not in err
    resume = [line for line in err.splitlines() if line.startswith("resume with: ")]
    assert resume == ["resume with: " + shlex.join(["xrun", *args])], err
    statuses = _statuses(url)
    assert sum(statuses.values(), []).count("interrupted") == int(jobs), statuses  # each run in flight
    assert all(s == ["interrupted"] for s in statuses.values()), statuses  # none failed, none left running
    assert len(statuses) == int(jobs)  # nothing started after the Ctrl-C
    assert "interrupted" in out and "skipped" in out  # the summary: the runs in flight and those never started
    for uid in (d["uid"] for d in docs):
        assert uid in out
    # the printed command resumes the campaign (the interrupted runs continue where they were)
    again = subprocess.run([*XRUN, *shlex.split(resume[0].removeprefix("resume with: "))[1:]], cwd=tmp_path,
                           env=hold.child_env(), capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, (again.stdout, again.stderr)
    assert all(s[-1] == "finished" for s in _statuses(url).values()) and len(_statuses(url)) == len(docs)


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_second_ctrl_c_stops_at_once(tmp_path: Path, jobs: str) -> None:
    """SIGINT to xrun alone: the first leaves the (long) runs in flight
    going, so only the second can end xrun; the workers then record their
    runs interrupted themselves."""
    docs = [countdown_run(f"long-{i}", seed=i, episodes=100_000, length=5, sleep=0.01) for i in range(3)]
    proc, args, url = _start(tmp_path, jobs, docs)
    try:
        _wait_for(_running_with_episodes(tmp_path / "x.sqlite", url, int(jobs)), proc, "a run with episodes")
        os.kill(proc.pid, signal.SIGINT)
        assert proc.stderr is not None
        for line in proc.stderr:  # the first Ctrl-C is acknowledged; xrun keeps going
            if "no new run starts" in line:
                break
        assert proc.poll() is None
        os.kill(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        _end(proc)
    assert proc.returncode == 130, (out, err)
    assert "stopped at once" in err and "resume with: " + shlex.join(["xrun", *args]) in err, err
    _wait_for(lambda: "running" not in sum(_statuses(url).values(), []), proc, "the workers record their runs",
              timeout=60)
    statuses = _statuses(url)
    assert all(s == ["interrupted"] for s in statuses.values()) and len(statuses) == int(jobs), statuses
