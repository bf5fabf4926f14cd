"""Running ``xrun optimize`` in a subprocess, reading its store, and killing
it (SIGKILL of its process group) where :mod:`hold` holds it (an episode
count, in the middle of a run): the kill tests of adaptive studies with a
prune rule (issue 37)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import sqlalchemy as sa

import hold

HERE = Path(__file__).resolve().parent
EXECUTION = HERE.parent / "execution"
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(EXECUTION), str(HERE), str(HERE.parent), str(HERE.parents[1] / "src")])}


def trials(out: Path, uid: str) -> list[tuple]:
    """``(number, state, params, values, intermediate values)`` of each trial of the study's journal."""
    from xdoe.design._optuna import OptunaSettings, open_study

    study = open_study(out / f"optuna-{uid}.journal", uid, OptunaSettings())
    return [(t.number, t.state.name, t.params, t.values, dict(t.intermediate_values))
            for t in study.get_trials(deepcopy=False)]


def command(doc: Path, out: Path, url: str, jobs: int) -> list[str]:
    """``xrun optimize`` of ``doc`` into ``out`` with the store ``url`` and ``--jobs``."""
    return [sys.executable, "-c", "from xdoe.cli._xrun import main; main()", "optimize", str(doc), "-o", str(out),
            "--jobs", str(jobs), "--store", url, "--no-laydown", "-q"]


def store(url: str) -> dict[str, Any]:
    """What the store holds: every run instance, the episodes and rung rows
    of the done (finished or pruned) ones, the episodes of each running
    instance (``live``), and the run uid -> statuses of its done instances."""
    from xdoe.store import Store

    with Store(url, read_only=True) as opened, opened.database.engine.connect() as conn:
        instances = [tuple(r) for r in conn.execute(sa.text(
            "SELECT r.uid, i.status FROM run r JOIN run_instance i ON i.run_id = r.id ORDER BY i.id")).all()]
        episodes = [tuple(r) for r in conn.execute(sa.text(
            "SELECT r.uid, p.name, e.worker, e.episode, e.agent, e.steps, e.reward FROM episode e "
            "JOIN phase p ON p.id = e.phase_id JOIN run_instance i ON i.id = p.instance_id "
            "JOIN run r ON r.id = i.run_id WHERE i.status IN ('finished', 'pruned') "
            "ORDER BY r.uid, p.\"index\", e.worker, e.episode, e.agent")).all()]
        live = [int(n) for n in conn.execute(sa.text(
            "SELECT count(e.id) FROM run_instance i JOIN phase p ON p.instance_id = i.id "
            "JOIN episode e ON e.phase_id = p.id WHERE i.status = 'running' GROUP BY i.id")).scalars()]
        rungs = sorted(tuple(r) for r in conn.execute(sa.text(
            "SELECT r.uid, g.phase_index, g.rung, g.step, g.value, g.pruned, g.peers FROM rung g "
            "JOIN run_instance i ON i.id = g.instance_id JOIN run r ON r.id = i.run_id")).all())
    done: dict[str, list[str]] = {}
    for uid, status in instances:
        if status in ("finished", "pruned"):
            done.setdefault(uid, []).append(status)
    return {"instances": instances, "done": done, "episodes": episodes, "rungs": rungs, "live": live}


def trial_runs(out: Path) -> dict[int, list[str]]:
    """Trial number -> its run uids (the manifest's ``trial_runs``)."""
    manifest = json.loads((out / "manifest.json").read_text())
    return {int(t): uids for t, uids in manifest["design"]["doe"]["info"]["trial_runs"].items()}


def run_killed(command: list[str], url: str, folder: Path, holds: list[int]) -> int:
    """Run ``command`` in a process group of its own, holding (:mod:`hold`,
    its counter in ``folder``) at the episode that starts ``holds[k]``
    episodes after the k-th start, and SIGKILL the group (xrun and its
    ``--jobs`` workers) there, with a run of the store ``url`` in the middle
    of its training; then run it to the end. Returns the kills made.
    Each hold must come before the study's end: the test asserts that it did."""
    kills = 0
    folder.mkdir(exist_ok=True)
    for episodes in holds:
        hold.request(folder, episodes, least=hold.LEAST)
        proc = subprocess.Popen(command, env={**ENV, hold.HOLD: str(folder)}, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, start_new_session=True)
        if hold.wait_held(proc, folder):
            assert max(store(url)["live"], default=0) >= hold.LEAST  # a run held with its episodes so far stored
            os.killpg(proc.pid, signal.SIGKILL)
            kills += 1
        proc.wait()
        assert proc.returncode == -signal.SIGKILL, f"the study ended before its hold: {proc.stderr.read()}"
        wait_gone(proc.pid)
    done = subprocess.run(command, env=ENV, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return kills


def study(folder: Path, data: dict[str, Any], uid: str, jobs: int, kills: list[int] | None = None) -> dict[str, Any]:
    """Generate ``data`` (an experiment document with an optuna design) into
    ``folder/out`` and run ``xrun optimize`` on it with ``--jobs``, killed at
    each of ``kills`` (:func:`run_killed`) or not at all; the trials of its
    journal, the store and the manifest's ``trial_runs``."""
    from xdoe.design.runfiles import generate

    folder.mkdir()
    doc = folder / "doc.yaml"
    doc.write_text(json.dumps(data))
    generate(doc, folder / "out")
    url = f"sqlite:///{folder / 'xrun.sqlite'}"
    cmd = command(doc, folder / "out", url, jobs)
    if kills:
        assert run_killed(cmd, url, folder / "hold", kills) == len(kills)
    else:
        done = subprocess.run(cmd, env=ENV, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
    return {"trials": trials(folder / "out", uid), "store": store(url), "trial_runs": trial_runs(folder / "out")}


def alive(group: int) -> list[int]:
    """The processes of ``group`` that are not zombies (``/proc``: a zombie
    the container's init never reaps still answers ``killpg(group, 0)``)."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == group and fields[0] != "Z":
            out.append(int(stat.parent.name))
    return out


def wait_gone(group: int) -> None:
    """Until no process of the killed group runs (its workers die with it)."""
    deadline = time.monotonic() + 30
    while alive(group):
        assert time.monotonic() < deadline, f"process group {group} still runs after SIGKILL: {alive(group)}"
        time.sleep(0.01)


def ran_once(state: dict[str, Any], runs: int) -> None:
    """Each of ``runs`` runs done by exactly one instance, none left running, no episode twice."""
    assert len(state["done"]) == runs
    assert all(len(statuses) == 1 for statuses in state["done"].values()), state["done"]  # one done instance each
    assert not [i for i in state["instances"] if i[1] == "running"]
    keys = [e[:5] for e in state["episodes"]]
    assert len(keys) == len(set(keys))  # no episode recorded twice


