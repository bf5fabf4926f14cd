"""The fault corpus (tests/execution/faults/*.yaml): each broken run is marked
failed in the store with its traceback, the screen gets one line naming the
run and the cause, the other runs complete; exit 1 (2 for documents that
cannot be read or cannot run -- wrong params, unknown ids, issue 33 -- and
then nothing runs)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from xdoe.cli._xrun import main
from xdoe.store import Store

FAULTS = Path(__file__).parent / "faults"
CAUSES = {
    "fault-unknown_module": "schedule[0].training.agents[0].brain: cannot import module 'nonexistent_pkg.brains'",
    "fault-out_of_space": "agent 'agent': value 7 for actuator 'env.push' is outside its space Discrete(3)",
    "fault-env_raises": "environment 'env': update raised ValueError: simulator diverged at step 3",
    "fault-brain_raises": "agent 'agent': brain.thinking raised ZeroDivisionError: bad gradient",
}
#: documents experiment-check refuses: experiment-start refuses them too, before anything is written
REFUSED = {
    "wrong_params": "11: schedule[0].training.agents[0].brain.params: xdoe.components.agents:"
                    "QLearningBrain does not accept 'alhpa' (did you mean 'alpha'?); accepted parameters: "
                    "alpha, gamma, initial_q",
    "unknown_sensor": "14: schedule[0].training.agents[0].sensors[0]: the environments offer no sensor "
                      "'env.cuont'; did you mean 'env.count'? offered: env.count, env.noise",
}


def _start(tmp_path: Path, *files: Path, extra: tuple[str, ...] = ()):
    url = f"sqlite:///{tmp_path / 'xrun.sqlite'}"
    args = ["experiment-start", *map(str, files), "--store", url,
            "--results", str(tmp_path / "results"), *extra]
    return CliRunner().invoke(main, args), url


def test_broken_runs_fail_alone(tmp_path):
    files = sorted(FAULTS.glob("*.yaml"))
    files = [f for f in files if f.stem != "yaml_error" and f.stem not in REFUSED]
    result, url = _start(tmp_path, *files)
    assert result.exit_code == 1, result.output
    lines = [l for l in result.stderr.splitlines() if l.strip()]
    for uid, cause in CAUSES.items():
        (line,) = [l for l in lines if l.startswith(f"run {uid} failed: ")]
        assert cause in line
    assert len(lines) == len(CAUSES)
    with Store(url) as store:
        statuses = {i.run_uid: i for i in store.runs.instances()}
        assert statuses["fault-good"].status == "finished"
        assert len(list(store.runs.episodes("fault-good"))) == 3
        for uid in CAUSES:
            assert statuses[uid].status == "failed"
            assert statuses[uid].traceback and "Traceback" in statuses[uid].traceback
    assert "fault-good" in result.stdout and "finished" in result.stdout


def test_documents_that_cannot_run_are_refused_before_anything_is_written(tmp_path):
    result, url = _start(tmp_path, FAULTS / "good.yaml", *(FAULTS / f"{name}.yaml" for name in REFUSED))
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [f"error: {FAULTS / name}.yaml:{text}" for name, text in REFUSED.items()]
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no store, no results folder


def test_fail_fast_stops_after_the_first_failure(tmp_path):
    result, url = _start(tmp_path, FAULTS / "brain_raises.yaml", FAULTS / "good.yaml",
                         extra=("--fail-fast",))
    assert result.exit_code == 1
    assert "skipped" in result.stdout
    with Store(url) as store:
        assert [i.run_uid for i in store.runs.instances()] == ["fault-brain_raises"]


def test_unreadable_documents_exit_2_and_nothing_runs(tmp_path):
    result, url = _start(tmp_path, FAULTS / "good.yaml", FAULTS / "yaml_error.yaml",
                         tmp_path / "missing.yaml")
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert any(l.startswith(f"error: {FAULTS / 'yaml_error.yaml'}:6: YAML syntax error") for l in lines), lines
    assert any(l.startswith(f"error: {tmp_path / 'missing.yaml'}: file not found") for l in lines)
    assert "Traceback" not in result.output
    with Store(url) as store:
        assert store.runs.instances() == []


@pytest.mark.parametrize("name", sorted(CAUSES))
def test_experiment_check_finds_construction_faults(name, tmp_path):
    path = FAULTS / f"{name.removeprefix('fault-')}.yaml"
    result = CliRunner().invoke(main, ["experiment-check", str(path)])
    if name in ("fault-unknown_module", "fault-wrong_params", "fault-unknown_sensor"):
        assert result.exit_code == 2
        assert CAUSES[name] in result.stderr
        assert result.stderr.startswith(f"error: {path}:")  # and the line of the key, where known
    else:  # faults that only show when running
        assert result.exit_code == 0, result.output
        assert result.stdout.startswith(f"ok {path}: schedule[0].training: 1 environment(s)")


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_experiment_check_refuses_what_experiment_start_refuses(name):
    path = FAULTS / f"{name}.yaml"
    result = CliRunner().invoke(main, ["experiment-check", str(path)])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [f"error: {path}:{REFUSED[name]}"]
