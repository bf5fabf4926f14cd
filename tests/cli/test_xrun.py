"""The xrun command line: experiment-start and experiment-check, exit codes,
options and the summary table, on built-in components."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from ruamel.yaml import YAML

from xdoe.cli._xrun import main
from xdoe.store import Store


def write_run(path: Path, uid: str, episodes: int = 2, muscle: str = "xdoe.agents:DummyMuscle") -> Path:
    doc = {
        "uid": uid,
        "seed": 3,
        "schedule": [
            {"training": {
                "environments": [{"environment": {
                    "name": "xdoe.environments:DummyEnvironment", "uid": "d",
                    "params": {"length": 3, "sensors": 1, "actuators": 1, "discrete": True}}}],
                "agents": [{"name": "rnd", "brain": {"name": "xdoe.agents:DummyBrain"},
                            "muscle": {"name": muscle},
                            "objective": {"name": "xdoe.agents:RewardObjective"}}],
                "simulation": {"name": "xdoe.simulation:VanillaSimController"},
                "phase_config": {"mode": "train", "episodes": episodes}}},
            {"testing": {"phase_config": {"mode": "test", "episodes": 1}}},
        ],
    }
    with open(path, "w") as fh:
        YAML().dump(doc, fh)
    return path


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XRUN_STORE", f"sqlite:///{tmp_path / 'env.sqlite'}")
    return tmp_path


def test_start_runs_everything_and_prints_a_summary(env):
    a, b = write_run(env / "a.yaml", "run-a"), write_run(env / "b.yaml", "run-b", episodes=3)
    result = CliRunner().invoke(main, ["experiment-start", str(a), str(b)])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "xrun summary" in out and "run-a" in out and "run-b" in out
    assert out.count("finished") == 2
    assert "rnd" in out  # mean test reward per agent
    with Store() as store:  # $XRUN_STORE
        assert {i.run_uid for i in store.runs.instances(status="finished")} == {"run-a", "run-b"}
        assert len(list(store.runs.episodes("run-b"))) == 4
    assert any((env / "_outputs" / "results" / "run-a").iterdir())


def test_options_store_results_steps_and_quiet(env):
    a = write_run(env / "a.yaml", "run-a")
    url = f"sqlite:///{env / 'other.sqlite'}"
    result = CliRunner().invoke(main, ["experiment-start", str(a), "--store", url, "--results",
                                       str(env / "res"), "--store-steps", "every:2", "--quiet"])
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    assert (env / "res" / "run-a").is_dir()
    with Store(url) as store:
        assert len(store.runs.instances()) == 1


def test_bad_store_steps_is_unusable_input(env):
    a = write_run(env / "a.yaml", "run-a")
    result = CliRunner().invoke(main, ["experiment-start", str(a), "--store-steps", "sometimes"])
    assert result.exit_code == 2
    assert "every:N" in result.stderr


def test_failed_run_exit_1(env):
    """A module that does not import here may on the node that runs it: that run fails, the others run."""
    a = write_run(env / "a.yaml", "run-a")
    bad = write_run(env / "bad.yaml", "run-bad", muscle="no_such_module_xyz:Muscle")
    result = CliRunner().invoke(main, ["experiment-start", str(bad), str(a)])
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines() == [
        "run run-bad failed: schedule[0].training.agents[0].muscle: cannot import module 'no_such_module_xyz' "
        "(for 'no_such_module_xyz:Muscle'): ModuleNotFoundError: No module named 'no_such_module_xyz'"
    ]
    assert "run-a" in result.stdout


def test_a_class_the_module_lacks_is_refused_before_anything_is_written(env):
    """Issue 33, item 3: the module imports but has no such class: one located line, exit 2, no store."""
    a = write_run(env / "a.yaml", "run-a")
    bad = write_run(env / "bad.yaml", "run-bad", muscle="xdoe.agents:NoSuchMuscle")
    url = f"sqlite:///{env / 'new.sqlite'}"
    result = CliRunner().invoke(main, ["experiment-start", str(bad), str(a), "--store", url,
                                       "--results", str(env / "new-results")])
    assert result.exit_code == 2, result.output
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(f"error: {bad}:") and "schedule[0].training.agents[0].muscle: module 'xdoe.agents' " \
        "has no attribute 'NoSuchMuscle'" in line and "did you mean" in line, line
    assert not (env / "new.sqlite").exists() and not (env / "new-results").exists()


def test_check(env):
    a = write_run(env / "a.yaml", "run-a")
    result = CliRunner().invoke(main, ["experiment-check", str(a)])
    assert result.exit_code == 0, result.output
    assert "schedule[1].testing: 1 environment(s), 1 agent(s)" in result.stdout
    bad = env / "bad.yaml"
    bad.write_text("uid: x\nschedule: []\n")
    result = CliRunner().invoke(main, ["experiment-check", str(a), str(bad)])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: {bad}:2")
    with Store() as store:
        assert store.runs.instances() == []  # checking runs nothing


def test_check_reports_every_component_that_does_not_import(env):
    """Issue 22 (read and check commands alike): experiment-check names every
    bad component of a run document, not only the first, as xgen check --import does."""
    bad = write_run(env / "bad.yaml", "run-bad", muscle="xdoe.agents:NoSuchMuscle")
    bad.write_text(bad.read_text().replace("xdoe.agents:DummyBrain", "xdoe.agents:NoSuchBrain"))
    result = CliRunner().invoke(main, ["experiment-check", str(bad)])
    assert result.exit_code == 2
    errors = result.stderr.strip().splitlines()
    assert len(errors) == 2 and all(e.startswith(f"error: {bad}") for e in errors), errors
    assert "NoSuchBrain" in errors[0] and "NoSuchMuscle" in errors[1]


def test_help_lists_the_commands():
    result = CliRunner().invoke(main, ["--help"])
    assert result.exit_code == 0
    assert "experiment-start" in result.output and "experiment-check" in result.output
