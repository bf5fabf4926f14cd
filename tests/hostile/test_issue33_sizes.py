"""Issue 33, items 4, 6 and 10: sizes bounded from the options alone (the
design options' dry runs, ``xgen augment``), ``xgen augment`` on a plain
``design: full_factorial``, and every ``-o`` writer failing with one line
and nothing left behind. Each case failed before (a hang, an
``ArrayMemoryError`` or ``OSError`` traceback, a ``TypeError``, an empty
block recorded)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result
from dummy_study import dummy_study

from xdoe.cli._xgen import main as xgen

from hostile.cases import DUMMY


def _snapshot(root: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None) for p in root.rglob("*")}


def _one_error(result: Result, code: int, *fragments: str) -> str:
    assert result.exit_code == code, f"exit {result.exit_code}: {result.output}"
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    lines = [line for line in result.output.splitlines() if not line.startswith("warning: ")]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    assert "Traceback" not in result.output
    for fragment in fragments:
        assert fragment in lines[0], f"expected {fragment!r} in {lines[0]!r}"
    return lines[0]


# ----------------------------------------------------------------- design options, also with --dry-run


@pytest.mark.parametrize("design", [
    "{method: plackett_burman, center: 1000000000}",
    "{method: morris, trajectories: 1000000000}",
    "{method: sobol, n: 1099511627776}",
])
def test_a_design_option_too_large_is_refused_by_the_dry_run(design: str, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    doc = tmp_path / "doc.yaml"
    doc.write_text(DUMMY.read_text(encoding="utf-8").replace("design: auto", f"design: {design}"), encoding="utf-8")
    before = _snapshot(tmp_path)
    result = CliRunner().invoke(xgen, ["generate", str(doc), "--dry-run"])
    _one_error(result, 2, f"{doc}:12: design.", "exceeds max_total_runs 1000000")
    assert _snapshot(tmp_path) == before


# ----------------------------------------------------------------- xgen augment


def _generated(tmp_path: Path, design, factors) -> tuple[Path, Path]:
    doc = tmp_path / "exp.yaml"
    doc.write_text(yaml.safe_dump(dummy_study("seq", 3, design, factors, output="out")))
    out = tmp_path / "out"
    result = CliRunner().invoke(xgen, ["generate", str(doc), "-o", str(out), "-q"])
    assert result.exit_code == 0, result.output
    return doc, out


TWO = {n: {"levels": [0, 1]} for n in "abc"}
CONTINUOUS = {"x": {"range": [1, 5]}, "y": {"range": [5, 9]}}


@pytest.mark.parametrize(("design", "factors", "args", "fragments"), [
    ("full_factorial", TWO, ["--add", "1000000000"],
     ["--add 1000000000: 1000000000 new design points", "8 existing runs", "exceeds max_total_runs 1000000"]),
    ("full_factorial", TWO, ["--add", "1000000000", "--dry-run"], ["--add 1000000000", "exceeds max_total_runs"]),
    ("full_factorial", TWO, ["--replicate", "0,1", "--repetitions", "1000000"],
     ["--replicate (2 points)", "x 1000000 repetition(s)", "exceeds max_total_runs 1000000"]),
    ("full_factorial", TWO, ["--add", "5", "--max-total-runs", "12"], ["exceeds max_total_runs 12"]),
    ({"method": "fractional_factorial", "resolution": 3, "center": 2}, CONTINUOUS,
     ["--axial", "--center", "1000000000"], ["--axial --center 1000000000", "exceeds max_total_runs"]),
    ({"method": "fractional_factorial", "resolution": 3}, TWO, ["--foldover", "--max-total-runs", "6"],
     ["--foldover: 4 new design points", "exceeds max_total_runs 6"]),
    ("full_factorial", TWO, ["--replicate", ""], ["--replicate '': no design point given"]),
    ("full_factorial", TWO, ["--replicate", " , "], ["no design point given"]),
])
def test_augment_refuses_with_one_line_and_writes_nothing(design, factors, args, fragments, tmp_path: Path) -> None:
    doc, out = _generated(tmp_path, design, factors)
    before = _snapshot(tmp_path)
    result = CliRunner().invoke(xgen, ["augment", str(doc), "-o", str(out), *args])
    _one_error(result, 2, *fragments)
    assert _snapshot(tmp_path) == before


@pytest.mark.parametrize("args", [["--add", "2"], ["--replicate", "0,7"], ["--foldover"]])
def test_augment_of_a_plain_full_factorial(args: list[str], tmp_path: Path) -> None:
    doc, out = _generated(tmp_path, "full_factorial", TWO)
    result = CliRunner().invoke(xgen, ["augment", str(doc), "-o", str(out), *args])
    assert result.exit_code == 0, result.output
    blocks = json.loads((out / "manifest.json").read_text())["design"]["doe"]["info"]["blocks"]
    assert [b["block"] for b in blocks] == [0, 1] and blocks[1]["points"] >= 2
    assert len(list(out.glob("run-*.yaml"))) == 8 + blocks[1]["runs"]
    # the document generated again keeps the block
    again = CliRunner().invoke(xgen, ["generate", str(doc), "-o", str(out)])
    assert again.exit_code == 0 and "up to date" in again.output, again.output


# ----------------------------------------------------------------- writers: xrun report / export / plot -o

import os  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "store"))
from campaign import execute, generate_campaign  # noqa: E402

from xdoe.cli._xrun import main as xrun  # noqa: E402

WRITERS = {
    "export": ["export", "-o", "{out}/table.csv"],
    "report": ["report", "{folder}", "-o", "{out}/report.html"],
    "plot": ["plot", "curves", "-o", "{out}/curves.png"],
}


@pytest.fixture
def finished(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A campaign of one finished run (the dummy study), its store in ``$XRUN_STORE``."""
    from xdoe.store import Store

    monkeypatch.chdir(tmp_path)
    url = f"sqlite:///{tmp_path / 'xrun.sqlite'}"
    monkeypatch.setenv("XRUN_STORE", url)
    files = generate_campaign(tmp_path / "folder")
    with Store(url) as store:
        execute(files[0], store, tmp_path / "results")
    return tmp_path


