"""Recording one execution of a run: database rows and results files together."""

from __future__ import annotations

import os
import socket
import threading
import uuid
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Callable, Sequence

from sqlalchemy import Connection, select, update

from xdoe.errors import MAX_ERROR_CHARS, DocumentError, NonFiniteWarning, StoreError, cap_traceback, one_line
from xdoe.store._json import document_hash
from xdoe.store.recorder._recorder_resume import RecorderResume
from xdoe.store.recorder._recorder_rows import RowBuffer, _json_cell
from xdoe.store.recorder._recorder_state import RecorderObserver, _insert_id
from xdoe.store.recorder._recorder_start import RecorderStart
from xdoe.store.schema import _tables as t
from xdoe.store.schema._tables import utcnow
from xdoe.store.recorder._results import DEFAULT_RESULTS_ROOT, ResultsPaths, ResultsWriter, _Discarded
from xdoe.store._rules import FINAL_STATUSES, exit_status
from xdoe.store.recorder._steps import StepPolicy

if TYPE_CHECKING:
    from xdoe.store.schema._database import Database

__all__ = ["RunRecorder", "FINAL_STATUSES"]


class RunRecorder(RecorderStart, RecorderResume, RowBuffer):
    """Records one run instance: rows in the store and files in its results folder.

    Call :meth:`start`, then for each phase :meth:`phase_started`,
    :meth:`episode_finished` / :meth:`step` (or a :meth:`step_writer`'s
    function, taken once per worker and agent) as they happen and
    :meth:`phase_finished`, and finally :meth:`finish` (also after a failure:
    it flushes what is buffered first, so finished episodes are never lost).
    Used as a context manager it starts on entry and finishes on exit with
    ``finished``, ``failed`` (exception, with its traceback) or
    ``interrupted`` (``KeyboardInterrupt``).

    Episode and step rows are buffered and bulk-inserted, one transaction per
    ``flush_rows`` rows and at every phase end, so memory does not grow with
    the number of episodes (``peak_buffered`` never exceeds ``flush_rows``).
    The executor calls :meth:`flush` at every episode end, so an episode's
    rows (and its steps) are committed before the next one starts: a process
    that dies (a native crash, ``os._exit``, the OOM killer) loses at most
    the episode in progress.
    Calls are serialised by a lock, so worker threads may share a recorder.

    Made by ``store.recorder(...)`` (:meth:`xdoe.store.Store.recorder`), with
    the store (``store``: handed to the executor's checkpoints, rungs and stop
    requests) and its database (``db``: the recorder's own writes).

    Attributes:
        instance_id: database id of the run instance (after :meth:`start`).
        instance_uuid: globally unique id of the instance (in ``session_metadata.json``).
        results_dir: the instance's results folder (after :meth:`start`).
        paths: the :class:`ResultsPaths` of that folder (after :meth:`start`).
        content_hash: sha256 of the document's canonical JSON.
        file_sha256: sha256 of the bytes of the document's file, when the
            run is started from one (recorded with the run by :meth:`start`).
        policy: the parsed ``store_steps`` (:class:`StepPolicy`); callers may
            ask ``policy.wants(step, done)`` before building a step's payload.
        phase_id: database id of the open phase, ``None`` between phases.
        status: ``None`` before :meth:`finish`, then the final status.
    """

    #: ``(status, one-line error, traceback)`` for leaving a recording block
    #: with ``(exc_type, exc, tb)``: finished, interrupted (Ctrl-C) or failed.
    exit_status = staticmethod(exit_status)

    def __init__(
        self,
        store: Any,
        db: "Database",
        document: dict[str, Any],
        *,
        results_root: Path | str | None = None,
        store_steps: str = "none",
        flush_rows: int = 1000,
        file_sha256: str | None = None,
        content_hash: str | None = None,
        design: dict[str, Any] | None = None,
    ) -> None:
        self.policy = StepPolicy.parse(store_steps)
        #: the design of the run's experiment (xgen's manifest), recorded on the experiment
        self.design = design
        if int(flush_rows) < 1:
            raise ValueError(f"flush_rows must be at least 1, not {flush_rows}")
        uid = document.get("uid") if isinstance(document, dict) else None
        if not isinstance(uid, str) or not uid:
            raise DocumentError("a run document needs a non-empty string 'uid'", key_path=("uid",))
        try:
            self.content_hash = content_hash or document_hash(document)
        except (TypeError, ValueError) as exc:
            raise DocumentError(f"the run document cannot be stored as JSON: {exc}") from None
        self.store = store
        self._db = db
        self.document = document
        self.run_uid = uid
        self._warned_non_finite: set[str] = set()
        #: how the run warns and goes on, ``(key, message, category)``: a run executed by
        #: :func:`xdoe.execution.run` notes it in the run's report (``RunResult.warnings``, stored
        #: by :meth:`finish`); by default a Python warning ``run <uid>: <message>``
        self.on_warning: Callable[[str, str, type[Warning]], Any] = self._warn
        self.results_root = Path(results_root) if results_root is not None else DEFAULT_RESULTS_ROOT
        self.flush_rows = int(flush_rows)
        self.file_sha256 = file_sha256
        self.instance_id: int | None = None
        self.instance_uuid = str(uuid.uuid4())
        self.paths: ResultsPaths | None = None
        self.status: str | None = None
        self.total_episodes = 0
        self.total_steps = 0
        self.stored_steps = 0
        self.peak_buffered = 0
        self._episodes: list[tuple[Any, ...]] = []  # values in _EPISODE_COLUMNS order
        self._steps: list[tuple[Any, ...]] = []  # values in _STEP_COLUMNS order (done as 0/1)
        self._insert_sql: dict[str, str] = {}  # table -> positional INSERT ("" if none), once compiled
        self._phase_id: int | None = None
        self._phases: list[dict[str, Any]] = []
        self._files: ResultsWriter | None = None
        self._start: Any = None
        self._end: Any = None
        self._error: str | None = None
        self._lock = threading.RLock()
        self._raw: Any = None  # SQLite: a DBAPI connection kept for the per-episode commits (_commit_raw)
        self._writers: dict[tuple[Any, ...], Callable[..., None]] = {}  # step_writer's, by their arguments
        #: told of every phase, episode and the end as they are recorded (:class:`RecorderObserver`)
        self.observers: list[RecorderObserver] = []

    # -- properties -------------------------------------------------------
    @property
    def results_dir(self) -> Path | None:
        """The results folder of this instance (``None`` before :meth:`start`)."""
        return None if self.paths is None else self.paths.directory

    @property
    def phase_id(self) -> int | None:
        """Database id of the open phase (for rows other parts attach to it,
        e.g. checkpoints and brain sources), ``None`` between phases."""
        return self._phase_id

    @property
    def buffered(self) -> int:
        """Episode and step rows waiting to be written."""
        return len(self._episodes) + len(self._steps)

    # -- life cycle -------------------------------------------------------
    def phase_started(self, index: int, name: str, mode: str, config: dict[str, Any]) -> None:
        """Record the start of phase ``index`` (its ``name``, ``mode`` and
        resolved ``phase_config``; ``config["worker"]`` is the number of
        workers the average-reward file averages over, default 1).

        Raises:
            StoreError: not started, finished, or another phase is still open.
        """
        with self._lock:
            self._require_running()
            if self._phase_id is not None:
                raise StoreError(
                    f"run {self.run_uid}: phase {index} ({name}) started while phase "
                    f"{self._phases[-1]['index']} ({self._phases[-1]['name']}) is still open"
                )
            now = utcnow()

            # a store lost meanwhile is waited for (Store.wait)
            self._phase_id = self._db.write_again("record a phase in", lambda conn: _insert_id(conn, t.phase, {
                "instance_id": self.instance_id, "index": int(index), "name": str(name),
                "mode": str(mode), "config": config, "status": "running", "start": now}))
            workers = config.get("worker", 1) if isinstance(config, dict) else 1
            assert self._files is not None
            self._files.phase_started(int(index), str(name), str(mode), int(workers or 1))
            self._phases.append({"index": int(index), "name": str(name), "mode": str(mode),
                                 "status": "running", "start": now.isoformat(), "end": None,
                                 "episodes": 0})
            for observer in self.observers:
                observer.phase_started(int(index), str(name), str(mode), config)

    def episode_finished(
        self,
        worker: int,
        episode: int,
        agent: str,
        steps: int,
        reward: float,
        objective: float,
        wall_time: float,
        extras: dict[str, Any] | None = None,
        terminated: bool | None = None,
        truncated: bool | None = None,
        cut_by: str | None = None,
    ) -> None:
        """Record one finished episode of one worker for one agent.

        ``reward``: sum of the agent's rewards over the episode; ``objective``:
        sum of its objective values; ``wall_time`` in seconds; ``extras``: any
        JSON-able details (e.g. sampled environment parameters);
        ``terminated``/``truncated``/``cut_by``: how it ended
        (:data:`xdoe.store.schema._tables.END_COLUMNS`; ``None``: not known).

        Raises:
            StoreError: no phase is open, or a flush to the store failed.
        """
        with self._lock:
            phase_id = self._require_phase()
            worker, episode, agent, steps = int(worker), int(episode), str(agent), int(steps)
            reward = float(reward)
            objective = None if objective is None else float(objective)
            wall_time = None if wall_time is None else float(wall_time)
            if not (reward - reward == 0.0 and (objective is None or objective - objective == 0.0)
                    and (wall_time is None or wall_time - wall_time == 0.0)):  # NaN or infinite
                reward, objective, wall_time = (self._missing(name, value, agent, episode)
                                                for name, value in (("reward", reward), ("objective", objective),
                                                                    ("wall_time", wall_time)))
            # a tuple, not a dict: see _insert_rows
            self._episodes.append((phase_id, worker, episode, agent, steps, reward, objective,
                                   wall_time, _json_cell(extras), _flag(terminated), _flag(truncated),
                                   None if cut_by is None else str(cut_by)))
            assert self._files is not None
            self._files.episode(worker, episode, agent, steps, reward, objective, wall_time)
            self.total_episodes += 1
            self.total_steps += steps
            self._phases[-1]["episodes"] += 1
            self._buffered_row()
            for observer in self.observers:
                observer.episode_finished(worker, episode, agent, steps, reward, objective)

    def _missing(self, name: str, value: float | None, agent: str, episode: int) -> float | None:
        """The policy for a NaN or infinite episode value (``reward``,
        ``objective``, ``wall_time``): recorded as missing, ``NULL`` in the
        store and ``null`` in ``episodes.jsonl`` (NaN has no JSON form), left
        out of the average reward; warned once per run and value
        (:class:`NonFiniteWarning`). A finite value is returned as it is."""
        if value is None or value - value == 0.0:
            return value
        if name not in self._warned_non_finite:
            self._warned_non_finite.add(name)
            self.on_warning(f"non-finite {name}", f"agent {agent!r} episode {episode}: {name} is {value}; recorded "
                            f"as missing (NULL in the store, null in episodes.jsonl); further non-finite {name}s "
                            "of this run are recorded so without a warning", NonFiniteWarning)
        return None

    def _warn(self, key: str, message: str, category: type[Warning]) -> None:
        import warnings

        warnings.warn(f"run {self.run_uid}: {message}", category, stacklevel=4)

    def step(
        self,
        worker: int,
        episode: int,
        step: int,
        agent: str,
        sensors: dict[str, Any],
        actions: dict[str, Any],
        rewards: dict[str, Any],
        objective: float,
        done: bool,
        terminated: bool = False,
        truncated: bool = False,
        cut_by: str | None = None,
    ) -> None:
        """Record one step of one agent, if ``store_steps`` asks for it
        (see :class:`StepPolicy`); otherwise do nothing. ``sensors``,
        ``actions``, ``rewards``: dicts ``uid -> value``; ``terminated``,
        ``truncated``, ``cut_by``: how the episode ended, on its last step
        (``done``); ``False, False, None`` on the others. Written by the
        :meth:`step_writer` of ``(worker, agent)``.

        Raises:
            StoreError: no phase is open, or a flush to the store failed.
        """
        if self.policy.every:
            write = self._writers.get((worker, agent, None, None)) or self.step_writer(worker, agent)
            write(episode, step, sensors, actions, rewards, objective, done,  # type: ignore[misc]
                  terminated, truncated, cut_by)

    def phase_finished(self, status: str = "finished") -> None:
        """Write what is buffered and close the current phase with ``status``
        (one transaction); complete its average-reward file.

        Raises:
            StoreError: no phase is open, or the store cannot be written.
        """
        with self._lock:
            self._require_phase()
            self._db.again(lambda: self._close_phase(status))

    def finish(self, status: str, error: str | None = None, traceback: str | None = None,
               warnings: Sequence[str] = ()) -> None:
        """End the instance: write what is buffered, close an open phase with
        the same status, record ``status`` (``finished``, ``failed``,
        ``interrupted`` or ``pruned``), ``error`` (kept on one line), ``traceback``, the
        run's ``warnings`` (``RunResult.warnings``; a resumed instance keeps
        those of its earlier attempts) and the end time; close the results
        files and complete ``session_metadata.json``.

        A recorder never started is started first, so a run that failed
        early is recorded too. A second call does nothing.

        Raises:
            ValueError: unknown status.
            StoreError: the store cannot be written (the files are still
                closed and the metadata written).
        """
        if status not in FINAL_STATUSES:
            raise ValueError(f"status must be one of {', '.join(FINAL_STATUSES)}, not {status!r}")
        with self._lock:
            if self.status is not None:
                return
            if self.instance_id is None:
                self.start()
            self._end = utcnow()
            self._error = one_line(error, MAX_ERROR_CHARS)

            def record(conn: Connection) -> None:
                if self._phase_id is not None:
                    self._write_phase_end(conn, status)
                else:
                    self._write_buffers(conn)
                values = dict(status=status, end=self._end, error=self._error,
                              traceback=cap_traceback(traceback), heartbeat=self._end)
                if warnings:
                    values["warnings"] = self._warnings(conn, warnings)
                conn.execute(update(t.run_instance).where(t.run_instance.c.id == self.instance_id).values(**values))

            try:
                # a store lost meanwhile is waited for (Store.wait)
                self._db.write_again("record the end of a run in", record)
                self._clear_buffers()
            finally:
                self._release_raw()
                self.status = status
                if self._phase_id is not None:
                    self._phase_closed(status)
                assert self._files is not None
                self._files.close()
                self._files.write_metadata(self.metadata())
                for observer in self.observers:
                    observer.run_finished(status)

    def _warnings(self, conn: Any, warnings: Sequence[str]) -> list[str]:
        """The instance's warnings: those of its earlier attempts (resumed)
        and then ``warnings``' new ones, each kept on one line."""
        lines = [one_line(w, MAX_ERROR_CHARS) for w in warnings]
        if getattr(self, "resumed_at", None):
            before = conn.execute(select(t.run_instance.c.warnings)
                                  .where(t.run_instance.c.id == self.instance_id)).scalar() or []
            lines = [*before, *(w for w in lines if w not in before)]
        return lines

    def discard_files(self) -> None:
        """Stop writing results files: their disk is full. The files are
        closed (their last buffered lines are lost), and so are the buffered
        rows, so the store never keeps an episode the files lack; a resumed
        instance runs those episodes again. The store still records the end."""
        with self._lock:
            self._files = self._files.discard() if isinstance(self._files, ResultsWriter) else _Discarded()
            self._clear_buffers()

    def heartbeat(self) -> None:
        """Refresh the instance's heartbeat (others judge staleness by it).

        Raises:
            StoreError: not started, or the store cannot be written.
        """
        with self._lock:
            if self.instance_id is None:
                raise StoreError(f"run {self.run_uid}: heartbeat before start()")
            self._db.write_again("record a heartbeat in", lambda conn: conn.execute(
                update(t.run_instance).where(t.run_instance.c.id == self.instance_id).values(heartbeat=utcnow())))

    def flush(self) -> None:
        """Write the buffered episode and step rows now (one transaction).

        Called at every episode end: on SQLite, once the INSERT statements are
        compiled, the transaction goes straight to a driver connection this
        recorder keeps (``BEGIN IMMEDIATE``, ``executemany``, ``COMMIT``:
        ~30 µs of CPU instead of ~200 µs through SQLAlchemy's transaction).

        Raises:
            StoreError: the store cannot be written.
        """
        with self._lock:
            if self.buffered:
                self._db.again(self._write_buffered)  # kept buffered until written
                self._clear_buffers()

    def _write_buffered(self) -> None:
        if not self._commit_raw():
            with self._db.write("write episodes to") as conn:
                self._write_buffers(conn)

    def metadata(self) -> dict[str, Any]:
        """The content of ``session_metadata.json``."""
        return {
            "instance": self.instance_uuid,
            "instance_id": self.instance_id,
            "run": self.run_uid,
            "experiment": self.document.get("experiment_uid"),
            "content_hash": self.content_hash,
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "start": None if self._start is None else self._start.isoformat(),
            "end": None if self._end is None else self._end.isoformat(),
            "status": self.status or "running",
            "error": self._error,
            "store": self._db.url,
            "store_steps": str(self.policy),
            "total_episodes": self.total_episodes,
            "total_steps": self.total_steps,
            "stored_steps": self.stored_steps,
            "phases": self._phases,
            "resumed": list(getattr(self, "resumed_at", [])),
            "document": self.document,
        }

    # -- context manager --------------------------------------------------
    def __enter__(self) -> "RunRecorder":
        if self.instance_id is None:
            self.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self.status is not None:
            return
        self.finish(*exit_status(exc_type, exc, tb))


def _flag(value: bool | None) -> int | None:
    """A boolean cell as buffered (0/1, see ``RowBuffer._insert_rows``); ``None`` stays ``None``."""
    return None if value is None else (1 if value else 0)
