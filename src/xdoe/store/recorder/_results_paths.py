"""The paths of a run instance's results folder (see :mod:`xdoe.store.recorder._results`
for what each file holds)."""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ResultsPaths", "safe_name"]

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def safe_name(name: str) -> str:
    """``name`` made safe as one path component: runs of characters outside
    ``[A-Za-z0-9_.-]`` become ``_``; empty, ``.`` and ``..`` become ``_``."""
    out = _UNSAFE.sub("_", str(name))
    return "_" if out in ("", ".", "..") else out


@dataclass(frozen=True)
class ResultsPaths:
    """Every path of one run instance's results folder (nothing is created here)."""

    directory: Path

    @classmethod
    def create(cls, root: Path | str, run_uid: str, started: _dt.datetime) -> "ResultsPaths":
        """Create ``<root>/<run uid>/<YYYY-MM-DD_HH-MM-SS>`` (UTC of ``started``;
        the run uid's file name, :func:`~xdoe.documents.uid_file_name`),
        with a suffix ``-1``, ``-2``... when that folder exists already.

        Creation is atomic (``mkdir`` without ``exist_ok``), so concurrent
        processes never share a folder.

        Raises:
            OSError: the folder cannot be created.
        """
        from xdoe.documents import uid_file_name

        parent = Path(root) / uid_file_name(run_uid)
        parent.mkdir(parents=True, exist_ok=True)
        stamp = started.astimezone(_dt.timezone.utc).strftime("%Y-%m-%d_%H-%M-%S")
        suffix = 0
        while True:
            candidate = parent / (stamp if suffix == 0 else f"{stamp}-{suffix}")
            try:
                candidate.mkdir()
            except FileExistsError:
                suffix += 1
                continue
            return cls(candidate.resolve())

    @property
    def session_metadata(self) -> Path:
        return self.directory / "session_metadata.json"

    @property
    def episodes(self) -> Path:
        return self.directory / "episodes.jsonl"

    @property
    def all_transactions(self) -> Path:
        return self.directory / "all_transactions.csv"

    def average_reward(self, phase_index: int, phase_name: str) -> Path:
        """``<index>-<phase name>-average_reward_per_episode.csv``."""
        return self.directory / f"{phase_index}-{safe_name(phase_name)}-average_reward_per_episode.csv"

    def agent_dir(self, phase_index: int, phase_name: str, agent: str) -> Path:
        """Folder for the saved brain and checkpoints of ``agent`` in a phase (not created)."""
        return self.directory / "agents" / f"{phase_index}-{safe_name(phase_name)}" / safe_name(agent)

    @property
    def checkpoints(self) -> Path:
        """Folder of the executor's checkpoints and resume states (not created)."""
        return self.directory / "checkpoints"

    def resume_state(self, phase_index: int, step: int) -> Path:
        """Resume state of phase ``phase_index`` saved after ``step`` phase steps."""
        return self.checkpoints / f"state-{int(phase_index)}-s{int(step):012d}.pkl"

    def resume_states(self, phase_index: int) -> list[Path]:
        """The resume states of a phase, newest (most steps) first."""
        if not self.checkpoints.is_dir():
            return []
        return sorted(self.checkpoints.glob(f"state-{int(phase_index)}-s*.pkl"), reverse=True)
