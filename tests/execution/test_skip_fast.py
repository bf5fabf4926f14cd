"""Skipping finished run files without reading them: the store records the
sha256 of the file's bytes with the run, and ``xrun experiment-start`` skips
files whose bytes belong to a finished run before loading any document."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from ruamel.yaml import YAML
from scale_components import countdown_run, write_runs
from sqlalchemy import select

import xdoe.documents as documents
import xdoe.documents._run as run_module
from xdoe.cli._xrun import main
from xdoe.execution import run
from xdoe.store import Run, Store


@pytest.fixture
def parsed(monkeypatch) -> list[str]:
    """Names of the files whose documents this process parses."""
    seen: list[str] = []
    original = run_module.parse_run_document

    def spy(source, *args, **kwargs):
        seen.append(Path(getattr(source, "file", "<data>")).name)
        return original(source, *args, **kwargs)

    monkeypatch.setattr(run_module, "parse_run_document", spy)
    monkeypatch.setattr(documents, "parse_run_document", spy)  # the public name, however it was bound
    return seen


@pytest.fixture
def workdir(tmp_path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("XRUN_STORE", raising=False)
    components = str(Path(__file__).resolve().parent)  # for --jobs workers (spawned)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [components, os.environ.get("PYTHONPATH")])))
    return tmp_path


def start(url: str, *args: str):
    return CliRunner().invoke(main, ["experiment-start", "--store", url, "--results", "results", *args])


def sha256(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def file_hashes(url: str) -> dict[str, str | None]:
    with Store(url) as store, store.database.session() as session:
        return dict(session.execute(select(Run.uid, Run.file_sha256)).all())


def instances(url: str) -> list[tuple[str, str]]:
    with Store(url) as store:
        return sorted((i.run_uid, i.status) for i in store.runs.instances())


def three_runs(folder: Path) -> list[str]:
    return write_runs(folder, [countdown_run(f"f{i}", seed=i, episodes=2, length=3) for i in range(3)])


def test_finished_files_are_skipped_without_being_read(store_url, workdir, parsed):
    files = three_runs(workdir / "runs")
    first = start(store_url, *files)
    assert first.exit_code == 0, first.output
    assert file_hashes(store_url) == {f"f{i}": sha256(f) for i, f in enumerate(files)}
    assert sorted(parsed) == ["run-f0.yaml", "run-f1.yaml", "run-f2.yaml"]
    with Store(store_url) as store:
        ids = {i.run_uid: i.id for i in store.runs.instances()}

    parsed.clear()
    again = start(store_url, *files)
    assert again.exit_code == 0, again.output
    assert parsed == []  # not one document read
    for uid, instance in ids.items():
        assert f"run {uid} skipped: finished earlier (instance {instance})" in again.stderr
    assert again.stdout.count("skipped") == 3 and "xrun summary" in again.stdout
    rows = [line.split()[1:4:2] for line in again.stdout.splitlines() if line.startswith("│ f")]
    assert rows == [["f0", "skipped"], ["f1", "skipped"], ["f2", "skipped"]]  # in the order of FILES
    assert instances(store_url) == [("f0", "finished"), ("f1", "finished"), ("f2", "finished")]


def test_a_changed_file_runs_and_the_others_stay_unread(store_url, workdir, parsed):
    files = three_runs(workdir / "runs")
    assert start(store_url, "-q", *files).exit_code == 0
    write_runs(workdir / "runs", [countdown_run("f1", seed=1, episodes=3, length=3)])  # f1 changed
    parsed.clear()
    result = start(store_url, *files)
    assert result.exit_code == 0, result.output
    assert parsed == ["run-f1.yaml"]
    assert result.stdout.count("skipped") == 2 and result.stdout.count("finished") == 1
    assert instances(store_url) == [("f0", "finished"), ("f1", "finished"), ("f1", "finished"),
                                    ("f2", "finished")]
    assert file_hashes(store_url)["f1"] == sha256(files[1])  # the new version's file


def test_rerun_reads_and_runs_finished_files_again(workdir, parsed):
    url = f"sqlite:///{workdir / 'xrun.sqlite'}"
    files = three_runs(workdir / "runs")
    assert start(url, "-q", *files).exit_code == 0
    parsed.clear()
    result = start(url, "--rerun", *files)
    assert result.exit_code == 0, result.output
    assert sorted(parsed) == ["run-f0.yaml", "run-f1.yaml", "run-f2.yaml"]
    assert result.stdout.count("finished") == 3 and "skipped" not in result.stdout
    assert [uid for uid, _ in instances(url)] == ["f0", "f0", "f1", "f1", "f2", "f2"]


def test_reformatted_file_is_read_and_skipped_by_its_content(workdir, parsed):
    url = f"sqlite:///{workdir / 'xrun.sqlite'}"
    files = three_runs(workdir / "runs")
    assert start(url, "-q", *files).exit_code == 0
    before = sha256(files[0])
    text = Path(files[0]).read_text()
    Path(files[0]).write_text("# the same run, reformatted\n" + text.replace(": ", ":   "))
    assert sha256(files[0]) != before
    parsed.clear()
    result = start(url, *files)
    assert result.exit_code == 0, result.output
    assert parsed == ["run-f0.yaml"]  # not by the file's hash, but by the document's
    assert result.stdout.count("skipped") == 3
    assert "run f0 skipped: finished earlier (instance 1)" in result.stderr
    assert len(instances(url)) == 3


def test_jobs_2_records_file_hashes_and_skips_unread(workdir, parsed):
    url = f"sqlite:///{workdir / 'xrun.sqlite'}"
    files = three_runs(workdir / "runs")
    first = start(url, "--jobs", "2", *files)
    assert first.exit_code == 0, first.output
    assert file_hashes(url) == {f"f{i}": sha256(f) for i, f in enumerate(files)}  # set in the workers
    write_runs(workdir / "runs", [countdown_run("f2", seed=2, episodes=4, length=3)])
    parsed.clear()
    again = start(url, "--jobs", "2", *files)
    assert again.exit_code == 0, again.output
    assert parsed == ["run-f2.yaml"]  # f0, f1 skipped unread; f2 changed: loaded, run in a worker
    assert again.stdout.count("skipped") == 2 and again.stdout.count("finished") == 1
    assert [uid for uid, _ in instances(url)] == ["f0", "f1", "f2", "f2"]


def test_a_uid_taken_from_the_file_name_is_not_bound_to_the_bytes(workdir, parsed):
    """Without ``uid`` the document takes the file's stem: the same bytes
    under another name are another run, so no file hash is recorded."""
    url = f"sqlite:///{workdir / 'xrun.sqlite'}"
    doc = countdown_run("ignored", episodes=2, length=3)
    del doc["uid"]
    plain = workdir / "alpha.yaml"
    with plain.open("w") as fh:
        YAML().dump(doc, fh)
    assert start(url, "-q", str(plain)).exit_code == 0
    assert file_hashes(url) == {"alpha": None}
    copy = workdir / "beta.yaml"
    shutil.copyfile(plain, copy)
    parsed.clear()
    result = start(url, str(plain), str(copy))
    assert result.exit_code == 0, result.output
    assert sorted(parsed) == ["alpha.yaml", "beta.yaml"]
    assert "run alpha skipped" in result.stderr
    assert instances(url) == [("alpha", "finished"), ("beta", "finished")]


def test_run_from_a_path_records_the_file_hash_and_fills_an_old_row(store_url, workdir):
    (path,) = write_runs(workdir / "runs", [countdown_run("p", episodes=2, length=3)])
    with Store(store_url) as store:
        from xdoe.execution import load_plan

        first = run(load_plan(path), store=store, results=workdir / "r")  # no file: no hash
        assert first.status == "finished"
        assert file_hashes(store_url) == {"p": None}
        assert store.runs.finished_file_hashes([sha256(path)]) == {}
        second = run(path, store=store, results=workdir / "r", rerun=True)
        assert second.status == "finished"
        assert file_hashes(store_url) == {"p": sha256(path)}
        assert store.runs.finished_file_hashes([sha256(path)]) == {sha256(path): ("p", second.instance_id)}


def test_finished_file_hashes_only_counts_finished_instances_across_chunks(store_url, workdir):
    docs = {name: countdown_run(name, episodes=1, length=2) for name in ("done", "failed", "running")}
    digests = {name: hashlib.sha256(name.encode()).hexdigest() for name in docs}
    with Store(store_url) as store:
        for name, doc in docs.items():
            recorder = store.recorder(doc, results_root=workdir / "r", file_sha256=digests[name])
            recorder.start()
            if name != "running":
                recorder.finish("finished" if name == "done" else "failed", error=None)
        noise = [hashlib.sha256(str(i).encode()).hexdigest() for i in range(1100)]
        asked = noise[:700] + [digests["failed"], digests["done"], digests["running"]] + noise[700:]
        found = store.runs.finished_file_hashes(iter(asked))
        done_id = max(i.id for i in store.runs.instances("finished"))
        assert found == {digests["done"]: ("done", done_id)}
        assert store.runs.finished_file_hashes([]) == {}


def test_each_document_is_parsed_once_per_campaign(workdir, parsed):
    """Issue 35 item 1: the run executes the plan the campaign read and
    checked (it travels with the task), never its file parsed again; the
    file's sha256 is the one of the bytes the campaign read."""
    url = f"sqlite:///{workdir / 'xrun.sqlite'}"
    files = three_runs(workdir / "runs")
    result = start(url, "--in-process", *files)  # the runs in this process: a second parse would show
    assert result.exit_code == 0, result.output
    assert sorted(parsed) == ["run-f0.yaml", "run-f1.yaml", "run-f2.yaml"]
    assert file_hashes(url) == {f"f{i}": sha256(f) for i, f in enumerate(files)}
