"""palaestrAI run documents as they are (issue 33.1): uids with spaces and
punctuation, as palaestrAI's own documents write them, pass ``xrun
experiment-check`` and ``experiment-start``, and come back from the store as
written (``xrun status``, ``xrun results``); their results folders get a safe
name (a slug and a short hash of the uid).

The documents are in ``tests/cli/palaestrai/``: ``dummy_run.yml`` follows
palaestrAI's ``tests/fixtures/dummy_run.yml`` (github.com/palaestrai/palaestrai,
shown in its quick-start docs, ``uid: "Yo-ho, a dummy experiment run for
me!"``), ``minimal_powergrid_run.yml`` a ``uid: "Minimal Powergrid Run"`` with
spaces in the experiment, phase and agent names too. xdoe's built-in
components stand in for palaestrAI's.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from xdoe.cli._xrun import main as xrun
from xdoe.documents import uid_file_name
from xdoe.store import Store

DOCUMENTS = Path(__file__).resolve().parent / "palaestrai"
UIDS = {"dummy_run.yml": "Yo-ho, a dummy experiment run for me!",
        "minimal_powergrid_run.yml": "Minimal Powergrid Run"}


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("XRUN_STORE", raising=False)
    return tmp_path


@pytest.mark.parametrize("name", sorted(UIDS))
def test_experiment_check_reads_the_document_as_it_is(name: str, here: Path) -> None:
    result = CliRunner().invoke(xrun, ["experiment-check", str(DOCUMENTS / name)])
    assert result.exit_code == 0, result.output
    assert "error" not in result.output and result.output.startswith("ok ")
    assert not any(here.iterdir())  # a check writes nothing


@pytest.mark.parametrize("name", sorted(UIDS))
def test_the_uid_survives_the_round_trip_into_the_store(name: str, here: Path) -> None:
    uid = UIDS[name]
    store = f"sqlite:///{here / 'store.sqlite'}"
    results = here / "results"
    started = CliRunner().invoke(xrun, ["experiment-start", str(DOCUMENTS / name), "--store", store,
                                        "--results", str(results)])
    assert started.exit_code == 0, started.output
    assert uid in started.output and "finished" in started.output  # the summary names it as written
    with Store(store) as db:
        assert [i.run_uid for i in db.runs.instances(status="finished")] == [uid]
    # the results folder: a slug and a short hash of the uid, one path component
    folder = uid_file_name(uid)
    assert [p.name for p in results.iterdir() if p.name != ".laydown"] == [folder]  # (the lay-down cache)
    assert " " not in folder and "," not in folder and folder != uid
    status = CliRunner().invoke(xrun, ["status", "--store", store, "--format", "json", "--all"])
    assert status.exit_code == 0, status.output
    runs = [r for block in _blocks(json.loads(status.output)) for r in block["runs"]]
    assert [r["run"] for r in runs] == [uid]
    table = CliRunner().invoke(xrun, ["status", "--store", store, "--run", uid])
    assert table.exit_code == 0 and uid in table.output, table.output
    shown = CliRunner().invoke(xrun, ["results", "--store", store])
    assert shown.exit_code == 0, shown.output


def _blocks(data: dict | list) -> list[dict]:
    return data if isinstance(data, list) else data.get("experiments", [data])


def test_the_experiment_uid_survives_the_round_trip(here: Path) -> None:
    store = f"sqlite:///{here / 'store.sqlite'}"
    args = ["--store", store, "--results", str(here / "results"), "-q"]
    assert CliRunner().invoke(xrun, ["experiment-start", str(DOCUMENTS / "minimal_powergrid_run.yml"), *args]).exit_code == 0
    for command in ("status", "results"):
        result = CliRunner().invoke(xrun, [command, "--store", store, "-e", "Minimal Powergrid Experiment"])
        assert result.exit_code == 0, result.output
        assert "Minimal Powergrid Experiment" in result.output
