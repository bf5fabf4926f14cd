"""An adaptive design with a prune rule (issue 37): ``design: {method: optuna}``
and ``run_config: {prune: ...}`` together, through ``xrun optimize`` in a
subprocess.

* a trial with a pruned run is told ``PRUNED`` (its runs' rung values as its
  intermediate values), a trial whose runs all finished ``COMPLETE``;
  ``xrun analyze`` reports the best complete trial and the pruned ones;
* killed twice (SIGKILL in the middle of a run's training, where
  ``prune_components.CurveEnvironment`` holds it) and restarted, a
  ``--jobs 1`` study ends with the trials, values, statuses and rung
  decisions of an unkilled ``--jobs 1`` study, and no run ran twice;
* with ``batch_runs`` (each batch judged against the batches before it,
  docs/pruning.md) a ``--jobs 2`` study killed twice ends with the same
  trials and decisions as the unkilled ``--jobs 1`` one: the decisions do
  not depend on ``--jobs``. The Taxi version: ``test_optuna_taxi.py``.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import kill_study

import prune_components

TRIALS, BATCH, REPS = 10, 2, 2
PRUNE = {"method": "median", "min_steps": 100, "interval_steps": 100, "n_startup_trials": 3, "metric": "reward",
         "batch_runs": BATCH * REPS}
UID = "optp"


def _document(seed: int = 3) -> dict[str, Any]:
    doc = prune_components.document(PRUNE, repetitions=REPS, uid=UID)
    doc["seed"] = seed
    env = doc["definitions"]["environments"]["c"]["environment"]
    env["params"]["noise"] = 1.5  # the two runs of a trial can be decided apart (trials 2 and 6 are)
    doc["design"] = {"method": "optuna", "sampler": "tpe", "trials": TRIALS, "batch": BATCH, "startup_trials": 3}
    doc["factors"] = {"lr": {"range": [0.001, 1.0], "scale": "log"}, "width": {"range": [8, 512], "scale": "log"}}
    return doc


def _generate(folder: Path) -> tuple[Path, Path, str]:
    from xdoe.design.runfiles import generate

    folder.mkdir()
    doc = folder / "doc.yaml"
    doc.write_text(json.dumps(_document()))
    generate(doc, folder / "out")
    return doc, folder / "out", f"sqlite:///{folder / 'xrun.sqlite'}"


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
    done = subprocess.run(kill_study.command(doc, out, url, 1), env=kill_study.ENV, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return {"out": out, "url": url, "trials": kill_study.trials(out, UID), "store": kill_study.store(url),
            "stdout": done.stdout, "stderr": done.stderr}


def test_quiet_says_only_errors_and_the_final_summary(reference: dict[str, Any]) -> None:
    """``xrun optimize -q`` (kill_study's command): no line per pruned run,
    trial or batch; the best trial at the end, as other commands' ``-q``."""
    assert "pruned" in {s for states in reference["store"]["done"].values() for s in states}
    assert reference["stderr"] == ""  # no "run ... pruned at rung" line, no warning
    lines = reference["stdout"].splitlines()
    assert lines and all(line.startswith("best trial ") for line in lines), lines


def test_pruned_trials_are_told_pruned_and_analyze_counts_them(reference: dict[str, Any]) -> None:
    trials, state = reference["trials"], reference["store"]
    kill_study.ran_once(state, TRIALS * REPS)
    _told_as_run(trials, kill_study.trial_runs(reference["out"]), state["done"])
    states = [t[1] for t in trials]
    assert "PRUNED" in states and "COMPLETE" in states  # the study exercises both
    mixed = [t for t, uids in kill_study.trial_runs(reference["out"]).items()
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
    quarter = len(reference["store"]["episodes"]) // 4
    kills = kill_study.run_killed(kill_study.command(doc, out, url, 1), url, tmp_path / "hold", [quarter, quarter])
    assert kills == 2
    state = kill_study.store(url)
    kill_study.ran_once(state, runs)
    assert kill_study.trials(out, UID) == reference["trials"]  # the same trials, values, states, intermediate values
    ref = reference["store"]
    assert state["done"] == ref["done"]  # the same statuses
    assert state["rungs"] == ref["rungs"]  # the same decisions, values and peers seen
    assert state["episodes"] == ref["episodes"]
    assert len(state["instances"]) <= len(ref["instances"]) + 2  # at most the killed runs started again


@pytest.mark.slow
def test_with_two_jobs_killed_twice_gives_the_unkilled_study_of_one_job(tmp_path: Path,
                                                                        reference: dict[str, Any]) -> None:
    doc, out, url = _generate(tmp_path / "jobs2")
    runs = TRIALS * REPS
    quarter = len(reference["store"]["episodes"]) // 4
    kills = kill_study.run_killed(kill_study.command(doc, out, url, 2), url, tmp_path / "hold", [quarter, quarter])
    assert kills == 2
    state = kill_study.store(url)
    kill_study.ran_once(state, runs)
    assert kill_study.trials(out, UID) == reference["trials"]
    ref = reference["store"]
    assert state["done"] == ref["done"] and state["rungs"] == ref["rungs"] and state["episodes"] == ref["episodes"]


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


def test_optimize_checks_batch_runs_against_its_batches(tmp_path: Path) -> None:
    from xdoe.cli._optimize import check_prune_batches
    from xdoe.cli._xrun import main
    from xdoe.design.runfiles import prepare
    from xdoe.errors import InputError

    doc = _document()
    assert check_prune_batches(prepare(doc)[2], BATCH, parallel=True) is None  # batch_runs = 2 x 2
    doc["definitions"]["run_config"]["prune"].pop("batch_runs")
    warning = check_prune_batches(prepare(doc)[2], BATCH, parallel=True)
    assert warning and "depend on timing" in warning and "batch_runs: 4" in warning
    assert check_prune_batches(prepare(doc)[2], BATCH, parallel=False) is None  # --jobs 1: in order anyway
    doc["definitions"]["run_config"]["prune"]["batch_runs"] = 3
    with pytest.raises(InputError, match="batch_runs is 3, but a batch of this study has 4 runs"):
        prepare(doc)
    folder = tmp_path / "bad"
    folder.mkdir()
    (folder / "doc.yaml").write_text(json.dumps(doc, indent=1))
    from xdoe.design.runfiles import generate
    from xdoe.errors import DocumentError

    with pytest.raises(DocumentError, match="set batch_runs: 4") as caught:  # xgen: before, it wrote the runs
        generate(folder / "doc.yaml", folder / "out")
    assert caught.value.key_path == ("definitions", "run_config", "prune", "batch_runs") and caught.value.line
    assert not (folder / "out").exists()
    done = CliRunner().invoke(main, ["optimize", str(folder / "doc.yaml"), "-o", str(folder / "out"), "--in-process"])
    assert done.exit_code == 2 and "set batch_runs: 4" in done.output and "doc.yaml:" in done.output
    assert not (folder / "out").exists()  # refused before anything ran
