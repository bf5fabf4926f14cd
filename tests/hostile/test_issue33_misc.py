"""Issue 33, item 10 (the smaller gaps), as hostile inputs: an empty phase
name, a time limit too small to keep (``step_timeout: 1e-12``), a garbage
or FIFO ``manifest.json`` beside run files. Each is one ``error:`` line,
exit 2, nothing written, fast; none was refused before (the manifests were
ignored and every run file of the folder ran)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

import pytest
from click.testing import CliRunner

from xdoe.cli._xgen import main as xgen
from xdoe.cli._xrun import main as xrun

from hostile.cases import DUMMY, Case, _sub, base_run_document, materialize
from hostile.test_hostile import _assert_one_line_error, _snapshot

BASE = base_run_document()
EXPERIMENT = DUMMY.read_text(encoding="utf-8")

XRUN = [
    Case("phase_name_empty", _sub(BASE, "  - training:", '  - "":'), "the phase name must not be empty"),
    Case("phase_name_blank", _sub(BASE, "  - training:", '  - "   ":'), "the phase name must not be empty"),
    Case("agent_name_empty", _sub(BASE, "name: random", 'name: ""', 2), "at least 1 character"),
    Case("step_timeout_1e-12", _sub(BASE, "        worker: 1\n", "        worker: 1\n        step_timeout: 1e-12\n"),
         "step_timeout: 1e-12 s is less than the least time limit, 0.001 s"),
    Case("run_timeout_1e-7", _sub(BASE, "run_config:\n", "run_config:\n  timeout: 0.0000001\n"),
         "run_config.timeout: 1e-07 s is less than the least time limit"),
]

XGEN = [
    Case("phase_name_empty", _sub(EXPERIMENT, "  - training:", '  - "":'), "the phase name must not be empty"),
    Case("step_timeout_1e-12", _sub(EXPERIMENT, "train: {mode: train, worker: 1, episodes: 3}",
                                    "train: {mode: train, worker: 1, episodes: 3, step_timeout: 1.0e-12}"),
         "1e-12 s is less than the least time limit"),
]


@pytest.mark.parametrize("command", ["experiment-check", "experiment-start"])
@pytest.mark.parametrize("case", XRUN, ids=[c.name for c in XRUN])
def test_xrun_refuses(case: Case, command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    path, args = materialize(case, tmp_path)
    before = _snapshot(tmp_path)
    extra = ["--store", f"sqlite:///{tmp_path / 'store.sqlite'}", "--results", str(tmp_path / "results"),
             "-q"] if command == "experiment-start" else []
    result = CliRunner().invoke(xrun, [command, str(path), *extra, *args])
    _assert_one_line_error(result, case, path)
    assert _snapshot(tmp_path) == before, "something was written"


@pytest.mark.parametrize("command", ["check", "generate"])
@pytest.mark.parametrize("case", XGEN, ids=[c.name for c in XGEN])
def test_xgen_refuses(case: Case, command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    path, args = materialize(case, tmp_path)
    before = _snapshot(tmp_path)
    extra = ["-o", str(tmp_path / "out")] if command == "generate" else []
    result = CliRunner().invoke(xgen, [command, str(path), *extra, *args])
    _assert_one_line_error(result, case, path)
    assert _snapshot(tmp_path) == before, "something was written"


def test_a_run_timeout_option_below_a_millisecond_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "run.yaml"
    path.write_text(BASE, encoding="utf-8")
    result = CliRunner().invoke(xrun, ["experiment-start", str(path), "--run-timeout", "1e-12", "--store",
                                       f"sqlite:///{tmp_path / 's.sqlite'}", "--results", str(tmp_path / "r")])
    assert result.exit_code == 2 and "--run-timeout" in result.output and "0.001" in result.output, result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.yaml"]


def _write(text: str | bytes) -> Callable[[Path], None]:
    def make(path: Path) -> None:
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")
    return make


MANIFESTS: dict[str, tuple[Callable[[Path], None], str]] = {
    "garbage": (_write(b"\x00\xff not json at all"), "is not UTF-8 JSON"),
    "empty": (_write(""), "is not UTF-8 JSON"),
    "truncated": (_write('{"xdoe_version": "1", "files": [{"name": "run-a.yaml"}'), "is not UTF-8 JSON"),
    "other_json": (_write('{"name": "my package", "version": 3}'), "is not an xgen manifest"),
    "a_list": (_write("[1, 2, 3]"), "is not an xgen manifest"),
    "fifo": (os.mkfifo, "is a FIFO, not a regular file"),
    "folder": (Path.mkdir, "is a folder, not a regular file"),
    "link_to_dev_zero": (lambda p: p.symlink_to("/dev/zero"), "is a symbolic link, not a regular file"),
}


def _folder(tmp_path: Path, manifest: str, make: Callable[[Path], None]) -> Path:
    folder = tmp_path / "runs"
    folder.mkdir()
    for uid in ("a", "b"):
        (folder / f"run-{uid}.yaml").write_text(_sub(BASE, "\nuid: ", f"\nuid: {uid}-"), encoding="utf-8")
    make(folder / manifest)
    return folder


@pytest.mark.parametrize("manifest", ["manifest.json", "manifest-dummy-study.json"])
@pytest.mark.parametrize("kind", list(MANIFESTS))
@pytest.mark.parametrize("command", ["experiment-check", "experiment-start"])
def test_a_manifest_that_is_not_one_is_refused_naming_it(kind: str, manifest: str, command: str,
                                                         tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """It was ignored: every run file of the folder ran, those an xgen
    manifest would have left out too. A FIFO is never opened (no hang)."""
    make, expect = MANIFESTS[kind]
    folder = _folder(tmp_path, manifest, make)
    monkeypatch.chdir(tmp_path)
    before = _snapshot(tmp_path)
    extra = ["--store", f"sqlite:///{tmp_path / 'store.sqlite'}", "--results", str(tmp_path / "results"),
             "-q"] if command == "experiment-start" else []
    result = CliRunner().invoke(xrun, [command, str(folder), *extra])
    _assert_one_line_error(result, Case(kind, None, f"{folder / manifest}: {expect}"), folder)
    assert _snapshot(tmp_path) == before, "something was written"


def test_a_fifo_manifest_in_a_real_process_ends_at_once(tmp_path: Path) -> None:
    """As a process: one line, exit 2, well under 5 s, the FIFO never opened
    (opening it for reading would block until a writer came)."""
    folder = _folder(tmp_path, "manifest.json", os.mkfifo)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", "from xdoe.cli._xrun import main; main()", "experiment-start",
                           str(folder), "--store", f"sqlite:///{tmp_path / 's.sqlite'}", "--results",
                           str(tmp_path / "results")], capture_output=True, text=True, timeout=60, env=env,
                          cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and "manifest.json: is a FIFO" in proc.stderr
    assert time.monotonic() - started < 5
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runs"]


def test_the_dashboard_refuses_such_a_folder_too(tmp_path: Path) -> None:
    pytest.importorskip("fastapi", reason="the dashboard extra is not installed (fastapi)")
    from xdoe.dashboard._launch import run_files
    from xdoe.errors import InputError

    folder = _folder(tmp_path, "manifest.json", _write("{}"))
    with pytest.raises(InputError, match="manifest.json: is not an xgen manifest"):
        run_files(folder)
