"""Skipping finished runs and resuming interrupted ones: in-process Ctrl-C,
and real SIGKILLs of a run in a subprocess, in the middle of a phase and
between phases, where :mod:`hold` holds it (an episode start: no race with
the run, whatever the machine's speed)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import interrupts
import hold
import pytest
from ruamel.yaml import YAML
from sqlalchemy import select

from xdoe.execution import run
from xdoe.store import Phase, Store

HERE = Path(__file__).resolve().parent


@pytest.fixture(autouse=True)
def _disarm():
    interrupts.ARMED.clear()
    yield
    interrupts.ARMED.clear()


def phase(mode="train", episodes=20, length=5, worker=1, env="xdoe.environments:DummyEnvironment",
          conditions=None, env_params=None, **config):
    params = {"length": length, "sensors": 1, "actuators": 1, "discrete": True, **(env_params or {})}
    return {
        "environments": [{"environment": {"name": env, "uid": "d", "params": params}}],
        "agents": [{"name": "q",
                    "brain": {"name": "xdoe.agents:QLearningBrain", "params": {"alpha": 0.5}},
                    "muscle": {"name": "xdoe.agents:QLearningMuscle",
                               "params": {"epsilon": 0.3, "epsilon_decay": 0.95}},
                    "objective": {"name": "xdoe.agents:RewardObjective"}}],
        "simulation": {"name": "xdoe.simulation:VanillaSimController",
                       "conditions": conditions or []},
        "phase_config": {"mode": mode, "worker": worker, "episodes": episodes, **config},
    }


def document(*phases, uid="resume-run", seed=9):
    return {"uid": uid, "experiment_uid": "resume", "seed": seed,
            "schedule": [{name: body} for name, body in phases]}


INTERRUPTIBLE = [{"name": "xdoe.conditions:EnvironmentTerminationCondition"},
                 {"name": "interrupts:InterruptAfter"}]


def rows(store, instance_id):
    return [(e["phase"], e["worker"], e["episode"], e["agent"], e["steps"], e["reward"])
            for e in store.runs.episodes(instance_id=instance_id)]


def assert_exactly_once(store, instance_id, budget):
    """Every (phase, worker, agent, episode) once; none missing."""
    keys = Counter((p, w, a, e) for p, w, e, a, *_ in rows(store, instance_id))
    assert max(keys.values()) == 1, [k for k, n in keys.items() if n > 1][:5]
    for (name, workers, episodes) in budget:
        for w in range(workers):
            got = sorted(e for (p, ww, a, e) in keys if p == name and ww == w)
            assert got == list(range(episodes)), (name, w, got)


def test_finished_run_is_skipped_and_rerun_forces_a_new_instance(store, tmp_path):
    d = document(("training", phase(episodes=3)))
    first = run(d, store=store, results=tmp_path / "r")
    again = run(d, store=store, results=tmp_path / "r")
    assert first.status == "finished" and again.status == "skipped" and again.ok
    assert again.note == f"skipped: finished earlier (instance {first.instance_id})"
    assert again.instance_id == first.instance_id and again.episodes == 0
    forced = run(d, store=store, results=tmp_path / "r", rerun=True)
    assert forced.status == "finished" and forced.instance_id != first.instance_id
    # a changed document is a new run version: not skipped
    changed = run(document(("training", phase(episodes=4))), store=store, results=tmp_path / "r")
    assert changed.status == "finished"
    assert len(store.runs.instances("finished")) == 3


def test_ctrl_c_mid_phase_resumes_identically_with_one_worker(store, tmp_path):
    d = document(("training", phase(episodes=20, conditions=INTERRUPTIBLE, checkpoint_every=12)),
                 ("testing", phase(mode="test", episodes=4, conditions=INTERRUPTIBLE)))
    with Store(f"sqlite:///{tmp_path / 'ref.sqlite'}") as ref_store:
        reference = run(d, store=ref_store, results=tmp_path / "ref")
        assert reference.ok, reference.traceback
        expected = rows(ref_store, reference.instance_id)
    interrupts.ARMED["at"] = 13
    with pytest.raises(KeyboardInterrupt):
        run(d, store=store, results=tmp_path / "r")
    (inst,) = store.runs.instances()
    assert inst.status == "interrupted"
    interrupts.ARMED.clear()
    resumed = run(d, store=store, results=tmp_path / "r")
    assert resumed.ok and resumed.resumed, resumed.traceback
    assert resumed.instance_id == inst.id and resumed.note == f"resumed interrupted instance {inst.id}"
    assert store.runs.instance(inst.id).status == "finished"
    # same rows as the uninterrupted run, each once
    assert rows(store, inst.id) == expected
    assert resumed.phases[0].episodes == 20 and resumed.phases[1].episodes == 4
    # the results files hold each episode once too
    lines = [json.loads(x) for x in (Path(resumed.results_dir) / "episodes.jsonl").read_text().splitlines()]
    assert sorted((x["phase"], x["worker"], x["episode"]) for x in lines) == sorted(
        (p, w, e) for p, w, e, *_ in expected)
    meta = json.loads((Path(resumed.results_dir) / "session_metadata.json").read_text())
    assert meta["status"] == "finished" and len(meta["resumed"]) == 1
    csv_rows = (Path(resumed.results_dir) / "0-training-average_reward_per_episode.csv").read_text().splitlines()
    assert len(csv_rows) == 1 + 20


def test_ctrl_c_without_checkpoint_restarts_the_phase(store, tmp_path):
    d = document(("training", phase(episodes=6)),
                 ("testing", phase(mode="test", episodes=5, conditions=INTERRUPTIBLE)))
    interrupts.ARMED["at"] = 3
    with pytest.raises(KeyboardInterrupt):
        run(d, store=store, results=tmp_path / "r")
    (inst,) = store.runs.instances()
    with store.database.session() as s:
        phase0_id = s.execute(select(Phase.id).where(Phase.instance_id == inst.id, Phase.index == 0)).scalar_one()
    interrupts.ARMED.clear()
    resumed = run(d, store=store, results=tmp_path / "r")
    assert resumed.ok and resumed.resumed
    assert_exactly_once(store, inst.id, [("training", 1, 6), ("testing", 1, 5)])
    with store.database.session() as s:  # the finished phase was kept, not run again
        assert s.execute(select(Phase.id).where(Phase.instance_id == inst.id, Phase.index == 0)
                         ).scalar_one() == phase0_id
    assert resumed.phases[0].episodes == 6


# -- real kills -------------------------------------------------------------------------------

def _start(tmp_path: Path, d: dict, url: str, points: int) -> subprocess.Popen:
    """Run ``d`` in a subprocess and return once it holds (:mod:`hold`) at
    the ``points``-th episode start of its environments."""
    path = tmp_path / "run.yaml"
    with path.open("w") as fh:
        YAML().dump(d, fh)
    code = (f"import sys; sys.path[:0] = [{str(HERE)!r}, {str(HERE.parent)!r}]; from xdoe.execution import run; "
            f"r = run({str(path)!r}, store={url!r}, results={str(tmp_path / 'r')!r}); "
            "sys.exit(0 if r.ok else 1)")
    hold.request(tmp_path / "hold", points)
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=tmp_path, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, env={**os.environ, hold.HOLD: str(tmp_path / "hold")})
    if not hold.wait_held(proc, tmp_path / "hold"):
        _kill(proc)
        pytest.fail(f"the run ended before its hold: {proc.stderr.read().decode()[-2000:]}")
    return proc


def _kill(proc: subprocess.Popen) -> None:
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)


def _count(store, sql: str) -> int:
    from sqlalchemy import text

    with store.database.engine.connect() as conn:
        return int(conn.execute(text(sql)).scalar_one())


def held_doc(**train_config):
    """Training (2 workers x 30 episodes) and testing (2 x 6) on an environment :mod:`hold` can hold."""
    return document(
        ("training", phase(episodes=30, worker=2, length=4, env="held_environments:HeldDummyEnvironment",
                           **train_config)),
        ("testing", phase(mode="test", episodes=6, worker=2, length=4,
                          env="held_environments:HeldDummyEnvironment")),
        uid="killed-run")


def test_sigkill_in_the_middle_of_a_phase_loses_and_repeats_nothing(store, tmp_path):
    url = store.url
    d = held_doc(checkpoint_every=16)
    proc = _start(tmp_path, d, url, 25)  # held at the 25th of the 60 episode starts of training
    assert _count(store, "select count(*) from checkpoint") >= 3  # checkpoints (and the episodes before them) stored
    _kill(proc)
    (inst,) = store.runs.instances()
    assert inst.status == "running" and inst.pid == proc.pid  # the dead process could not say so
    before = _count(store, "select count(*) from episode")
    assert before > 0
    assert _count(store, "select count(*) from phase where status = 'finished'") == 0
    resumed = run(d, store=store, results=tmp_path / "r")
    assert resumed.ok, resumed.traceback
    assert resumed.resumed and resumed.instance_id == inst.id
    assert "is gone" in resumed.note
    assert_exactly_once(store, inst.id, [("training", 2, 30), ("testing", 2, 6)])
    # the store's instance view (what export reads) is this one instance
    assert [i.status for i in store.runs.instances()] == ["finished"]


def test_sigkill_between_phases_keeps_the_finished_phase(store, tmp_path):
    url = store.url
    d = held_doc()
    proc = _start(tmp_path, d, url, 2 * 30 + 1)  # held at the first episode start of testing
    assert _count(store, "select count(*) from phase where status = 'finished'") == 1
    _kill(proc)
    (inst,) = store.runs.instances()
    with store.database.session() as s:
        training_id = s.execute(select(Phase.id).where(Phase.instance_id == inst.id, Phase.index == 0)).scalar_one()
    kept = _count(store, f"select count(*) from episode where phase_id = {training_id}")
    assert kept == 60
    resumed = run(d, store=store, results=tmp_path / "r")
    assert resumed.ok and resumed.resumed, resumed.traceback
    assert _count(store, f"select max(id) from phase where instance_id = {inst.id} and \"index\" = 0") == training_id
    assert_exactly_once(store, inst.id, [("training", 2, 30), ("testing", 2, 6)])
    assert resumed.phases[0].episodes == 60 and resumed.phases[1].episodes == 12


def test_a_live_running_instance_is_not_taken_over(store, tmp_path):
    d = held_doc()
    proc = _start(tmp_path, d, store.url, 2)  # held at its second episode start
    try:
        assert len(store.runs.instances("running")) == 1
        other = run(d, store=store, results=tmp_path / "r")
        assert other.status == "skipped" and "running in instance" in other.note
    finally:
        _kill(proc)


def test_a_process_dying_at_a_phase_end_resumes_that_phase_with_nothing_left(store, tmp_path):
    """Killed after a phase's last episode and final checkpoint but before
    its end is recorded (the executor writes it with the next phase's start,
    issue 35.2): the phase is ``running`` with all its episodes; the resume
    continues it from its final checkpoint, runs none of them again, and the
    run goes on with the next phase."""
    d = document(
        ("training", phase(episodes=5, worker=2, length=3, env="held_environments:DyingAtCloseDummyEnvironment")),
        ("testing", phase(mode="test", episodes=2, worker=1, length=3)),
        uid="dies-at-close")
    path = tmp_path / "run.yaml"
    with path.open("w") as fh:
        YAML().dump(d, fh)
    code = (f"import sys; sys.path[:0] = [{str(HERE)!r}, {str(HERE.parent)!r}]; from xdoe.execution import run; "
            f"run({str(path)!r}, store={store.url!r}, results={str(tmp_path / 'r')!r})")
    died = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, timeout=300,
                          env={**os.environ, "XDOE_TEST_DIE_AT_CLOSE": str(tmp_path / "died")})
    assert died.returncode == 9 and (tmp_path / "died").exists(), died.stderr.decode()[-2000:]
    (inst,) = store.runs.instances()
    assert inst.status == "running"
    assert [(p.index, p.status) for p in store.runs.phases(inst.id)] == [(0, "running")]
    assert _count(store, "select count(*) from episode") == 10  # every episode of the phase stored
    resumed = run(d, store=store, results=tmp_path / "r")
    assert resumed.ok and resumed.resumed and resumed.instance_id == inst.id, resumed.traceback
    assert_exactly_once(store, inst.id, [("training", 2, 5), ("testing", 1, 2)])
    assert resumed.phases[0].episodes == 10 and resumed.phases[1].episodes == 2
    assert [(p.index, p.status) for p in store.runs.phases(inst.id)] == [(0, "finished"), (1, "finished")]
