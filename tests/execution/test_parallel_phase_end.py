"""How a phase run by parallel worker processes ends (``--parallel-workers``):
a worker's own step budget ends that worker only, a phase stop ends them
all, and either way every episode a worker ran is recorded exactly once.

The orderings are forced, not hoped for (phase_end_components.py): worker
1 enters its first action before worker 0 acts (a FIFO) and waits there
until the brain's update for worker 0's last episode has reached its process;
a stop the run process sent while handling that episode is in worker 1's
inbox by then, and worker 1 sees it right after that action."""

from __future__ import annotations

import os
import sqlite3
from collections import Counter
from pathlib import Path

import components
from runbuilders import counting_phase, run_document

from xdoe.execution import run
from xdoe.execution._parallel_workers import parallel_workers
from xdoe.store import Store

DONE = {"name": "xdoe.conditions:EnvironmentTerminationCondition"}


def _agent(tmp_path: Path, watched_episode: int) -> dict:
    """Worker 1 enters its first action, then worker 0 acts; worker 1 acts once
    the brain's update for worker 0's episode ``watched_episode`` arrived."""
    fifo = str(tmp_path / "in-action")
    os.mkfifo(fifo)
    return {"brain": {"name": "phase_end_components:SignallingBrain",
                      "params": {"worker": 0, "episode": watched_episode}},
            "muscle": {"name": "phase_end_components:WaitingMuscle",
                       "params": {"hears": [[0, 0, fifo]], "tells": [[1, 0, fifo]], "waits": [[1, 0]]}}}


def _run_parallel(doc: dict, tmp_path: Path) -> list[tuple]:
    """Run ``doc`` with parallel workers into a SQLite store; its episode rows
    ``(worker, episode, steps, terminated, truncated, cut_by)``, checked
    against what the brain learnt from: each episode the workers ran (all
    its experiences reached the brain) has one row, with its steps, and its
    step rows."""
    components.BRAINS.clear()
    path = tmp_path / "s.sqlite"
    with parallel_workers(), Store(f"sqlite:///{path}") as store:
        result = run(doc, store=store, results=tmp_path / "r", store_steps="all")
    assert result.ok, result.traceback
    con = sqlite3.connect(path)
    try:
        episodes = con.execute("SELECT worker, episode, steps, terminated, truncated, cut_by FROM episode "
                               "ORDER BY worker, episode").fetchall()
        steps = Counter({(w, e): n for w, e, n in con.execute(
            "SELECT worker, episode, count(*) FROM step GROUP BY worker, episode")})
    finally:
        con.close()
    (brain,) = components.BRAINS
    learnt = Counter((w, e) for w, e, *_ in brain.experiences)
    assert Counter({(w, e): n for w, e, n, *_ in episodes}) == learnt == steps
    assert len({(w, e) for w, e, *_ in episodes}) == len(episodes)  # once each
    return episodes


def test_a_workers_own_step_budget_ends_that_worker_only(tmp_path):
    # each worker counts its own steps against phase_steps (docs/scale.md). Worker 1's first
    # action ends only once worker 0 has spent its budget and the run process has handled
    # that episode: worker 1 still runs its own 3 + 2 steps (it used to be stopped there,
    # after 1 step; under load even before its first, recording nothing, the run ok)
    budget = {"name": "xdoe.conditions:MaxStepsTerminationCondition",
              "params": {"phase_steps": 5, "episode_steps": 3}}
    doc = run_document(("training", counting_phase(episodes=100, length=4, conditions=[DONE, budget], worker=2,
                                                   **_agent(tmp_path, 1))))
    assert _run_parallel(doc, tmp_path) == [
        (w, e, n, 0, 1, cut) for w in (0, 1)
        for e, n, cut in ((0, 3, "MaxStepsTerminationCondition"), (1, 2, "step_budget"))]


def test_a_phase_stop_records_the_episodes_the_other_workers_hold(tmp_path):
    # the run process's condition stops the phase at worker 0's episode (4 steps, ended by
    # the environment). Worker 1 is mid-episode, one step taken and its rows not yet sent
    # (fewer than flush_every), when the stop reaches it: that episode is recorded, cut by
    # the stop, once
    stop = {"name": "xdoe.conditions:AgentObjectiveTerminationCondition",
            "params": {"agent": {"phase_avg1": -1.0}}}
    doc = run_document(("training", counting_phase(episodes=1, length=4, conditions=[DONE, stop], worker=2,
                                                   **_agent(tmp_path, 0))))
    assert _run_parallel(doc, tmp_path) == [(0, 0, 4, 1, 0, None), (1, 0, 1, 0, 1, "stop")]
