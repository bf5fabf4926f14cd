"""Issue 25, item 4: no process outlives ``xrun experiment-start``. SIGKILL
of xrun at seeded random moments (``--jobs 1``: its isolated worker;
``--jobs 2``: the forkserver, the workers, the resource tracker): 5 s later
nothing of its process group runs any more, the run it was in is recorded
``interrupted`` (resumable), and a restart finishes every run exactly once.
With ``--parallel-workers`` the phase's worker processes watch the run process
that started them and end with it too. Each moment is an episode start where
:mod:`hold` holds the campaign (a seeded number of episode starts in), not a
state polled for while the campaign runs on."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import hold
import numpy as np
import psutil
import pytest

from scale_components import countdown_run, write_runs
from xdoe.store import Store

TESTS = Path(__file__).resolve().parents[1]  # hold.py
COMPONENTS = TESTS / "execution"  # on sys.path: conftest.py
RUNS, EPISODES, TEST_EPISODES = 4, 6, 1
PW_EPISODES, WORKERS = 20, 3  # --parallel-workers: each worker held at its 3rd episode start



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


def _group_after(pgid: int, timeout: float = 30.0) -> list[psutil.Process]:
    """The group's live processes once it is empty, or at ``timeout`` (a slow
    machine gets time to end them, a fast one does not wait)."""
    deadline = time.monotonic() + timeout
    while (left := _group(pgid)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


@pytest.mark.slow
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_sigkilled_xrun_leaves_no_process_and_a_restart_finishes_every_run_once(tmp_path: Path, jobs: str) -> None:
    docs = [countdown_run(f"r{i}", seed=i, episodes=EPISODES, length=5, test_episodes=TEST_EPISODES, held=True)
            for i in range(RUNS)]
    files = write_runs(tmp_path / "runs", docs)
    url = f"sqlite:///{tmp_path / 'x.sqlite'}"
    argv = [sys.executable, "-m", "xdoe.cli._xrun", "experiment-start", "--quiet", "--jobs", jobs,
            "--store", url, "--results", str(tmp_path / "results"), *files]
    rng = np.random.default_rng(np.random.SeedSequence(25 + int(jobs)))
    killed_in_run = 0
    for step in rng.integers(1, EPISODES, size=3):
        # held at the step-th episode start of this xrun, in a run (least: not in the preflight check's start)
        hold.request(tmp_path / "hold", int(step), least=1)
        # no pipes: an orphan holding one would keep communicate() waiting
        proc = subprocess.Popen(argv, cwd=tmp_path, env=hold.child_env(tmp_path / "hold"), start_new_session=True,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        assert hold.wait_held(proc, tmp_path / "hold"), "the campaign ended before its hold"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        left = _group_after(proc.pid)
        for orphan in left:
            orphan.kill()
        assert left == [], [" ".join(p.cmdline()) for p in left if p.is_running()]
        if (tmp_path / "x.sqlite").exists():
            with Store(url) as store:
                statuses = [i.status for i in store.runs.instances()]
            killed_in_run += statuses.count("interrupted")  # the runs in flight ended interrupted
    done = subprocess.run(argv, cwd=tmp_path, env=hold.child_env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    with Store(url) as store:
        instances = store.runs.instances()
        assert sorted(i.run_uid for i in instances) == [f"r{i}" for i in range(RUNS)]  # one instance each
        assert all(i.status == "finished" for i in instances)
        for inst in instances:
            keys = [(e["phase_index"], e["worker"], e["episode"]) for e in store.runs.episodes(instance_id=inst.id)]
            assert len(keys) == len(set(keys)) == EPISODES + TEST_EPISODES  # every episode exactly once
    assert killed_in_run > 0  # at least one kill hit a run in flight (else the test proved little)


@pytest.mark.slow
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_sigkilled_xrun_leaves_no_parallel_worker_process(tmp_path: Path, jobs: str) -> None:
    files = write_runs(tmp_path / "runs", [countdown_run("r0", episodes=PW_EPISODES, length=5, worker=WORKERS,
                                                         held=True)])
    url = f"sqlite:///{tmp_path / 'x.sqlite'}"
    argv = [sys.executable, "-m", "xdoe.cli._xrun", "experiment-start", "--quiet", "--jobs", jobs,
            "--parallel-workers", "--store", url, "--results", str(tmp_path / "results"), *files]
    hold.request(tmp_path / "hold", 1, least=2, every=True)  # each worker at its 3rd episode start: mid-phase
    proc = subprocess.Popen(argv, cwd=tmp_path, env=hold.child_env(tmp_path / "hold"), start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        held = hold.wait_held(proc, tmp_path / "hold", WORKERS)
        assert len(held) == WORKERS, f"{len(held)} of the phase's {WORKERS} worker processes held"
        assert {p.pid for p in _group(proc.pid) if "spawn_main" in " ".join(p.cmdline())} >= set(held)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        left = _group_after(proc.pid)
        names = [" ".join(p.cmdline())[:120] for p in left if p.is_running()]
    finally:
        for orphan in _group(proc.pid):
            orphan.kill()
    assert names == []
