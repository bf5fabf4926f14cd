"""Starting a campaign from the browser: ``xrun experiment-start`` on a folder
of run documents in a background process, through the same command (and so
the same backends, claiming, skipping and resume) as in a terminal.

The store URL goes to the child through ``$XRUN_STORE`` (not its command
line, where ``ps`` would show a password); its output goes to a log file
under ``<runs dir>/dashboard-logs/``.
"""

from __future__ import annotations

import datetime as _dt
import os
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

from xdoe.dashboard._settings import Settings, inside
from xdoe.errors import InputError

__all__ = ["Launch", "Launcher", "run_files", "candidate_folders"]


def run_files(folder: Path) -> list[Path]:
    """The run documents of a folder: ``run-*.yaml``, else every ``*.yaml``/``*.yml``."""
    return sorted(folder.glob("run-*.yaml")) or sorted([*folder.glob("*.yaml"), *folder.glob("*.yml")])


def candidate_folders(root: Path, workdir: Path, limit: int = 50) -> list[str]:
    """Folders under ``root`` (itself and two levels down) holding ``run-*.yaml``,
    relative to ``workdir``."""
    found: list[str] = []
    for pattern in ("run-*.yaml", "*/run-*.yaml", "*/*/run-*.yaml"):
        for path in sorted(root.glob(pattern)):
            rel = os.path.relpath(path.parent, workdir)
            if rel not in found:
                found.append(rel)
            if len(found) >= limit:
                return found
    return found


@dataclass
class Launch:
    """One campaign started from the browser."""

    id: int
    folder: str
    files: int
    started: _dt.datetime
    log: str
    process: subprocess.Popen[bytes]

    @property
    def state(self) -> str:
        code = self.process.poll()
        if code is None:
            return "running"
        return "finished" if code == 0 else f"exited with code {code}"


class Launcher:
    """Starts and remembers background ``xrun experiment-start`` processes."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.launches: list[Launch] = []
        self._lock = threading.Lock()

    def start(self, folder: str) -> Launch:
        """Start ``xrun experiment-start`` on the run documents of ``folder``
        (relative to the working directory).

        Raises:
            InputError: the folder is outside the working directory, missing
                or holds no run document.
        """
        s = self.settings
        path = inside(s.workdir, folder.strip() or ".")
        if not path.is_dir():
            raise InputError(f"{folder}: not a folder")
        files = run_files(path)
        if not files:
            raise InputError(f"{folder}: holds no run document (run-*.yaml)")
        logs = (s.runs_dir or s.workdir / "_outputs") / "dashboard-logs"
        logs.mkdir(parents=True, exist_ok=True)
        now = _dt.datetime.now(_dt.timezone.utc)
        with self._lock:
            number = len(self.launches) + 1
            log = logs / f"launch-{now:%Y%m%d-%H%M%S}-{os.getpid()}-{number}.log"
            env = dict(os.environ)
            from xdoe.store._engine import ENV_VAR, resolve_url

            env[ENV_VAR] = resolve_url(s.store_url)
            cmd = [sys.executable, "-m", "xdoe.cli._xrun", "experiment-start", "--quiet",
                   "--results", str(s.results), *(os.path.relpath(f, s.workdir) for f in files)]
            with open(log, "xb") as out:
                process = subprocess.Popen(cmd, cwd=s.workdir, env=env, stdout=out,
                                           stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                           start_new_session=True)
            launch = Launch(number, os.path.relpath(path, s.workdir), len(files), now,
                            os.path.relpath(log, s.workdir), process)
            self.launches.append(launch)
        return launch

    def close(self) -> None:
        """Forget finished processes (running ones go on: they are the user's campaigns)."""
        for launch in self.launches:
            launch.process.poll()
