"""Staging folders of xgen's writes, and what a killed xgen leaves behind.

xgen writes into ``.<output>.tmp-<host>-<pid>-<random>`` beside the output
and moves the files into place at the end. A staging folder names the process
writing it, so that a later xgen can tell a dead process's leftovers (killed
while writing) from a live one's and remove only those.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
from pathlib import Path

__all__ = ["clean_stale_staging", "staging_prefix"]

_HOST = re.sub(r"[^A-Za-z0-9_.-]", "_", socket.gethostname()) or "host"
_XGEN_TABLES = ("manifest.json", "design.csv")


def staging_prefix(target: Path) -> str:
    """``.<name>.tmp-<host>-<pid>-``, the prefix of this process's staging
    folders for ``target`` (for :func:`tempfile.mkdtemp`)."""
    return f".{target.name}.tmp-{_HOST}-{os.getpid()}-"


def _is_xgen_file(name: str) -> bool:
    return name in _XGEN_TABLES or (name.startswith("run-") and name.endswith(".yaml"))


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # PermissionError: another user's live process
        return True
    return True


def clean_stale_staging(target: Path) -> tuple[Path, ...]:
    """Remove the staging folders ``.<name>.tmp-<host>-<pid>-*`` next to
    ``target`` left by an xgen process of this host that is gone. Only
    folders holding nothing but xgen's own file names are removed; those of
    live processes, of other hosts, or holding anything else stay.

    Returns:
        the removed folders.
    """
    pattern = re.compile(re.escape(f".{target.name}.tmp-{_HOST}-") + r"(\d+)-[^/]+\Z")
    removed: list[Path] = []
    try:
        entries = list(target.parent.iterdir())
    except OSError:
        return ()
    for entry in entries:
        match = pattern.match(entry.name)
        if match is None or int(match.group(1)) == os.getpid() or _pid_alive(int(match.group(1))):
            continue
        try:
            if entry.is_symlink() or not entry.is_dir() or not all(_is_xgen_file(p.name) for p in entry.iterdir()):
                continue
            shutil.rmtree(entry)
        except OSError:
            continue
        removed.append(entry)
    return tuple(removed)
