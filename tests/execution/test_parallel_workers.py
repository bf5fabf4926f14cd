"""Parallel rollout workers: worker processes feeding the one brain."""

from __future__ import annotations

import re
from pathlib import Path
from collections import Counter

import pytest
from scale_components import countdown_run

from xdoe.execution import run
from xdoe.execution._parallel_workers import ParallelPhase, parallel_workers, parallel_workers_enabled
from xdoe.store import Store


def _episodes(url: str) -> list[tuple]:
    with Store(url) as store:
        return sorted((r["phase"], r["worker"], r["episode"], r["steps"], r["reward"]) for r in store.runs.episodes())


def test_switch_is_off_by_default_and_scoped():
    assert not parallel_workers_enabled()
    with parallel_workers():
        assert parallel_workers_enabled()
        with parallel_workers(False):
            assert not parallel_workers_enabled()
    assert not parallel_workers_enabled()


def test_parallel_workers_record_the_same_episodes_as_in_process(tmp_path, monkeypatch):
    created = []
    init = ParallelPhase.__init__

    def spy(self, *args, **kwargs):
        created.append(args[1].name)
        init(self, *args, **kwargs)

    monkeypatch.setattr(ParallelPhase, "__init__", spy)
    doc = countdown_run("pw", episodes=4, worker=3, length=5, test_episodes=2)
    doc["schedule"][1]["testing"]["phase_config"]["worker"] = 2
    one, par = f"sqlite:///{tmp_path / 'one.sqlite'}", f"sqlite:///{tmp_path / 'par.sqlite'}"
    a = run(doc, store=one, results=str(tmp_path / "results-in-process"))
    assert created == []  # in-process by default
    with parallel_workers():
        b = run(doc, store=par, results=str(tmp_path / "results"))
    assert created == ["training", "testing"]
    assert a.status == b.status == "finished", b.traceback
    # these muscles ignore updates: every environment and muscle stream is seeded as in-process
    assert _episodes(one) == _episodes(par)
    assert [(p.episodes, p.steps, p.rewards) for p in a.phases] == [(p.episodes, p.steps, p.rewards)
                                                                    for p in b.phases]
    assert Counter((p, w) for p, w, *_ in _episodes(par)) == Counter(
        {("training", 0): 4, ("training", 1): 4, ("training", 2): 4, ("testing", 0): 2, ("testing", 1): 2})


def test_brain_updates_reach_every_worker_and_steps_are_stored(tmp_path):
    doc = countdown_run("echo", episodes=3, worker=2, length=20, test_episodes=1, sleep=0.005)
    doc["schedule"][0]["training"]["agents"][0]["muscle"]["name"] = "scale_components:EchoMuscle"
    url = f"sqlite:///{tmp_path / 'x.sqlite'}"
    with parallel_workers():
        result = run(doc, store=url, results=str(tmp_path / "results"), store_steps="all")
    assert result.status == "finished", result.traceback
    with Store(url) as store:
        from sqlalchemy import select

        from xdoe.store import Phase, Step

        with store.database.session() as s:
            rows = s.execute(select(Step.worker, Step.episode, Step.actions).join(Phase, Step.phase_id == Phase.id)
                             .where(Phase.name == "training")).all()
    assert len(rows) == 2 * 3 * 20  # every step of every worker
    last = [actions for worker, episode, actions in rows if episode == 2]
    assert len(last) == 40 and all(a == {"cd.push": 2} for a in last)  # both muscles got updates


def _steps(url: str) -> list[tuple]:
    import sqlalchemy as sa

    with Store(url) as store, store.database.engine.connect() as con:
        return sorted(tuple(r) for r in con.execute(sa.text(
            "SELECT phase.name, worker, episode, step, agent, sensors, actions, rewards, objective, done, terminated,"
            " truncated, cut_by FROM step JOIN phase ON step.phase_id = phase.id")))


def test_parallel_workers_store_the_steps_in_process_stores(tmp_path):
    """A worker process's step writer sends the steps the policy wants, the run
    process writes them with its writer of the same key: the rows of in-process."""
    doc = countdown_run("steps", episodes=2, worker=2, length=7, test_episodes=1)
    one, par = f"sqlite:///{tmp_path / 'one.sqlite'}", f"sqlite:///{tmp_path / 'par.sqlite'}"
    a = run(doc, store=one, results=str(tmp_path / "results-in-process"), store_steps="every:3")
    with parallel_workers():
        b = run(doc, store=par, results=str(tmp_path / "results"), store_steps="every:3")
    assert a.status == b.status == "finished", b.traceback
    stored = _steps(one)
    assert stored == _steps(par)
    assert {(r[0], r[1], r[2], r[3]) for r in stored if r[0] == "training"} == {
        ("training", w, e, s) for w in range(2) for e in range(2) for s in (0, 3, 6)}


def test_a_failing_or_dying_worker_fails_the_run_cleanly(tmp_path):
    doc = countdown_run("dies", episodes=3, worker=2, kill_at_episode=1)
    with parallel_workers():
        result = run(doc, store=f"sqlite:///{tmp_path / 'x.sqlite'}", results=str(tmp_path / "results"))
    assert result.status == "failed"
    assert "parallel worker" in result.error and "died" in result.error
    bad = countdown_run("bad", episodes=2, worker=2)
    bad["schedule"][0]["training"]["environments"][0]["environment"]["params"]["length"] = "x"
    with parallel_workers():
        result = run(bad, store=f"sqlite:///{tmp_path / 'y.sqlite'}", results=str(tmp_path / "results"))
    assert result.status == "failed" and re.match(r"parallel worker [01]: environment 'cd'", result.error)


def test_both_phase_kinds_are_phase_runners_and_the_runner_does_not_ask_which(tmp_path):
    from xdoe.execution import PhaseRunner, load_plan
    from xdoe.execution._phase import PhaseRuntime
    from xdoe.execution._runner import _phase_runtime

    plan = load_plan(countdown_run("kinds", episodes=1, worker=2, length=2))
    phase = plan.phases[0]
    kinds = []
    for parallel in (False, True):
        with parallel_workers(parallel):
            rt = _phase_runtime(plan, phase, {}, None, None)
        try:
            assert isinstance(rt, PhaseRunner)
            kinds.append(type(rt))
        finally:
            rt.close()
    assert kinds == [PhaseRuntime, ParallelPhase]
    source = (Path(__file__).parents[2] / "src/xdoe/execution/_runner.py").read_text()
    assert "isinstance(" not in source
