"""xdoe._files.write_atomically: the one way files the user names are written."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from xdoe._files import file_sha256, write_atomically
from xdoe.errors import InputError


def _fails_half_way(tmp: Path) -> None:
    tmp.write_text("half of it")
    raise OSError(28, "No space left on device")


def test_a_failed_write_leaves_no_file_and_keeps_an_existing_one(tmp_path: Path) -> None:
    with pytest.raises(OSError, match="No space"):
        write_atomically(tmp_path / "new.csv", _fails_half_way)
    assert list(tmp_path.iterdir()) == []
    old = tmp_path / "old.csv"
    old.write_text("kept")
    with pytest.raises(OSError, match="No space"):
        write_atomically(old, _fails_half_way, overwrite=True)
    assert old.read_text() == "kept" and list(tmp_path.iterdir()) == [old]


def test_an_existing_file_is_refused_even_when_it_appears_while_writing(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "t.csv"
    assert write_atomically(target, lambda tmp: tmp.write_text("a")) == target
    assert target.read_text() == "a" and oct(target.stat().st_mode & 0o777) == "0o644"
    with pytest.raises(InputError, match=r"t\.csv: exists; not overwritten \(try elsewhere\)$"):
        write_atomically(target, lambda tmp: tmp.write_text("b"), hint="try elsewhere")
    racer = tmp_path / "racer.csv"

    def slow(tmp: Path) -> None:  # someone else creates the file meanwhile
        tmp.write_text("mine")
        racer.write_text("theirs")

    with pytest.raises(InputError, match="exists; not overwritten"):
        write_atomically(racer, slow)
    assert racer.read_text() == "theirs" and target.read_text() == "a"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["racer.csv", "sub"]
    assert write_atomically(target, lambda tmp: tmp.write_text("c"), overwrite=True).read_text() == "c"


def test_a_dangling_link_counts_as_existing(tmp_path: Path) -> None:
    link = tmp_path / "link.csv"
    os.symlink(tmp_path / "nowhere", link)
    with pytest.raises(InputError):
        write_atomically(link, lambda tmp: tmp.write_text("x"))
    assert not (tmp_path / "nowhere").exists()


@pytest.mark.parametrize("umask, mode", [(0o077, 0o600), (0o002, 0o664), (0o022, 0o644)])
def test_the_file_gets_the_mode_the_users_umask_asks_for(tmp_path: Path, umask: int, mode: int) -> None:
    old = os.umask(umask)
    try:
        plain = tmp_path / "plain.txt"
        plain.write_text("x")  # what open() gives
        written = write_atomically(tmp_path / "w.txt", lambda tmp: tmp.write_text("x"))
        replaced = write_atomically(plain, lambda tmp: tmp.write_text("y"), overwrite=True)
    finally:
        os.umask(old)
    assert stat.S_IMODE(plain.stat().st_mode) == mode
    assert stat.S_IMODE(written.stat().st_mode) == mode and stat.S_IMODE(replaced.stat().st_mode) == mode


@pytest.mark.parametrize("size", [0, 1, 4096, (1 << 20) - 1, 1 << 20, (5 << 19) + 7])
def test_file_sha256_is_the_sha256_of_the_bytes(tmp_path: Path, size: int) -> None:
    """Read with ``os.read`` in 1 MiB chunks: every chunk boundary gives hashlib's answer."""
    import hashlib

    data = bytes(range(256)) * (size // 256) + bytes(size % 256)
    path = tmp_path / "f.bin"
    path.write_bytes(data)
    assert file_sha256(path) == file_sha256(str(path)) == hashlib.sha256(data).hexdigest()


def test_file_sha256_of_a_folder_or_a_missing_file_raises_oserror(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        file_sha256(tmp_path)
    with pytest.raises(OSError):
        file_sha256(tmp_path / "missing")