def _tmpfs(mount: Path, options: str) -> None:
    mount.mkdir()
    try:
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(mount)],
                              capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        pytest.skip(f"cannot mount a tmpfs: {exc}")
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs: {done.stderr.strip()}")


@pytest.fixture
def full_disk(tmp_path: Path):
    """A 256 KiB tmpfs filled to the last byte (root only; skipped where
    mounting is not permitted), unmounted afterwards."""
    mount = tmp_path / "full"
    _tmpfs(mount, "size=256k")
    try:
        fd = os.open(mount / "filler", os.O_WRONLY | os.O_CREAT)
        try:
            for size in (65536, 4096, 1):
                try:
                    while os.write(fd, b"x" * size):
                        pass
                except OSError:
                    pass
        finally:
            os.close(fd)
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True, timeout=30)


@pytest.fixture
def read_only(tmp_path: Path):
    """A read-only tmpfs (EROFS, also for root)."""
    mount = tmp_path / "ro"
    _tmpfs(mount, "ro,size=64k")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True, timeout=30)


def _write(command: str, finished: Path, out: Path | str, *extra: str) -> Result:
    args = [a.format(out=out, folder=finished / "folder") for a in WRITERS[command]]
    return CliRunner().invoke(xrun, [*args, *extra])


def _left(folder: Path, keep: set[str]) -> list[str]:
    return sorted(p.name for p in folder.rglob("*") if p.name not in keep)


@pytest.mark.parametrize("command", sorted(WRITERS))
def test_a_writer_on_a_full_disk_says_so_in_one_line_and_leaves_nothing(command: str, finished: Path,
                                                                        full_disk: Path) -> None:
    result = _write(command, finished, full_disk)
    _one_error(result, 1, "No space left on device", "nothing was written")
    assert _left(full_disk, {"filler"}) == []
    sub = _write(command, finished, full_disk / "new" / "deeper")  # the folders it made go again
    _one_error(sub, 1, "No space left on device")
    assert _left(full_disk, {"filler"}) == []


@pytest.mark.parametrize("command", sorted(WRITERS))
def test_a_writer_into_a_read_only_folder_says_so_in_one_line(command: str, finished: Path, read_only: Path) -> None:
    _one_error(_write(command, finished, read_only), 2, "Read-only file system", "writable place")
    assert list(read_only.iterdir()) == []


@pytest.mark.parametrize("overwrite", [[], ["--overwrite"]])
@pytest.mark.parametrize("command", sorted(WRITERS))
def test_a_writer_refuses_a_bad_name_in_one_line(command: str, overwrite: list[str], finished: Path) -> None:
    before = _snapshot(finished)
    args = [a.format(out=finished, folder=finished / "folder") for a in WRITERS[command]]
    suffix = Path(args[-1]).suffix
    for target, fragment in ((finished / ("n" * 300 + suffix), "File name too long"),
                             (finished / "folder", "Is a directory"),
                             (finished / "folder" / "manifest.json" / f"x{suffix}", "Not a directory")):
        result = CliRunner().invoke(xrun, [*args[:-1], str(target), *overwrite])
        _one_error(result, 2, fragment)
    assert _snapshot(finished) == before


# ----------------------------------------------------------------- a results path that cannot be reached


@pytest.mark.parametrize(("results", "fragment"), [
    ("loop/res", "cannot be resolved"),
    ("loop", "cannot be resolved"),
    ("afile/res", "afile is not a folder"),
])
def test_a_results_path_that_cannot_be_reached_is_refused_before_the_store_is_made(
        results: str, fragment: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    generated = CliRunner().invoke(xgen, ["generate", str(DUMMY), "-o", "out", "-q"])
    assert generated.exit_code == 0, generated.output
    (tmp_path / "loop").symlink_to("loop2")
    (tmp_path / "loop2").symlink_to("loop")
    (tmp_path / "afile").write_text("x")
    before = _snapshot(tmp_path)
    result = CliRunner().invoke(xrun, ["experiment-start", "out/run-dummy-study-0000.yaml", "--results", results,
                                       "--store", f"sqlite:///{tmp_path / 'xrun.sqlite'}", "--in-process"])
    _one_error(result, 2, f"--results {results}: ", fragment)  # the preflight's one line (issue 33, item 3)
    assert _snapshot(tmp_path) == before  # no store, no results folder


def test_plackett_burman_of_a_size_pydoe_cannot_build_is_one_line(tmp_path: Path) -> None:
    doc = tmp_path / "doc.yaml"
    doc.write_text(yaml.safe_dump(dummy_study("pb", 1, {"method": "plackett_burman"},
                                              {f"f{i}": {"levels": [0, 1]} for i in range(24)})))
    result = CliRunner().invoke(xgen, ["check", str(doc)])
    _one_error(result, 2, "plackett_burman: no design of 28 runs for 24 factors")
