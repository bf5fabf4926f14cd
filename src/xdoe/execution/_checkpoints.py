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

import hashlib
import os
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import delete, select, update

from xdoe.errors import InputError, RunError

if TYPE_CHECKING:
    import datetime as _dt

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
_CHUNK = 1 << 20


def file_sha256(path: Path | str) -> str:
    """sha256 (64 lowercase hex digits) of a file's bytes, read in 1 MiB chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


@dataclass(frozen=True)
class CheckpointInfo:
    """One checkpoint as stored.

    Attributes:
        id: row id in the store's ``checkpoint`` table.
        instance_id: the run instance that saved it; ``run_uid`` its run.
        phase_id, phase_index, phase: the phase row id, schedule index and name
            (``None`` when saved outside a recorded phase).
        agent: the agent name.
        step: environment updates of the agent in the phase so far (``None`` if unknown).
        episode: episodes finished in the phase so far (``None`` if unknown).
        path: the brain file; sha256: its hash.
        metric: what "best" compares (higher is better), ``None`` when unknown.
        best: the best checkpoint of its (instance, phase, agent).
        created: when it was saved (aware UTC).
    """

    id: int
    instance_id: int
    run_uid: str
    phase_id: int | None
    phase_index: int | None
    phase: str | None
    agent: str
    step: int | None
    episode: int | None
    path: Path
    sha256: str | None
    metric: float | None
    best: bool
    created: "_dt.datetime"


def _select_infos() -> Any:
    from xdoe.store import Checkpoint, Phase, Run, RunInstance

    return (
        select(Checkpoint, Run.uid, Phase.index, Phase.name)
        .join(RunInstance, Checkpoint.instance_id == RunInstance.id)
        .join(Run, RunInstance.run_id == Run.id)
        .outerjoin(Phase, Checkpoint.phase_id == Phase.id)
    )


def _info(row: Any) -> CheckpointInfo:
    ck, run_uid, phase_index, phase_name = row
    return CheckpointInfo(
        id=int(ck.id), instance_id=int(ck.instance_id), run_uid=run_uid,
        phase_id=ck.phase_id, phase_index=phase_index, phase=phase_name, agent=ck.agent,
        step=ck.step, episode=ck.episode, path=Path(ck.path), sha256=ck.sha256,
        metric=ck.metric, best=bool(ck.best), created=ck.created,
    )


def checkpoints_of(store: "Store", instance_id: int, agent: str | None = None) -> list[CheckpointInfo]:
    """The checkpoints of a run instance (optionally of one agent), oldest first.

    Raises:
        StoreError: the store cannot be read.
    """
    from xdoe.store import Checkpoint

    stmt = _select_infos().where(Checkpoint.instance_id == instance_id)
    if agent is not None:
        stmt = stmt.where(Checkpoint.agent == agent)
    with store._read("read checkpoints from") as session:
        return [_info(r) for r in session.execute(stmt.order_by(Checkpoint.id))]


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
    from xdoe.store import Checkpoint, Phase, Run, RunInstance

    stmt = _select_infos().where(Run.uid == run_uid, Checkpoint.agent == agent)
    if isinstance(phase, bool):
        raise TypeError("phase must be a name, an index or None")
    if isinstance(phase, int):
        stmt = stmt.where(Phase.index == phase)
    elif phase is not None:
        stmt = stmt.where(Phase.name == str(phase))
    if instance_id is not None:
        stmt = stmt.where(Checkpoint.instance_id == instance_id)
    if finished_only:
        stmt = stmt.where(RunInstance.status == "finished")
    order = [RunInstance.id.desc()]
    if best:
        order.append(Checkpoint.best.desc())
    stmt = stmt.order_by(*order, Checkpoint.id.desc()).limit(1)
    with store._read("read checkpoints from") as session:
        row = session.execute(stmt).first()
        return None if row is None else _info(row)


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


def _safe(name: str) -> str:
    from xdoe.store import safe_name

    return safe_name(name)


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

        name = f"{part(phase_index)}-{_safe(agent)}-e{part(episode)}-s{part(step)}{CHECKPOINT_SUFFIX}"
        return self.directory / name

    def phase_id_of(self, phase_index: int) -> int | None:
        """The row id of this instance's phase ``phase_index`` (``None`` when not recorded)."""
        return self._resolve_phase(None, phase_index)

    def _resolve_phase(self, phase_id: int | None, phase_index: int | None) -> int | None:
        if phase_id is not None or phase_index is None:
            return phase_id
        if phase_index not in self._phase_ids:
            from xdoe.store import Phase

            with self.store._read("read phases from") as session:
                found = session.execute(
                    select(Phase.id).where(Phase.instance_id == self.instance_id,
                                           Phase.index == int(phase_index))
                ).scalar_one_or_none()
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
        from xdoe.store import Checkpoint

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
        values = {"instance_id": self.instance_id, "phase_id": phase_id, "agent": str(agent),
                  "step": None if step is None else int(step),
                  "episode": None if episode is None else int(episode),
                  "path": str(path), "sha256": digest,
                  "metric": None if metric is None else float(metric), "best": False}
        doomed: list[str] = []
        with self.store._write("record a checkpoint in") as session:
            same = session.execute(
                select(Checkpoint.id).where(Checkpoint.instance_id == self.instance_id,
                                            Checkpoint.path == str(path))
            ).scalars().all()
            if same:
                session.execute(delete(Checkpoint).where(Checkpoint.id.in_(same)))
            row = Checkpoint(**values)
            session.add(row)
            session.flush()
            new_id = int(row.id)
            group = select(Checkpoint.id, Checkpoint.metric, Checkpoint.best, Checkpoint.path).where(
                Checkpoint.instance_id == self.instance_id, Checkpoint.agent == str(agent),
                Checkpoint.phase_id.is_(None) if phase_id is None else Checkpoint.phase_id == phase_id,
            ).order_by(Checkpoint.id.desc())
            rows = session.execute(group).all()
            best_id = _best(rows)
            session.execute(update(Checkpoint).where(Checkpoint.id.in_([r.id for r in rows]))
                            .values(best=False))
            if best_id is not None:
                session.execute(update(Checkpoint).where(Checkpoint.id == best_id).values(best=True))
            keep_ids = {r.id for r in rows[: self.keep]} | ({best_id} if best_id is not None else set())
            drop = [r for r in rows if r.id not in keep_ids]
            if drop:
                session.execute(delete(Checkpoint).where(Checkpoint.id.in_([r.id for r in drop])))
                doomed = [r.path for r in drop if r.path != str(path)]
        for old in doomed:
            try:
                Path(old).unlink(missing_ok=True)
            except OSError:  # pragma: no cover - a file we cannot delete stays
                pass
        with self.store._read("read checkpoints from") as session:
            return _info(session.execute(_select_infos().where(Checkpoint.id == new_id)).one())


def _best(rows: list[Any]) -> int | None:
    """Id of the row with the highest metric; ties keep the older (rows are newest first)."""
    best_id, best_metric = None, None
    for r in reversed(rows):
        if r.metric is None or r.metric != r.metric:  # None or NaN
            continue
        if best_metric is None or r.metric > best_metric:
            best_id, best_metric = r.id, r.metric
    return best_id
