"""Issue 10, the non-refusal half: what is cleaned up, what warns, what a
raised limit lets through."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from xdoe.cli._xgen import main as xgen
from xdoe.cli._xrun import main as xrun
from xdoe.design.runfiles._staging import _HOST, clean_stale_staging

from hostile.cases import DUMMY, base_run_document


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_stale_staging_folders_of_dead_xgen_are_removed_and_said(tmp_path: Path) -> None:
    dead, alive = _dead_pid(), os.getppid()
    stale = tmp_path / f".out.tmp-{_HOST}-{dead}-abc"
    stale.mkdir()
    (stale / "run-x-0000.yaml").write_text("uid: x\n")
    live = tmp_path / f".out.tmp-{_HOST}-{alive}-def"
    live.mkdir()
    foreign = tmp_path / f".out.tmp-{_HOST}-{dead}-ghi"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine\n")
    other_host = tmp_path / f".out.tmp-elsewhere-{dead}-jkl"
    other_host.mkdir()

    result = CliRunner().invoke(xgen, ["generate", str(DUMMY), "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert f"removed {stale}: staging folder of an interrupted xgen" in result.output
    assert not stale.exists()
    assert live.is_dir() and foreign.is_dir() and (foreign / "notes.txt").is_file() and other_host.is_dir()
    assert clean_stale_staging(tmp_path / "out") == ()  # nothing left to clean
    assert (tmp_path / "out" / "manifest.json").is_file()


#: ``xgen generate`` whose every file written into its staging folder is a
#: point of :func:`hold.hold_here`: held there, it waits to be killed.
_HELD_XGEN = """
import hold
from xdoe.design.runfiles import _output
real = _output._DirSink.file
def file(self, name, data):
    real(self, name, data)
    hold.hold_here()
_output._DirSink.file = file
from xdoe.cli._xgen import main
main()
"""


def test_staging_folder_of_a_killed_xgen_is_cleaned_on_the_next_run(tmp_path: Path) -> None:
    """A real xgen killed while writing (SIGKILL, where :mod:`hold` holds it:
    3 of its 16 run files written) leaves its staging folder; the next run
    removes it."""
    import hold

    doc = tmp_path / "big.yaml"
    doc.write_text(DUMMY.read_text(), encoding="utf-8")
    hold.request(tmp_path / "hold", 3)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), hold.HOLD: str(tmp_path / "hold")}
    proc = subprocess.Popen([sys.executable, "-c", _HELD_XGEN, "generate", str(doc), "-o", str(tmp_path / "out"),
                             "-q"], env=env)
    try:
        assert hold.wait_held(proc, tmp_path / "hold"), "xgen finished before its hold"
        proc.kill()
    finally:
        proc.wait()
    left = [p for p in tmp_path.iterdir() if p.name.startswith(".out.tmp-")]
    assert len(left) == 1 and len(list(left[0].glob("run-*.yaml"))) == 3, left  # the killed xgen's staging folder
    small = tmp_path / "small.yaml"
    small.write_text(DUMMY.read_text(), encoding="utf-8")
    result = CliRunner().invoke(xgen, ["generate", str(small), "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert "staging folder of an interrupted xgen" in result.output
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out.tmp-")]


def test_max_total_runs_can_be_raised(tmp_path: Path) -> None:
    doc = tmp_path / "doc.yaml"
    doc.write_text(DUMMY.read_text().replace("design: auto", "max_total_runs: 10\ndesign: auto"), encoding="utf-8")
    refused = CliRunner().invoke(xgen, ["check", str(doc)])
    assert refused.exit_code == 2 and "16 runs is more than max_total_runs 10" in refused.output
    allowed = CliRunner().invoke(xgen, ["check", str(doc), "--max-total-runs", "16"])
    assert allowed.exit_code == 0, allowed.output


def test_run_document_without_uid_or_episodes_warns(tmp_path: Path) -> None:
    text = base_run_document()
    lines = [line for line in text.splitlines(keepends=True)
             if not line.startswith("uid:") and "episodes:" not in line]
    path = tmp_path / "hand-written.yaml"
    path.write_text("".join(lines), encoding="utf-8")
    result = CliRunner().invoke(xrun, ["experiment-check", str(path)])
    assert result.exit_code == 0, result.output
    assert f"warning: {path}:1: no 'uid': the run is named after its file, 'hand-written'" in result.output
    assert "no 'episodes' in phase_config: the phase runs 1 episode per worker" in result.output


def test_bad_input_to_xrun_creates_no_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Neither the default store nor the results folder appear when a
    document is refused (xrun used to create the store first)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("XRUN_STORE", raising=False)
    good = tmp_path / "good.yaml"
    good.write_text(base_run_document(), encoding="utf-8")
    bad = tmp_path / "bad.yaml"
    bad.write_text(base_run_document().replace("seed:", "seed: true #"), encoding="utf-8")
    result = CliRunner().invoke(xrun, ["experiment-start", str(good), str(bad), "-q"])
    assert result.exit_code == 2, result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.yaml", "good.yaml"]
    result = CliRunner().invoke(xrun, ["experiment-start", str(good), "-q"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "_outputs" / "xrun.sqlite").is_file()


def test_nan_run_never_stops_the_others_in_xgen_output(tmp_path: Path) -> None:
    """Issue 10 defect 5: NaN levels used to be written (16 runs) and then
    stop xrun; now xgen refuses them at the factor's line."""
    doc = tmp_path / "nan.yaml"
    doc.write_text(DUMMY.read_text().replace("[5, 10]", "[.nan, 10]"), encoding="utf-8")
    result = CliRunner().invoke(xgen, ["generate", str(doc), "-o", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert f"{doc}:14: factors.length.levels[0]: nan is not a finite number" in result.output
    assert not (tmp_path / "out").exists()
