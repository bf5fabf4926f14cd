"""The status of a run's MLflow run, read by MLflow's own client, whatever
ended the run's process: FINISHED, FAILED (a component raised), KILLED
(Ctrl-C; a SIGKILLed attempt, replaced when its instance is resumed or
ended when a new instance of the run starts). No MLflow run stays RUNNING
once its process is gone and the run started again. On MLflow's file store
and its SQLite backend."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mlflow", reason="the 'mlflow' extra is not installed")

import hold  # noqa: E402
from ruamel.yaml import YAML  # noqa: E402
from scale_components import countdown_run  # noqa: E402

from xdoe.execution import run  # noqa: E402
from xdoe.store import Store  # noqa: E402

EPISODES = 12


@pytest.fixture(params=["file", "sqlite"])
def mlflow_uri(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """An MLflow tracking URI: a file store or a SQLite database under ``tmp_path``."""
    if request.param == "file":
        return f"file://{tmp_path / 'mlruns'}"
    return f"sqlite:///{tmp_path / 'mlflow.sqlite'}"


def _document(uri: str, **params: Any) -> dict[str, Any]:
    """A Countdown run (12 training episodes, 1 testing) on an environment :mod:`hold` holds, logged to ``uri``."""
    document = countdown_run("tracked", episodes=EPISODES, length=4, held=True)
    document["run_config"] = {"log": [f"mlflow:{uri}"]}
    document["schedule"][0]["training"]["environments"][0]["environment"]["params"].update(params)
    return document


def _runs(uri: str) -> list[tuple[str, str, str, str | None, int, str]]:
    """Every MLflow run of the experiment, deleted ones too, oldest first:
    (xdoe.instance, status, lifecycle stage, xdoe.replaced_by, training reward points, run id)."""
    os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
    from mlflow import MlflowClient
    from mlflow.entities import ViewType

    client = MlflowClient(tracking_uri=uri)
    experiment = client.get_experiment_by_name("scale-tests")
    assert experiment is not None
    runs = client.search_runs([experiment.experiment_id], run_view_type=ViewType.ALL,
                              order_by=["attributes.start_time ASC"])
    out = []
    for found in runs:
        info = client.get_run(found.info.run_id).info  # the status as MLflow's client reports it
        assert (info.end_time is None) == (info.status == "RUNNING")
        out.append((found.data.tags["xdoe.instance"], info.status, info.lifecycle_stage,
                    found.data.tags.get("xdoe.replaced_by"),
                    len(client.get_metric_history(found.info.run_id, "training/reward/agent")), info.run_id))
    return out


def _killed(tmp_path: Path, document: dict[str, Any], url: str) -> str:
    """Run ``document`` in a subprocess, SIGKILL it at its 8th episode start
    (held there by :mod:`hold`: episodes before it are recorded); its instance's uuid."""
    path = tmp_path / "run.yaml"
    with path.open("w") as fh:
        YAML().dump(document, fh)
    code = (f"from xdoe.execution import run; run({str(path)!r}, store={url!r}, "
            f"results={str(tmp_path / 'r')!r})")
    hold.request(tmp_path / "hold", 8)
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=tmp_path, env=hold.child_env(tmp_path / "hold"),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if not hold.wait_held(proc, tmp_path / "hold"):
        proc.kill()
        pytest.fail(f"the run ended before its hold: {proc.communicate()[1].decode()[-2000:]}")
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=60)
    with Store(url, create=False) as store:
        (instance,) = store.runs.instances()
    assert instance.status == "running"  # the dead process could not say otherwise
    return instance.uuid


def test_a_sigkilled_attempt_replaced_on_resume_ends_killed(tmp_path: Path, mlflow_uri: str) -> None:
    url = f"sqlite:///{tmp_path / 's.sqlite'}"
    document = _document(mlflow_uri)
    uuid = _killed(tmp_path, document, url)
    ((instance, status, stage, _, _, _),) = _runs(mlflow_uri)
    assert (instance, status, stage) == (uuid, "RUNNING", "active")  # nobody could end it
    resumed = run(document, store=url, results=tmp_path / "r")
    assert resumed.ok and resumed.resumed and not resumed.warnings, resumed
    (old, new) = _runs(mlflow_uri)
    # the killed attempt's partial copy: ended KILLED, then deleted (MLflow's trash), naming its replacement
    assert old[:4] == (uuid, "KILLED", "deleted", new[5])
    # the resumed instance: one MLflow run, every training episode once
    assert new[:5] == (uuid, "FINISHED", "active", None, EPISODES)


@pytest.mark.parametrize("marked", ["dead", "failed"])
def test_a_killed_instance_is_ended_when_a_new_instance_of_its_run_starts(tmp_path: Path, mlflow_uri: str,
                                                                         marked: str) -> None:
    """``dead``: left ``running`` in the store, a new instance by ``rerun``;
    ``failed``: marked failed as ``xrun`` does when its worker process dies,
    a new instance by the next start."""
    url = f"sqlite:///{tmp_path / 's.sqlite'}"
    document = _document(mlflow_uri)
    uuid = _killed(tmp_path, document, url)
    if marked == "failed":
        with Store(url, create=False) as store:
            assert store.runs.fail_running_instances("tracked", store.runs.instances()[0].content_hash,
                                                     host=store.runs.instances()[0].host, pids=None,
                                                     error="worker process died") == 1
    again = run(document, store=url, results=tmp_path / "r", rerun=marked == "dead")
    assert again.ok and not again.resumed and not again.warnings, again
    (old, new) = _runs(mlflow_uri)
    assert old[:4] == (uuid, "KILLED" if marked == "dead" else "FAILED", "active", None)
    assert new[0] != uuid and new[1:5] == ("FINISHED", "active", None, EPISODES)


def test_a_failing_component_ends_its_mlflow_run_failed(tmp_path: Path, mlflow_uri: str) -> None:
    document = _document(mlflow_uri)
    document["schedule"][0]["training"]["environments"][0]["environment"].update(
        name="crash_components:CrashingEnvironment", params={"length": 4, "how": "raise", "at_episode": 3})
    failed = run(document, store=f"sqlite:///{tmp_path / 's.sqlite'}", results=tmp_path / "r")
    assert failed.status == "failed" and "plugin exploded" in (failed.error or ""), failed
    ((_, status, stage, _, episodes, _),) = _runs(mlflow_uri)
    assert (status, stage, episodes) == ("FAILED", "active", 3)  # the episodes before the failure are there
