"""Starting a campaign or a branch from the browser: ``xrun experiment-start``
on a folder of run documents, or ``xrun branch`` (:func:`xdoe.tree.branch`)
on a session, in a background process, through the same command (and so
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
    """The run documents of a folder as ``xrun experiment-start FOLDER`` takes
    them (:func:`xdoe._files.folder_run_files`: a folder with an xgen
    manifest stands for the run files its manifests list, so files an
    interrupted extension added are never started), else every ``*.yaml``/``*.yml``."""
    from xdoe._files import folder_run_files

    taken, unlisted = folder_run_files(folder)
    if taken or unlisted:
        return taken
    return sorted([*folder.glob("*.yaml"), *folder.glob("*.yml")])


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
    """One campaign (or branch) started from the browser; ``folder`` says what."""

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
    """Starts and remembers background ``xrun experiment-start`` / ``xrun branch`` processes."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.launches: list[Launch] = []
        self._lock = threading.Lock()

    def start(self, folder: str) -> Launch:
        """Start ``xrun experiment-start`` on the run documents of ``folder``
        (relative to the working directory).

        Raises:
            InputError: the folder is outside the launch root
                (:attr:`Settings.launch_root`), missing, holds no run
                document, or a run file resolves (through links) outside
                the launch root.
        """
        s = self.settings
        path = inside(s.workdir, folder.strip() or ".")
        root = s.launch_root
        if path != root and root not in path.parents:
            raise InputError(f"{folder}: outside the folder of run documents {root}")
        try:
            if not path.is_dir():
                raise InputError(f"{folder[:200]}: not a folder")
            files = run_files(path)
        except OSError as exc:
            raise InputError(f"{folder[:200]}: {exc.strerror or exc}") from None
        if not files:
            raise InputError(f"{folder}: holds no run document (run-*.yaml)")
        for file in files:  # a run file may be a link: what it points to must lie inside too
            real = file.resolve()
            if root not in real.parents or not real.is_file():
                raise InputError(f"{os.path.relpath(file, s.workdir)}: a link to a file outside "
                                 f"{root}; nothing started")
        args = ["experiment-start", "--quiet", "--results", str(s.results),
                *(os.path.relpath(f, s.workdir) for f in files)]
        return self._spawn(args, os.path.relpath(path, s.workdir), len(files))

    def branch(self, node: str, overrides: list[str], *, episodes: int | None = None,
               steps: int | None = None, phase: str | None = None) -> Launch:
        """Start ``xrun branch NODE --set KEY=VALUE ...`` (:func:`xdoe.tree.branch`):
        the child's document goes next to its parent's, as in a terminal."""
        args = ["branch", node, *(a for o in overrides for a in ("--set", o)),
                "--results", str(self.settings.results)]
        for flag, value in (("--episodes", episodes), ("--steps", steps), ("--phase", phase)):
            if value is not None:
                args += [flag, str(value)]
        return self._spawn(args, f"branch of {node}", 1)

    def _spawn(self, args: list[str], what: str, files: int) -> Launch:
        """``xrun ARGS`` in the working directory, its output in a log file."""
        s = self.settings
        logs = (s.runs_dir or s.workdir / "_outputs") / "dashboard-logs"
        logs.mkdir(parents=True, exist_ok=True)
        now = _dt.datetime.now(_dt.timezone.utc)
        with self._lock:
            number = len(self.launches) + 1
            log = logs / f"launch-{now:%Y%m%d-%H%M%S}-{os.getpid()}-{number}.log"
            env = dict(os.environ)
            from xdoe.store import ENV_VAR, resolve_url

            env[ENV_VAR] = resolve_url(s.store_url)
            cmd = [sys.executable, "-m", "xdoe.cli._xrun", *args]
            with open(log, "xb") as out:
                process = subprocess.Popen(cmd, cwd=s.workdir, env=env, stdout=out,
                                           stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                           start_new_session=True)
            launch = Launch(number, what, files, now, os.path.relpath(log, s.workdir), process)
            self.launches.append(launch)
        return launch

    @property
    def running(self) -> bool:
        """Whether a process started here still runs (the page then polls faster)."""
        return any(launch.state == "running" for launch in self.launches)

    def close(self) -> None:
        """Forget finished processes (running ones go on: they are the user's campaigns)."""
        for launch in self.launches:
            launch.process.poll()
