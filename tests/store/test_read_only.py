"""Issue 25, item 11: the commands that only read open SQLite read-only
(``mode=ro``, no journal-mode change): another application's file and a
0-byte file keep their bytes, and a store on read-only media can be read."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from xdoe.cli._xrun import main as xrun
from xdoe.store import Store

from campaign import execute, generate_campaign


def _xrun(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(xrun, list(args))
    return result.exit_code, result.output


def test_status_leaves_another_applications_sqlite_file_unchanged(tmp_path: Path) -> None:
    other = tmp_path / "other.sqlite"
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)")
    con.execute("INSERT INTO notes (text) VALUES ('hello')")
    con.commit()
    con.close()
    before = other.read_bytes()
    for command in ("status", "results", "export"):
        code, output = _xrun(command, "--store", f"sqlite:///{other}", *(["--output", str(tmp_path / "e.csv")]
                                                                        if command == "export" else []))
        assert code == 2, output
        assert "no xdoe tables" in output
    assert other.read_bytes() == before  # still journal_mode=delete: no WAL switch, no write
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.sqlite"]


def test_status_does_not_write_a_header_into_an_empty_file(tmp_path: Path) -> None:
    empty = tmp_path / "empty.sqlite"
    empty.touch()
    code, output = _xrun("status", "--store", f"sqlite:///{empty}")
    assert code == 2, output
    assert empty.stat().st_size == 0


def test_read_only_store_refuses_writes(store_url: str) -> None:
    url = store_url
    Store(url).close()
    with Store(url, read_only=True) as store:
        assert store.read_only
        assert store.runs.versions() == []
        with pytest.raises(Exception, match="readonly|read-only|read only"):
            store.runs.mark_interrupted(1, "no")  # any write fails; nothing is changed


def _can_bind_read_only(tmp_path: Path) -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-m", "sh", "-c", f"mount --bind -o ro {tmp_path} {tmp_path}"],
                           capture_output=True)
    return probe.returncode == 0


def test_store_on_read_only_media_can_be_read(tmp_path: Path) -> None:
    if not _can_bind_read_only(tmp_path):
        pytest.skip("no read-only bind mount here (needs unshare -m and CAP_SYS_ADMIN)")
    media, store_file = _one_run_store(tmp_path)  # closed cleanly: no WAL index to read it with
    files = sorted((tmp_path / "runs").glob("run-*.yaml"))
    before = store_file.read_bytes()
    # a private mount namespace: the read-only bind mount vanishes with the command
    script = (f"mount --bind -o ro {media} {media} && touch {media}/probe 2>/dev/null && exit 9; "
              f"{sys.executable} -m xdoe.cli._xrun status --store sqlite:///{store_file} {tmp_path / 'runs'}; "
              f"echo status-exit $?; {sys.executable} -m xdoe.cli._xrun results --store sqlite:///{store_file}")
    done = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 finished, 15 missing" in done.stdout and "status-exit 1" in done.stdout  # 1: runs missing
    assert "finished" in done.stdout and files[0].stem.removeprefix("run-") in done.stdout
    assert store_file.read_bytes() == before


def _one_run_store(tmp_path: Path) -> tuple[Path, Path]:
    """``(folder, store file)``: one finished run of :func:`generate_campaign` in
    ``tmp_path/media/xrun.sqlite``, closed (nothing beside it); the run files in ``tmp_path/runs``."""
    files = generate_campaign(tmp_path / "runs")
    media = tmp_path / "media"
    media.mkdir()
    store_file = media / "xrun.sqlite"
    with Store(f"sqlite:///{store_file}") as store:
        execute(files[0], store, tmp_path / "results")
    assert sorted(p.name for p in media.iterdir()) == ["xrun.sqlite"]
    return media, store_file


def test_read_commands_leave_no_wal_or_shm_beside_a_chmod_444_store(tmp_path: Path) -> None:
    """Issue 33, item 7: a store nobody may write (``chmod 444``, in a
    writable folder) is read ``immutable=1``: ``mode=ro`` would create
    ``-wal``/``-shm`` files beside it (root included, whom ``os.access``
    lets write anything)."""
    import os
    import stat

    from xdoe._extras import installed

    media, store_file = _one_run_store(tmp_path)
    store_file.chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    before = store_file.read_bytes()
    url = f"sqlite:///{store_file}"
    commands: list[list[str]] = [["status", "--store", url, str(tmp_path / "runs")], ["results", "--store", url],
                                 ["export", "--store", url, "--output", str(tmp_path / "e.csv")]]
    if installed("pandas"):
        commands += [["analyze", "--store", url], ["report", "--store", url, "-o", str(tmp_path / "r.md")]]
    try:
        for args in commands:
            code, output = _xrun(*args)
            assert code in (0, 1), (args, output)
            assert "Traceback" not in output
            assert sorted(p.name for p in media.iterdir()) == ["xrun.sqlite"], args
        assert store_file.read_bytes() == before
        assert "1 runs" in _xrun("results", "--store", url)[1]  # the rows, read without the file being written
    finally:
        os.chmod(store_file, 0o644)


def test_read_commands_leave_a_writable_store_as_they_found_it(tmp_path: Path) -> None:
    """A store in a writable folder with no ``-wal`` beside it (a campaign
    that ended) is read ``mode=rw`` with ``query_only``: reading still
    creates ``-wal``/``-shm``, and closing the last connection removes them
    (``mode=ro`` left them beside the store after every read command). A
    store that has a ``-wal`` (a campaign running, or killed) keeps it."""
    import os

    from xdoe._extras import installed

    media, store_file = _one_run_store(tmp_path)
    before = store_file.read_bytes()
    url = f"sqlite:///{store_file}"
    commands: list[list[str]] = [["status", "--store", url, str(tmp_path / "runs")], ["results", "--store", url],
                                 ["export", "--store", url, "--output", str(tmp_path / "e.csv")],
                                 ["tree", "--store", url]]
    if installed("pandas"):
        commands += [["analyze", "--store", url], ["report", "--store", url, "-o", str(tmp_path / "r.md")]]
    for args in commands:
        code, output = _xrun(*args)
        assert code in (0, 1), (args, output)
        assert sorted(p.name for p in media.iterdir()) == ["xrun.sqlite"], args
    assert store_file.read_bytes() == before
    with Store(url, read_only=True) as store:
        with pytest.raises(Exception, match="readonly|read-only|read only"):
            store.runs.mark_interrupted(1, "no")  # query_only: still nothing can be written
    writer = sqlite3.connect(store_file)  # a campaign holding the store open: its -wal stays
    try:
        writer.execute("CREATE TABLE IF NOT EXISTS probe (x)")
        writer.commit()
        assert os.path.exists(f"{store_file}-wal")
        assert _xrun("results", "--store", url)[0] == 0
        assert os.path.exists(f"{store_file}-wal")
    finally:
        writer.close()
