"""A run's warnings are stored with its instance (schema version 3,
revision 0003) and shown by ``xrun status`` (issue 23; issue 25 printed
them only in ``xrun``'s output): one mechanism for every run warning, the
run's report, so a non-finite reward (:class:`NonFiniteWarning`) is a
``run <uid> warning:`` line like an observation outside its space."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from ruamel.yaml import YAML
from sqlalchemy import select

from xdoe.errors import NonFiniteWarning, ObservationSpaceWarning, RunWarning
from xdoe.execution import run
from xdoe.store import Store
from xdoe.store.schema import _tables as t

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

OBSERVATION = ("sensor 'w.observation': observation array([ 2., nan], dtype=float32) is outside its space "
               "Box(0.0, 1.0, (2,), float32) (phase 'training' worker 0, episode 0, step 3; later values of this "
               "sensor are not reported)")
REWARD = ("agent 'a' episode 1: reward is nan; recorded as missing (NULL in the store, null in episodes.jsonl); "
          "further non-finite rewards of this run are recorded so without a warning")
OBJECTIVE = REWARD.replace("reward", "objective")  # the reward objective passes the NaN on
ALL = [OBSERVATION, REWARD, OBJECTIVE]


def _document(uid: str) -> dict:
    return {
        "uid": uid, "experiment_uid": "warny", "seed": 3,
        "schedule": [{"training": {
            "environments": [{"environment": {
                "name": "xdoe.environments:GymnasiumEnvironment", "uid": "w",
                "params": {"env_id": "warny_env:Warny-v0", "disable_env_checker": True}}}],
            "agents": [{"name": "a", "brain": {"name": "xdoe.agents:DummyBrain"},
                        "muscle": {"name": "xdoe.agents:DummyMuscle"},
                        "objective": {"name": "xdoe.agents:RewardObjective"},
                        "sensors": ["w.observation"], "actuators": ["w.action"]}],
            "simulation": {"name": "xdoe.simulation:VanillaSimController",
                           "conditions": [{"name": "xdoe.conditions:EnvironmentTerminationCondition"}]},
            "phase_config": {"mode": "train", "worker": 1, "episodes": 3}}}],
    }


def _stored(url: str) -> list:
    with Store(url, create=False) as store, store.database.engine.connect() as conn:
        return list(conn.execute(select(t.run_instance.c.warnings).order_by(t.run_instance.c.id)).scalars())


def test_a_non_finite_reward_is_a_run_warning_like_an_observation_and_both_are_stored(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 's.sqlite'}"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = run(_document("warny-0"), store=url, results=tmp_path / "r")
    assert result.status == "finished"
    assert result.warnings == ALL
    mine = [w for w in caught if issubclass(w.category, RunWarning)]
    assert [(w.category, str(w.message)) for w in mine] == [
        (ObservationSpaceWarning, f"run warny-0: {OBSERVATION}"), (NonFiniteWarning, f"run warny-0: {REWARD}"),
        (NonFiniteWarning, f"run warny-0: {OBJECTIVE}")]
    assert _stored(url) == [ALL]


def test_a_run_without_warnings_stores_none(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 's.sqlite'}"
    doc = _document("calm-0")
    doc["schedule"][0]["training"]["environments"][0]["environment"] = {
        "name": "xdoe.environments:DummyEnvironment", "uid": "w", "params": {"length": 3, "sensors": 1, "actuators": 1}}
    doc["schedule"][0]["training"]["agents"][0].update(sensors=None, actuators=None)
    assert run(doc, store=url, results=tmp_path / "r").warnings == []
    assert _stored(url) == [None]


def _xrun(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env.pop("XRUN_STORE", None)
    env["COLUMNS"] = "200"
    return subprocess.run([sys.executable, "-m", "xdoe.cli._xrun", *args], env=env, capture_output=True, text=True,
                          timeout=300, cwd=tmp_path)


@pytest.mark.parametrize("mode", ["--jobs=1", pytest.param("--jobs=2", marks=pytest.mark.slow)])
def test_xrun_prints_every_run_warning_once_and_status_shows_them(tmp_path: Path, mode: str) -> None:
    url = f"sqlite:///{tmp_path / 'x.sqlite'}"
    files = []
    for uid in ("warny-0", "warny-1"):
        files.append(tmp_path / f"run-{uid}.yaml")
        with open(files[-1], "w") as fh:
            YAML().dump(_document(uid), fh)
    done = _xrun(tmp_path, "experiment-start", mode, "--no-laydown", "--store", url, "--results", str(tmp_path / "r"),
                 *map(str, files))
    assert done.returncode == 0, done.stderr
    assert "NonFiniteWarning" not in done.stderr and "ObservationSpaceWarning" not in done.stderr  # no Python copy
    expected = [f"run {uid} warning: {line}" for uid in ("warny-0", "warny-1") for line in ALL]
    assert sorted(line for line in done.stderr.splitlines() if " warning: " in line) == sorted(expected)
    assert _stored(url) == [ALL] * 2

    table = _xrun(tmp_path, "status", "--store", url)
    assert table.returncode == 0, table.stderr
    assert [line for line in table.stdout.splitlines() if " warning: " in line] == expected
    one = _xrun(tmp_path, "status", "--store", url, "--run", "warny-1")
    assert [line for line in one.stdout.splitlines() if " warning: " in line] == expected[3:]
    as_json = json.loads(_xrun(tmp_path, "status", "--store", url, "--format", "json").stdout)
    assert [r["warnings"] for r in as_json["runs"]] == [ALL] * 2
    quiet = _xrun(tmp_path, "status", "--store", url, "--quiet")
    assert " warning: " not in quiet.stdout


def test_a_resumed_instance_keeps_the_warnings_of_its_earlier_attempt(store: Store, make_document: object,
                                                                     tmp_path: Path) -> None:
    doc = make_document()  # type: ignore[operator]
    with store.recorder(doc, results_root=tmp_path) as rec:
        rec.phase_started(0, "training", "train", {"worker": 1})
    rec_id = rec.instance_id
    with store.database.engine.begin() as conn:  # as an interrupted attempt leaves it
        conn.execute(t.run_instance.update().where(t.run_instance.c.id == rec_id)
                     .values(status="interrupted", warnings=["first attempt"]))
    again = store.recorder(doc, results_root=tmp_path)
    instance = store.runs.instance(rec_id)
    assert again.resume(instance)
    again.reopen()
    again.finish("finished", warnings=["first attempt", "second attempt"])
    with store.database.engine.connect() as conn:
        assert conn.execute(select(t.run_instance.c.warnings)).scalar() == ["first attempt", "second attempt"]
