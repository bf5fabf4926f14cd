"""An adaptive design with a prune rule (issue 37): ``design: {method: optuna}``
and ``run_config: {prune: ...}`` together, through ``xrun optimize`` in a
subprocess.

* a trial with a pruned run is told ``PRUNED`` (its runs' rung values as its
  intermediate values), a trial whose runs all finished ``COMPLETE``;
  ``xrun analyze`` reports the best complete trial and the pruned ones;
* killed twice (SIGKILL once the store shows a run in the middle of its
  training, slowed a little by ``slow_curves``) and restarted, a
  ``--jobs 1`` study ends with the trials, values, statuses and rung
  decisions of an unkilled ``--jobs 1`` study, and no run ran twice;
* with ``--jobs 2`` the decisions depend on timing (docs/pruning.md): killed
  twice, the study still completes its trials, each told once, each run
  done once, a trial pruned exactly when one of its runs was.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

import pytest
import sqlalchemy as sa
from click.testing import CliRunner

HERE = Path(__file__).resolve().parent
EXECUTION = HERE.parent / "execution"
if str(EXECUTION) not in sys.path:
    sys.path.insert(0, str(EXECUTION))

import prune_components  # noqa: E402

PRUNE = {"method": "median", "min_steps": 100, "interval_steps": 100, "n_startup_trials": 3, "metric": "reward"}
TRIALS, BATCH, REPS = 10, 2, 2
UID = "optp"
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(EXECUTION), str(HERE), str(HERE.parents[1] / "src")])}


def _document(seed: int = 5) -> dict[str, Any]:
    doc = prune_components.document(PRUNE, repetitions=REPS, uid=UID)
    doc["seed"] = seed
    env = doc["definitions"]["environments"]["c"]["environment"]
    env["name"] = "slow_curves:SlowCurveEnvironment"  # slow enough to be killed inside a run
    doc["design"] = {"method": "optuna", "sampler": "tpe", "trials": TRIALS, "batch": BATCH, "startup_trials": 3}
    doc["factors"] = {"lr": {"range": [0.001, 1.0], "scale": "log"}, "width": {"range": [8, 512], "scale": "log"}}
    return doc


def _generate(folder: Path) -> tuple[Path, Path, str]:
    from xdoe.design import generate

    folder.mkdir()
    doc = folder / "doc.yaml"
    doc.write_text(json.dumps(_document()))
    generate(doc, folder / "out")
    return doc, folder / "out", f"sqlite:///{folder / 'xrun.sqlite'}"


def _command(doc: Path, out: Path, url: str, jobs: int) -> list[str]:
    return [sys.executable, "-c", "from xdoe.cli._xrun import main; main()", "optimize", str(doc), "-o", str(out),
            "--jobs", str(jobs), "--store", url, "--no-laydown", "-q"]


def _store(url: str) -> dict[str, Any]:
    from xdoe.store import Store

    with Store(url, read_only=True) as store, store.database.engine.connect() as conn:
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


def _trials(out: Path) -> list[tuple]:
    from xdoe.design._optuna import OptunaSettings, open_study

    study = open_study(out / f"optuna-{UID}.journal", UID, OptunaSettings())
    return [(t.number, t.state.name, t.params, t.values, dict(t.intermediate_values))
            for t in study.get_trials(deepcopy=False)]


def _trial_runs(out: Path) -> dict[int, list[str]]:
    manifest = json.loads((out / "manifest.json").read_text())
    return {int(t): uids for t, uids in manifest["design"]["doe"]["info"]["trial_runs"].items()}


def _run_killed(command: list[str], url: str, store_file: Path, signals: list[Callable[[dict], bool]]) -> int:
    """Run ``command``; SIGKILL it once the store satisfies each of
    ``signals`` in turn (started again after each kill); then run it to the
    end. Returns the kills made."""
    kills = 0
    for seen in signals:
        proc = subprocess.Popen(command, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)
            if not store_file.exists():
                continue
            try:
                state = _store(url)
            except Exception:  # noqa: BLE001 - the store is being created or written
                continue
            if seen(state):
                proc.send_signal(signal.SIGKILL)
                kills += 1
                break
        proc.wait()
        assert proc.returncode == -signal.SIGKILL, f"the study ended before it could be killed: {proc.stderr.read()}"
    done = subprocess.run(command, env=ENV, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return kills


def _ran_once(state: dict[str, Any], runs: int) -> None:
    assert len(state["done"]) == runs
    assert all(len(statuses) == 1 for statuses in state["done"].values()), state["done"]  # one done instance each
    assert not [i for i in state["instances"] if i[1] == "running"]
    keys = [e[:5] for e in state["episodes"]]
    assert len(keys) == len(set(keys))  # no episode recorded twice


def _told_as_run(trials: list[tuple], trial_runs: dict[int, list[str]], done: dict[str, list[str]]) -> None:
    """Every trial told, pruned exactly when one of its runs was."""
    assert [t[0] for t in trials] == list(range(TRIALS))
    for number, state, _params, values, intermediate in trials:
        pruned = any(done[u] == ["pruned"] for u in trial_runs[number])
        assert state == ("PRUNED" if pruned else "COMPLETE"), (number, state)
        if pruned:  # told with its last intermediate value (the runs' rung values)
            assert intermediate and values == [intermediate[max(intermediate)]]


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("reference")
    doc, out, url = _generate(folder / "study")
    done = subprocess.run(_command(doc, out, url, 1), env=ENV, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return {"out": out, "url": url, "trials": _trials(out), "store": _store(url)}


def test_pruned_trials_are_told_pruned_and_analyze_counts_them(reference: dict[str, Any]) -> None:
    trials, state = reference["trials"], reference["store"]
    _ran_once(state, TRIALS * REPS)
    _told_as_run(trials, _trial_runs(reference["out"]), state["done"])
    states = [t[1] for t in trials]
    assert "PRUNED" in states and "COMPLETE" in states  # the study exercises both
    mixed = [t for t, uids in _trial_runs(reference["out"]).items()
             if {state["done"][u][0] for u in uids} == {"finished", "pruned"}]
    assert mixed and all(trials[t][1] == "PRUNED" for t in mixed)  # some runs pruned: the trial is pruned

    from xdoe.cli._xrun import main

    done = CliRunner().invoke(main, ["analyze", str(reference["out"]), "--store", reference["url"],
                                     "--format", "json"])
    assert done.exit_code == 0, done.output
    adaptive = json.loads(done.output[done.output.index("{"):done.output.rindex("}") + 1])["optuna"]
    complete = {t[0]: t[3][0] for t in trials if t[1] == "COMPLETE"}
    assert adaptive["pruned_trials"] == [t[0] for t in trials if t[1] == "PRUNED"]
    assert adaptive["trials"] == len(complete)
    assert adaptive["best"]["trial"] == max(complete, key=complete.get)
    assert adaptive["best"]["value"] == pytest.approx(complete[adaptive["best"]["trial"]])
    text = CliRunner().invoke(main, ["analyze", str(reference["out"]), "--store", reference["url"]]).output
    assert f"{len(complete)} complete trials told (and {len(adaptive['pruned_trials'])} pruned" in text


@pytest.mark.slow
def test_killed_twice_and_restarted_gives_the_unkilled_study(tmp_path: Path, reference: dict[str, Any]) -> None:
    doc, out, url = _generate(tmp_path / "killed")
    runs = TRIALS * REPS
    kills = _run_killed(_command(doc, out, url, 1), url, tmp_path / "killed" / "xrun.sqlite", [
        lambda s: len(s["done"]) >= 3 and max(s["live"], default=0) >= 5,  # inside a run of the first batches
        lambda s: len(s["done"]) >= runs // 2 and max(s["live"], default=0) >= 5])  # inside a run half way
    assert kills == 2
    state = _store(url)
    _ran_once(state, runs)
    assert _trials(out) == reference["trials"]  # the same trials, values, states, intermediate values
    ref = reference["store"]
    assert state["done"] == ref["done"]  # the same statuses
    assert state["rungs"] == ref["rungs"]  # the same decisions, values and peers seen
    assert state["episodes"] == ref["episodes"]
    assert len(state["instances"]) <= len(ref["instances"]) + 2  # at most the killed runs started again


@pytest.mark.slow
def test_with_two_jobs_killed_twice_the_study_completes_and_nothing_runs_twice(tmp_path: Path) -> None:
    doc, out, url = _generate(tmp_path / "jobs2")
    runs = TRIALS * REPS
    kills = _run_killed(_command(doc, out, url, 2), url, tmp_path / "jobs2" / "xrun.sqlite", [
        lambda s: len(s["done"]) >= 3 and max(s["live"], default=0) >= 5,
        lambda s: len(s["done"]) >= runs // 2])
    assert kills == 2
    state = _store(url)
    _ran_once(state, runs)
    trial_runs = _trial_runs(out)
    assert sorted(u for uids in trial_runs.values() for u in uids) == sorted(state["done"])
    _told_as_run(_trials(out), trial_runs, state["done"])


def test_telling_a_pruned_trial_is_idempotent_and_survives_a_kill_between_report_and_tell() -> None:
    import optuna

    from xdoe.design import PrunedTrial
    from xdoe.design._optuna import _report, tell_trials

    study = optuna.create_study(direction="maximize")
    dists = {"x": optuna.distributions.FloatDistribution(0.0, 1.0)}
    for _ in range(3):
        study.ask(dists)
    cut = PrunedTrial({100: 2.0, 300: 5.0})
    _report(study, study.get_trials(deepcopy=False)[1], {100: 2.0})  # killed after reporting one value
    assert tell_trials(study, {0: [1.0], 1: cut, 2: None}) == [0, 1, 2]
    assert tell_trials(study, {0: [1.0], 1: cut, 2: None}) == []  # told once
    t = study.trials
    assert [x.state.name for x in t] == ["COMPLETE", "PRUNED", "FAIL"]
    assert t[1].values == [5.0] and t[1].intermediate_values == {100: 2.0, 300: 5.0}
    assert study.best_trial.number == 0  # a pruned trial is never the best

    two = optuna.create_study(directions=["maximize", "minimize"])
    two.ask(dists)
    assert tell_trials(two, {0: cut}) == [0]
    assert two.trials[0].state.name == "PRUNED" and two.trials[0].values is None
