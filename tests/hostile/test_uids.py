"""Uids as palaestrAI and arsenAI accept them (issue 33.1): every printable
uid without ``/`` is read as written; its files get a safe name (a slug and a
short hash of the uid), never a refusal. What stays refused (control
characters, ``/``, NUL, over-long uids) is in ``cases.py``."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from ruamel.yaml import YAML

from xdoe.cli._xgen import main as xgen
from xdoe.cli._xrun import main as xrun
from xdoe.documents import safe_uid, uid_file_name
from xdoe.store import Store

from hostile.cases import ACCEPTED_UIDS, DUMMY, _uid, base_run_document


def _written(value: str) -> str:
    """The uid a YAML scalar ``value`` reads as."""
    return YAML(typ="safe").load(f"uid: {value}\n")["uid"]


@pytest.mark.parametrize("value", ACCEPTED_UIDS)
def test_xgen_reads_the_experiment_uid_as_written(value: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    uid = _written(value)
    path = tmp_path / "doc.yaml"
    path.write_text(_uid(DUMMY.read_text(encoding="utf-8"), value), encoding="utf-8")
    check = CliRunner().invoke(xgen, ["check", str(path)])
    assert check.exit_code == 0, check.output
    out = tmp_path / "out"
    generated = CliRunner().invoke(xgen, ["generate", str(path), "-o", str(out)])
    assert generated.exit_code == 0, generated.output
    safe = safe_uid(uid)
    assert safe != uid and "/" not in safe and " " not in safe
    files = sorted(p.name for p in out.glob("run-*.yaml"))
    assert files and files[0] == f"run-{safe}-0000.yaml"
    run = YAML(typ="safe").load((out / files[0]).read_text(encoding="utf-8"))
    assert run["uid"] == f"{safe}-0000" and run["experiment_uid"] == uid  # the experiment uid as written
    started = CliRunner().invoke(xrun, ["experiment-check", str(out / files[0])])
    assert started.exit_code == 0, started.output


@pytest.mark.parametrize("value", ACCEPTED_UIDS)
def test_xrun_reads_the_run_uid_as_written(value: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    uid = _written(value)
    path = tmp_path / "run.yaml"
    path.write_text(_uid(base_run_document(), value), encoding="utf-8")
    assert CliRunner().invoke(xrun, ["experiment-check", str(path)]).exit_code == 0
    store = f"sqlite:///{tmp_path / 'store.sqlite'}"
    result = CliRunner().invoke(xrun, ["experiment-start", str(path), "--store", store,
                                       "--results", str(tmp_path / "results"), "-q", "--no-laydown"])
    assert result.exit_code == 0, result.output
    with Store(store) as db:
        assert [i.run_uid for i in db.runs.instances(status="finished")] == [uid]
    assert [p.name for p in (tmp_path / "results").iterdir()] == [uid_file_name(uid)]
    status = CliRunner().invoke(xrun, ["status", "--store", store, "--run", uid])
    assert status.exit_code == 0 and uid in status.output, status.output


def test_file_safe_uids_keep_their_names() -> None:
    """No change for existing campaigns: a uid of the old alphabet names its
    files as before (an experiment uid's spaces as ``_``)."""
    for uid in ("dummy-study", "taxi_1.2", "A-0001", "x" * 128):
        assert uid_file_name(uid) == uid
    assert safe_uid("Dummy Experiment") == "Dummy_Experiment"
    assert safe_uid("dummy-study") == "dummy-study"


def test_slug_and_hash_are_stable() -> None:
    """Pinned: a later version must name the same uid's files the same way."""
    assert uid_file_name("Minimal Powergrid Run") == "Minimal_Powergrid_Run-567c772f7f"
    assert uid_file_name("Yo-ho, a dummy experiment run for me!") == "Yo-ho_a_dummy_experiment_run_for_me-b55ca526c8"
    assert uid_file_name("Études 1") == "Etudes_1-48d9304f3b"
    assert uid_file_name("a..b") == "a.b-f62b42414c"
    assert uid_file_name("Ω") == "uid-e3c622e5fd"
    assert len(uid_file_name("é" * 128).encode()) <= 64
    assert uid_file_name("Minimal Powergrid Run") != uid_file_name("Minimal_Powergrid_Run")
