"""How an episode ended is recorded in the episode and step rows
(``terminated``, ``truncated``, ``cut_by``): by the environment, by a
condition's RESET, by the phase's step budget, by a stop."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from runbuilders import counting_phase, run_document, taxi_phase

from xdoe.execution import run
from xdoe.store import Store


def _rows(path: Path, sql: str) -> list[tuple]:
    con = sqlite3.connect(path)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def _run(doc: dict, tmp_path: Path, **kw) -> Path:
    path = tmp_path / "s.sqlite"
    with Store(f"sqlite:///{path}") as store:
        result = run(doc, store=store, results=tmp_path / "r", **kw)
    assert result.ok, result.traceback
    return path


def test_a_step_budget_cut_is_recorded_with_its_cause(tmp_path):
    # 2 workers, episodes of 4 steps, a time limit of 3 steps and a phase budget of 10 steps:
    # each worker's first episode is cut by the time limit (3 + 3 steps), then the budget
    # runs out after 2 + 2 more steps in the middle of the second episodes
    conditions = [{"name": "xdoe.conditions:EnvironmentTerminationCondition"},
                  {"name": "xdoe.conditions:MaxStepsTerminationCondition",
                   "params": {"phase_steps": 10, "episode_steps": 3}}]
    doc = run_document(("training", counting_phase(episodes=100, length=4, conditions=conditions, worker=2)),
                       ("testing", counting_phase(mode="test", episodes=2, length=4)))
    path = _run(doc, tmp_path, store_steps="all")
    episodes = _rows(path, "SELECT phase_id, worker, episode, steps, terminated, truncated, cut_by FROM episode "
                           "ORDER BY phase_id, worker, episode")
    assert episodes == [
        (1, 0, 0, 3, 0, 1, "MaxStepsTerminationCondition"),
        (1, 0, 1, 2, 0, 1, "step_budget"),
        (1, 1, 0, 3, 0, 1, "MaxStepsTerminationCondition"),
        (1, 1, 1, 2, 0, 1, "step_budget"),  # the other worker's episode, cut by the same budget
        (2, 0, 0, 4, 1, 0, None),           # the environment ended it: terminated
        (2, 0, 1, 4, 1, 0, None),
    ]
    # the last step row of each episode says the same; the others are neither
    last = _rows(path, "SELECT phase_id, worker, episode, terminated, truncated, cut_by FROM step WHERE done "
                       "ORDER BY phase_id, worker, episode")
    assert last == [e[:3] + e[4:] for e in episodes]
    assert _rows(path, "SELECT DISTINCT terminated, truncated, cut_by FROM step WHERE NOT done") == [(0, 0, None)]


def test_a_stop_by_another_worker_cuts_the_running_episode(tmp_path):
    # worker 0's first episode ends (objective >= 0 always) and the condition stops the
    # phase; worker 1 is mid-episode: cut by the stop
    stop = {"name": "xdoe.conditions:AgentObjectiveTerminationCondition",
            "params": {"agent": {"phase_avg1": -1.0}}}
    doc = run_document(("training", counting_phase(episodes=5, length=4, worker=2,
                                                   conditions=[{"name": "xdoe.conditions:EnvironmentTerminationCondition"},
                                                               stop])))
    path = _run(doc, tmp_path)
    assert _rows(path, "SELECT worker, episode, terminated, truncated, cut_by FROM episode ORDER BY id") == [
        (0, 0, 1, 0, None), (1, 0, 0, 1, "stop")]


def test_taxi_time_limit_and_step_budget_ends(tmp_path):
    # Taxi: gymnasium's time limit truncates (cut_by environment), the phase
    # budget cuts the last episode
    phase = taxi_phase(episodes=1000)
    phase["simulation"]["conditions"] = [{"name": "xdoe.conditions:EnvironmentTerminationCondition"},
                                         {"name": "xdoe.conditions:MaxStepsTerminationCondition",
                                          "params": {"phase_steps": 100}}]
    path = _run(run_document(("training", phase)), tmp_path, store_steps="all")
    episodes = _rows(path, "SELECT steps, terminated, truncated, cut_by FROM episode ORDER BY id")
    assert sum(e[0] for e in episodes) == 100
    assert episodes[-1][1:] == (0, 1, "step_budget")
    assert all(e[1:] in {(0, 1, "environment"), (1, 0, None)} for e in episodes[:-1])
    assert (0, 1, "environment") in {e[1:] for e in episodes}  # the 30-step time limit
    last = _rows(path, "SELECT terminated, truncated, cut_by FROM step WHERE done ORDER BY id")
    assert last == [e[1:] for e in episodes]


def test_parallel_workers_record_the_budget_cut_too(tmp_path):
    # each worker process counts its own steps against the budget (docs/scale.md): both
    # cut their second episode by the step budget, and the rows say so through the run process
    from xdoe.execution._parallel_workers import parallel_workers

    conditions = [{"name": "xdoe.conditions:EnvironmentTerminationCondition"},
                  {"name": "xdoe.conditions:MaxStepsTerminationCondition",
                   "params": {"phase_steps": 5, "episode_steps": 3}}]
    doc = run_document(("training", counting_phase(episodes=100, length=4, conditions=conditions, worker=2)))
    with parallel_workers():
        path = _run(doc, tmp_path, store_steps="all")
    episodes = _rows(path, "SELECT worker, episode, steps, terminated, truncated, cut_by FROM episode "
                           "ORDER BY worker, episode")
    assert episodes == [(w, e, n, 0, 1, cut) for w in (0, 1)
                        for e, n, cut in ((0, 3, "MaxStepsTerminationCondition"), (1, 2, "step_budget"))]
    last = _rows(path, "SELECT worker, episode, terminated, truncated, cut_by FROM step WHERE done "
                       "ORDER BY worker, episode")
    assert last == [e[:2] + e[3:] for e in episodes]
