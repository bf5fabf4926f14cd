"""Checkpoints: saving brains during a run, keeping a few, finding them again.

A checkpoint is a file written by ``Brain.store(path)`` plus a ``checkpoint``
row in the store (run instance, phase, agent, step, episode, path, sha256,
metric, best flag). :class:`CheckpointManager` writes them for one run
instance; :func:`latest_checkpoint` and :func:`checkpoints_of` find them;
:func:`load_brain` loads one after checking its sha256.

Retention and "best" are per **(instance, phase, agent)**: a phase keeps its
newest ``keep`` checkpoints plus the one with the highest metric, so the
end-of-phase checkpoint of every phase survives later phases (``load:`` of a
phase of another run needs it), and a test phase's metric (no exploration) is
never compared with a train phase's. The metric is, unless the caller gives
one, the mean objective over the agent's last ``best_window`` episodes
(:meth:`CheckpointManager.observe_episode`); higher is better; ties keep the
older best.
"""

from __future__ import annotations

import os
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING, Any

from xdoe._files import file_sha256
from xdoe.errors import InputError, RunError
from xdoe.store import CheckpointInfo, safe_name

if TYPE_CHECKING:
    from xdoe.store import Store

__all__ = [
    "CheckpointInfo",
    "CheckpointManager",
    "latest_checkpoint",
    "checkpoints_of",
    "load_brain",
    "file_sha256",
    "CHECKPOINT_SUFFIX",
]

#: Suffix of checkpoint files (their format is the brain's own).
CHECKPOINT_SUFFIX = ".brain"


def checkpoints_of(store: "Store", instance_id: int, agent: str | None = None) -> list[CheckpointInfo]:
    """The checkpoints of a run instance (optionally of one agent), oldest first.

    Raises:
        StoreError: the store cannot be read.
    """
    return store.checkpoints.of_instance(instance_id, agent)


def latest_checkpoint(
    store: "Store",
    run_uid: str,
    agent: str,
    phase: str | int | None = None,
    *,
    finished_only: bool = True,
    instance_id: int | None = None,
    best: bool = False,
) -> CheckpointInfo | None:
    """The newest checkpoint of ``agent`` in run ``run_uid``.

    The instance is the most recent one (highest id) that has a matching
    checkpoint, among the run's ``finished`` instances when ``finished_only``
    (what ``load:`` wants), among all when not, or exactly ``instance_id``
    (what resuming an interrupted instance wants). Within it, the newest
    checkpoint, or with ``best=True`` the one flagged best (newest if none is).

    Args:
        phase: a phase name, a schedule index, or ``None`` for any phase.

    Returns:
        a :class:`CheckpointInfo`, or ``None`` when there is none.

    Raises:
        StoreError: the store cannot be read.
    """
    return store.checkpoints.latest_checkpoint(run_uid, agent, phase, finished_only=finished_only,
                                   instance_id=instance_id, best=best)


def load_brain(brain: Any, info: CheckpointInfo) -> None:
    """Load checkpoint ``info`` into ``brain`` (``brain.load(path)``) after
    checking that the file exists and has the recorded sha256.

    Raises:
        RunError: the file is missing, its sha256 differs from the stored one,
            or ``brain.load`` raised (the message names the file).
    """
    path = Path(info.path)
    where = f"checkpoint {info.id} of agent {info.agent!r} (run {info.run_uid})"
    if not path.is_file():
        raise RunError(f"{where}: file {path} is missing")
    if info.sha256 is not None:
        actual = file_sha256(path)
        if actual != info.sha256:
            raise RunError(f"{where}: file {path} has sha256 {actual}, the store recorded "
                           f"{info.sha256} (the file changed since it was saved)")
    try:
        brain.load(path)
    except Exception as exc:  # noqa: BLE001 - user code: report which file
        err = RunError(f"{where}: {type(brain).__name__}.load({path}) raised "
                       f"{type(exc).__name__}: {exc}")
        raise err from exc


