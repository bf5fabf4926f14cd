"""Issue 25: observations outside their space follow a documented, warned
policy (``phase_config.observation_check``: warn, the default; error; off),
on both step paths (value steps and the general one), checked at a bounded
sample of steps; what the check sees and what it does not."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from gymnasium import spaces

from xdoe._plugins import EVERY, FIRST, ObservationCheck, inside, observation_check, observation_report
from xdoe.environment import SensorInformation
from xdoe.errors import DocumentError, ObservationSpaceWarning, RunError
from xdoe.execution import load_plan, run

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


@pytest.mark.parametrize("space, value, expected", [
    (spaces.Discrete(5), 4, True), (spaces.Discrete(5), 5, False), (spaces.Discrete(5), -1, False),
    (spaces.Discrete(5), np.int64(2), True), (spaces.Discrete(3, start=-1), -1, True),
    (spaces.Discrete(5), 2.5, False), (spaces.Discrete(5), "x", False),
    (spaces.Box(0, 1, (2,)), np.array([0.5, 1.0], np.float32), True),
    (spaces.Box(0, 1, (2,)), np.array([0.5, np.nan], np.float32), False),
    (spaces.Box(0, 1, (2,)), np.array([0.5, 1.5], np.float32), False),
    (spaces.Box(0, 1, (2,)), np.array([0.5], np.float32), False),
    (spaces.MultiDiscrete([2, 3]), np.array([1, 2]), True), (spaces.MultiDiscrete([2, 3]), np.array([2, 2]), False),
    (spaces.Dict({"a": spaces.Discrete(2)}), {"a": 3}, False), (spaces.Dict({"a": spaces.Discrete(2)}), {"a": 1}, True),
])
def test_inside_agrees_with_gymnasium(space: spaces.Space, value: object, expected: bool) -> None:
    assert inside(space, value) is expected
    assert bool(space.contains(value)) is expected


def test_the_checked_steps_are_the_first_of_each_episode_then_a_sample() -> None:
    checked = [s for s in range(1, 200) if ObservationCheck.due(s)]
    assert checked[:FIRST] == list(range(1, FIRST + 1))
    assert checked[FIRST:] == list(range(2 * EVERY, 200, EVERY))
    walked = [1]  # the worker walks from one due step to the next
    while walked[-1] < 200:
        walked.append(ObservationCheck.next_due(walked[-1]))
    assert walked[:-1] == checked


def test_warn_reports_the_first_value_of_each_sensor_once_and_error_raises() -> None:
    box = spaces.Box(0, 1, (2,))
    bad = [[SensorInformation("e.pos", box, np.array([2.0, 0.0], np.float32)),
            SensorInformation("e.n", spaces.Discrete(3), 1)]]
    with observation_report(label="run r") as report, pytest.warns(ObservationSpaceWarning) as caught:
        check = observation_check(None, "phase 'p' worker 0")
        assert check is not None and check.policy == "warn"
        check.sensors(bad, 0, 1)
        check.sensors(bad, 4, 2)  # the same sensor again: not reported again
    assert len(caught) == 1
    assert str(caught[0].message).startswith("run r: sensor 'e.pos': observation array([2., 0.], dtype=float32) "
                                            "is outside its space Box(0.0, 1.0, (2,), float32) "
                                            "(phase 'p' worker 0, episode 0, step 1;")
    assert len(report.messages) == 1 and report.messages[0].startswith("sensor 'e.pos'")
    error = observation_check("error", "phase 'p' worker 1")
    with pytest.raises(RunError, match=r"^sensor 'e.pos': .* \(phase 'p' worker 1, episode 3, step 7; "
                                       r"phase_config.observation_check: error\)$"):
        error.sensors(bad, 3, 7)  # type: ignore[union-attr]
    assert observation_check("off", "x") is None


def _leaky(uid: str, episodes: int = 3, **config: object) -> dict:
    return {
        "uid": uid, "experiment_uid": "spaces", "seed": 3,
        "schedule": [{"training": {
            "environments": [{"environment": {
                "name": "xdoe.environments:GymnasiumEnvironment", "uid": "leak",
                "params": {"env_id": "leaky_env:Leaky-v0", "disable_env_checker": True}}}],
            "agents": [{"name": "a", "brain": {"name": "xdoe.agents:DummyBrain"},
                        "muscle": {"name": "xdoe.agents:DummyMuscle"},
                        "objective": {"name": "xdoe.agents:RewardObjective"},
                        "sensors": ["leak.observation"], "actuators": ["leak.action"]}],
            "simulation": {"name": "xdoe.simulation:VanillaSimController",
                           "conditions": [{"name": "xdoe.conditions:EnvironmentTerminationCondition"}]},
            "phase_config": {"mode": "train", "worker": 1, "episodes": episodes, **config}}}],
    }


def test_a_run_warns_once_per_sensor_and_finishes(tmp_path: Path) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = run(_leaky("leak-warn"), store=f"sqlite:///{tmp_path / 'x.sqlite'}", results=tmp_path)
    assert result.status == "finished", result.error
    mine = [w for w in caught if issubclass(w.category, ObservationSpaceWarning)]
    assert len(mine) == 1, [str(w.message) for w in caught]
    assert result.warnings == [
        "sensor 'leak.observation': observation array([ 2., nan], dtype=float32) is outside its space "
        "Box(0.0, 1.0, (2,), float32) (phase 'training' worker 0, episode 0, step 3; later values of this "
        "sensor are not reported)"]
    assert str(mine[0].message) == f"run leak-warn: {result.warnings[0]}"


def test_error_fails_the_run_with_one_line_and_off_checks_nothing(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'x.sqlite'}"
    failed = run(_leaky("leak-error", observation_check="error"), store=url, results=tmp_path)
    assert failed.status == "failed"
    assert failed.error == ("sensor 'leak.observation': observation array([ 2., nan], dtype=float32) is outside "
                            "its space Box(0.0, 1.0, (2,), float32) (phase 'training' worker 0, episode 0, step 3; "
                            "phase_config.observation_check: error)")
    with warnings.catch_warnings():
        warnings.simplefilter("error", ObservationSpaceWarning)
        quiet = run(_leaky("leak-off", observation_check="off"), store=url, results=tmp_path)
    assert quiet.status == "finished" and quiet.warnings == []


def test_a_value_between_the_sampled_steps_is_not_seen(tmp_path: Path) -> None:
    """What the sample leaves out (documented): step FIRST + 1 is not checked."""
    doc = _leaky("leak-unseen")
    doc["schedule"][0]["training"]["environments"][0]["environment"]["params"]["at"] = FIRST + 1
    result = run(doc, store=f"sqlite:///{tmp_path / 'x.sqlite'}", results=tmp_path)
    assert result.status == "finished" and result.warnings == []


@pytest.mark.parametrize("at, seen", [(1, True), (FIRST, True), (FIRST + 1, False), (2 * EVERY, True),
                                      (2 * EVERY + 1, False)])
def test_the_only_discrete_sensor_is_checked_at_the_due_steps(tmp_path: Path, at: int, seen: bool) -> None:
    """The usual worker (one environment, one Discrete sensor: its range
    compared in the step itself): an int outside the range is reported at
    the due steps, with the message of every other sensor, and not between."""
    doc = _leaky(f"leak-discrete-{at}")
    doc["schedule"][0]["training"]["environments"][0]["environment"]["params"].update(
        env_id="leaky_env:LeakyDiscrete-v0", at=at)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ObservationSpaceWarning)
        result = run(doc, store=f"sqlite:///{tmp_path / 'x.sqlite'}", results=tmp_path)
    assert result.status == "finished", result.error
    assert result.warnings == ([
        f"sensor 'leak.observation': observation 7 is outside its space Discrete(4) (phase 'training' worker 0, "
        f"episode 0, step {at}; later values of this sensor are not reported)"] if seen else [])


def test_the_policy_is_validated_and_absent_changes_nothing() -> None:
    with pytest.raises(DocumentError, match="observation_check"):
        load_plan(_leaky("leak-bad", observation_check="loud"))
    plain = load_plan(_leaky("leak-plain"))
    assert plain.phases[0].observation_check is None
    assert "observation_check" not in plain.document["schedule"][0]["training"]["phase_config"]
    assert load_plan(_leaky("leak-e", observation_check="error")).phases[0].observation_check == "error"


@pytest.mark.parametrize("mode", [pytest.param("--in-process", marks=pytest.mark.slow), "--jobs=1",
                                  pytest.param("--jobs=2", marks=pytest.mark.slow)])
def test_xrun_prints_the_warning_once_as_a_line_of_the_run(tmp_path: Path, mode: str) -> None:
    import os
    import subprocess

    from ruamel.yaml import YAML

    files = []
    for uid in ("leak-a", "leak-b"):
        files.append(tmp_path / f"run-{uid}.yaml")
        with open(files[-1], "w") as fh:
            YAML().dump(_leaky(uid), fh)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env.pop("XRUN_STORE", None)
    done = subprocess.run([sys.executable, "-m", "xdoe.cli._xrun", "experiment-start", mode, "--no-laydown",
                           "--store", f"sqlite:///{tmp_path / 'x.sqlite'}", "--results", str(tmp_path / "r"),
                           *map(str, files)], env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "ObservationSpaceWarning" not in done.stderr  # no second, Python-formatted copy
    lines = sorted(line for line in done.stderr.splitlines() if "outside its space" in line)
    assert lines == [f"run {uid} warning: sensor 'leak.observation': observation array([ 2., nan], dtype=float32) "
                     "is outside its space Box(0.0, 1.0, (2,), float32) (phase 'training' worker 0, episode 0, "
                     "step 3; later values of this sensor are not reported)" for uid in ("leak-a", "leak-b")]


def test_parallel_workers_report_to_the_run_once_per_sensor(tmp_path: Path) -> None:
    from xdoe.execution import parallel_workers

    doc = _leaky("leak-par")
    doc["schedule"][0]["training"]["phase_config"]["worker"] = 2
    with parallel_workers(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = run(doc, store=f"sqlite:///{tmp_path / 'x.sqlite'}", results=tmp_path)
    assert result.status == "finished", result.error
    assert len(result.warnings) == 1, result.warnings  # two workers found it: one report
    assert result.warnings[0].startswith("sensor 'leak.observation': observation array([ 2., nan], dtype=float32)")
    assert len([w for w in caught if issubclass(w.category, ObservationSpaceWarning)]) == 1