class CheckpointManager:
    """Saves the brains of one run instance and keeps the newest few.

    >>> mgr = CheckpointManager(store, instance_id, results_dir / "checkpoints", keep=3)  # doctest: +SKIP
    >>> mgr.observe_episode("learner", -12.0)                                            # doctest: +SKIP
    >>> info = mgr.save(brain, agent="learner", phase_index=0, step=1200, episode=37)     # doctest: +SKIP

    Files are ``<directory>/<phase index>-<agent>-e<episode>-s<step>.brain``
    (``x`` for an unknown phase, episode or step), written atomically (a
    temporary file renamed into place). Saving the same (phase, agent,
    episode, step) twice replaces the file and updates its row.

    Args:
        store: the store holding the instance.
        instance_id: the run instance's id (``RunRecorder.instance_id``).
        directory: where checkpoint files go (created when needed).
        keep: newest checkpoints kept per (phase, agent), at least 1; the best
            one is kept in addition.
        best_window: episodes the rolling mean objective (the default metric)
            averages over, at least 1.

    Raises:
        InputError: ``keep`` or ``best_window`` is below 1.
    """

    def __init__(self, store: "Store", instance_id: int, directory: Path | str, *,
                 keep: int = 3, best_window: int = 10) -> None:
        if isinstance(keep, bool) or int(keep) < 1:
            raise InputError(f"keep_checkpoints must be an integer of at least 1, not {keep!r}")
        if isinstance(best_window, bool) or int(best_window) < 1:
            raise InputError(f"best_window must be an integer of at least 1, not {best_window!r}")
        self.store = store
        self.instance_id = int(instance_id)
        self.directory = Path(directory)
        self.keep = int(keep)
        self.best_window = int(best_window)
        self._windows: dict[str, deque[float]] = {}
        self._phase_ids: dict[int, int | None] = {}

    # -- the rolling metric --------------------------------------------------
    def observe_episode(self, agent: str, objective_sum: float) -> None:
        """Feed one finished episode's summed objective of ``agent`` into its
        rolling window of the last ``best_window`` episodes (all workers)."""
        window = self._windows.get(agent)
        if window is None:
            window = self._windows[agent] = deque(maxlen=self.best_window)
        window.append(float(objective_sum))

    def metric(self, agent: str) -> float | None:
        """Mean objective of ``agent`` over its last ``best_window`` episodes,
        ``None`` before the first."""
        window = self._windows.get(agent)
        return None if not window else sum(window) / len(window)

    def reset_window(self, agent: str | None = None) -> None:
        """Forget the observed episodes (of one agent or all), e.g. at a phase
        start, so a phase's metric only covers its own episodes."""
        if agent is None:
            self._windows.clear()
        else:
            self._windows.pop(agent, None)

    # -- saving ------------------------------------------------------------------
    def path_for(self, agent: str, phase_index: int | None, step: int | None,
                 episode: int | None) -> Path:
        """The file a checkpoint with these coordinates is written to."""
        def part(value: int | None) -> str:
            return "x" if value is None else str(int(value))

        name = f"{part(phase_index)}-{safe_name(agent)}-e{part(episode)}-s{part(step)}{CHECKPOINT_SUFFIX}"
        return self.directory / name

    def phase_id_of(self, phase_index: int) -> int | None:
        """The row id of this instance's phase ``phase_index`` (``None`` when not recorded)."""
        return self._resolve_phase(None, phase_index)

    def _resolve_phase(self, phase_id: int | None, phase_index: int | None) -> int | None:
        if phase_id is not None or phase_index is None:
            return phase_id
        if phase_index not in self._phase_ids:
            found = self.store.runs.phase_id(self.instance_id, int(phase_index))
            if found is None:
                return None  # not recorded (yet): do not cache
            self._phase_ids[phase_index] = int(found)
        return self._phase_ids[phase_index]

    def save(
        self,
        brain: Any,
        *,
        agent: str,
        phase_id: int | None = None,
        phase_index: int | None = None,
        step: int | None = None,
        episode: int | None = None,
        metric: float | None = None,
    ) -> CheckpointInfo:
        """Store ``brain`` (``brain.store(path)``), record it, update the best
        flag and delete what retention drops.

        Args:
            brain: anything with ``store(path)`` (an :class:`xdoe.agent.Brain`).
            agent: the agent name.
            phase_id: the phase row id; when ``None`` it is looked up from
                ``phase_index`` in this instance.
            phase_index: the phase's schedule index (file name; lookup).
            step, episode: where in the phase the brain was saved.
            metric: higher is better; ``None`` uses :meth:`metric` of the agent
                (``None`` before any episode: never "best").

        Returns:
            the new checkpoint's :class:`CheckpointInfo` (``best`` as of now).

        Raises:
            RunError: ``brain.store`` raised or the file cannot be written.
            StoreError: the store cannot be written.
        """
        phase_id = self._resolve_phase(phase_id, phase_index)
        if metric is None:
            metric = self.metric(agent)
        path = self.path_for(agent, phase_index, step, episode)
        tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            brain.store(tmp)
            if not tmp.is_file():
                raise RunError(f"{type(brain).__name__}.store({tmp}) wrote no file")
            digest = file_sha256(tmp)
            os.replace(tmp, path)
        except RunError:
            tmp.unlink(missing_ok=True)
            raise
        except Exception as exc:  # noqa: BLE001 - user code or file system
            tmp.unlink(missing_ok=True)
            err = RunError(f"cannot save a checkpoint of agent {agent!r} to {path}: "
                           f"{type(exc).__name__}: {exc}")
            raise err from exc
        info, doomed = self.store.checkpoints.record_checkpoint(
            self.instance_id, agent=agent, phase_id=phase_id, step=step, episode=episode,
            path=path, sha256=digest, metric=metric, keep=self.keep)
        for old in doomed:
            try:
                Path(old).unlink(missing_ok=True)
            except OSError:  # pragma: no cover - a file we cannot delete stays
                pass
        return info
