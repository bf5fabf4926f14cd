"""Recording one execution of a run: database rows and results files
together, by one class, :class:`RunRecorder`, which holds its row buffer
(the JSON cells it writes: :mod:`xdoe.store.recorder._cells`)."""

from __future__ import annotations

import os
import socket
import uuid
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Callable, Sequence

from sqlalchemy import Connection, delete, func, or_, select, update

from xdoe.errors import (MAX_ERROR_CHARS, DiskFullError, DocumentError, NonFiniteWarning, StoreError, cap_traceback,
                         no_space_cause, one_line)
from xdoe.store._json import document_hash
from xdoe.store._json import compact_json
from xdoe.store.recorder._cells import (_EPISODE_COLUMNS, _STEP_COLUMNS, _dict_cells, _get_or_create, _insert_id,
                                        _int_or_none, _flag, _json_cell, _key_cells, insert_rows,
                                        insert_sql_cache, update_row)
from xdoe.store.recorder._driver import DriverRows
from xdoe.store.schema import _tables as t
from xdoe.store.schema._tables import utcnow
from xdoe.store.recorder._results import DEFAULT_RESULTS_ROOT, ResultsPaths, ResultsWriter, _Discarded, filter_results
from xdoe.store._rules import FINAL_STATUSES, exit_status
from xdoe.store.recorder._observer import RecorderObserver
from xdoe.store.recorder._steps import StepPolicy

if TYPE_CHECKING:
    from xdoe.store.schema._database import Database

__all__ = ["FINAL_STATUSES", "RunRecorder"]


class RunRecorder:
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
    One thread records a run (the executor's; its worker processes send
    their rows there): a recorder takes no lock.

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

    def __init__(self, store: Any, db: "Database", document: dict[str, Any], *,
                 results_root: Path | str | None = None, store_steps: str = "none", flush_rows: int = 1000,
                 file_sha256: str | None = None, content_hash: str | None = None,
                 design: dict[str, Any] | None = None) -> None:
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
        self._stored = 0  # step rows buffered before the buffer's last clearing (stored_steps)
        self._peak = 0  # rows buffered at the buffer's last clearing, at most (peak_buffered)
        self._episodes: list[tuple[Any, ...]] = []  # values in _EPISODE_COLUMNS order
        self._steps: list[tuple[Any, ...]] = []  # values in _STEP_COLUMNS order (done as 0/1)
        self._insert_sql = insert_sql_cache(db.engine.dialect)  # table -> positional INSERT ("" if none)
        self._phase_id: int | None = None
        self._ended: tuple[int, dict[str, Any]] | None = None  # a deferred phase end: (phase id, values)
        self._phases: list[dict[str, Any]] = []
        self._files: ResultsWriter | None = None
        self._start: Any = None
        self._end: Any = None
        self._error: str | None = None
        self._driver = DriverRows(db)  # SQLite: the per-episode commits (_commit_raw)
        #: the store is SQLite: :meth:`flush` commits through the driver (_commit_raw)
        self._sqlite = db.engine.dialect.name == "sqlite"
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
    def stored_steps(self) -> int:
        """Step rows recorded (buffered or written) by this recorder."""
        return self._stored + len(self._steps)

    @property
    def peak_buffered(self) -> int:
        """The most rows the buffer held at once (never more than ``flush_rows``)."""
        return max(self._peak, len(self._episodes) + len(self._steps))

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
        self._require_running()
        if self._phase_id is not None:
            raise StoreError(
                f"run {self.run_uid}: phase {index} ({name}) started while phase "
                f"{self._phases[-1]['index']} ({self._phases[-1]['name']}) is still open"
            )
        now = utcnow()

        def insert(conn: Connection) -> int:
            self._write_ended(conn)  # the end of the phase before, when deferred: one transaction
            return _insert_id(conn, t.phase, {"instance_id": self.instance_id, "index": int(index), "name": str(name),
                                              "mode": str(mode), "config": config, "status": "running", "start": now})

        self._phase_id = self._db.write_again("record a phase in", insert)  # a lost store is waited for
        self._ended = None
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
        # a tuple, not a dict: see insert_rows
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

    def phase_finished(self, status: str = "finished", *, deferred: bool = False) -> None:
        """Write what is buffered and close the current phase with ``status``
        (one transaction); complete its average-reward file.

        ``deferred``: its status and end go into the next write (:meth:`phase_started`,
        :meth:`finish`), one transaction fewer; buffered rows are written now. A process
        killed in between (the executor runs nothing there) leaves the phase ``running``
        with its episodes and final checkpoint, resumed with no episode left to run.

        Raises:
            StoreError: no phase is open, or the store cannot be written.
        """
        self._require_phase()
        if not deferred:
            return self._db.again(lambda: self._close_phase(status))
        self.flush()  # the phase's rows now: a phase's episodes are in the store when it ends
        self._ended = (self._require_phase(), {"status": status, "end": utcnow()})
        self._phase_closed(status, self._ended[1]["end"])

    def _write_ended(self, conn: Connection) -> None:
        """The deferred end of the phase before (:meth:`phase_finished`), in ``conn``'s transaction."""
        if self._ended is not None:
            update_row(conn, t.phase, self._ended[0], self._ended[1])

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
        if self.status is not None:
            return
        if self.instance_id is None:
            self.start()
        self._end = utcnow()
        self._error = one_line(error, MAX_ERROR_CHARS)

        def record(conn: Connection) -> None:
            self._write_ended(conn)  # a phase ended just before (deferred): recorded with the run's end
            if self._phase_id is not None:
                self._write_phase_end(conn, status)
            else:
                self._write_buffers(conn)
            values = dict(status=status, end=self._end, error=self._error,
                          traceback=cap_traceback(traceback), heartbeat=self._end)
            if warnings:
                values["warnings"] = self._warnings(conn, warnings)
            update_row(conn, t.run_instance, self.instance_id, values)

        try:
            # a store lost meanwhile is waited for (Store.wait)
            self._db.write_again("record the end of a run in", record)
            self._ended = None
            self._clear_buffers()
        finally:
            self._driver.release()
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
        self._files = self._files.discard() if isinstance(self._files, ResultsWriter) else _Discarded()
        self._clear_buffers()

    def heartbeat(self) -> None:
        """Refresh the instance's heartbeat (others judge staleness by it).

        Raises:
            StoreError: not started, or the store cannot be written.
        """
        if self.instance_id is None:
            raise StoreError(f"run {self.run_uid}: heartbeat before start()")
        self._db.write_again("record a heartbeat in", lambda conn: update_row(
            conn, t.run_instance, self.instance_id, {"heartbeat": utcnow()}))

    def flush(self) -> None:
        """Write the buffered episode and step rows now (one transaction).

        Called at every episode end: on SQLite, once the INSERT statements are
        compiled, the transaction goes straight to a driver connection this
        recorder keeps (``BEGIN IMMEDIATE``, the multi-row INSERTs, ``COMMIT``:
        ~30 µs of CPU instead of ~200 µs through SQLAlchemy's transaction);
        rows that make one INSERT (an episode's rows, its steps not stored)
        are that one statement, its own transaction (the connection
        autocommits: SQLite writes it atomically and durably, as it would
        the three statements).

        Raises:
            StoreError: the store cannot be written.
        """
        if self._episodes or self._steps:
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

    # -- starting and resuming an instance ------------------------------------

    def start(self) -> int:
        """Record the experiment and run (if new) and a new ``running`` run
        instance (host, pid, start); create the results folder and its files.

        Returns:
            the instance id.

        Raises:
            StoreError: already started, the store cannot be written or the
                results folder cannot be created.
        """
        if self.instance_id is not None:
            raise StoreError(f"run {self.run_uid}: recorder already started")
        self._start = utcnow()
        try:
            self.paths = ResultsPaths.create(self.results_root, self.run_uid, self._start)
        except OSError as exc:
            if no_space_cause(exc) is not None:
                raise DiskFullError(str(self.results_root), exc.strerror or str(exc)) from None
            raise StoreError(f"cannot create the results folder under {self.results_root}: {exc}") from None
        try:
            self.instance_id = self._insert_instance()
        except BaseException:
            self.paths.directory.rmdir()  # still empty: leave no trace of a run never recorded
            self.paths = None
            raise
        self._files = ResultsWriter(self.paths, self.run_uid, self.policy.enabled)
        self._files.write_metadata(self.metadata())
        return self.instance_id

    def _insert_instance(self) -> int:
        doc = self.document
        point = doc.get("design_point") if isinstance(doc.get("design_point"), dict) else {}
        experiment_uid = doc.get("experiment_uid")

        def insert(conn: Connection) -> int:
            experiment_id = None
            if isinstance(experiment_uid, str) and experiment_uid:
                experiment_id, _ = _get_or_create(conn, t.experiment, {"uid": experiment_uid}, {})
                if self.design is not None:  # the latest manifest's design (an augmentation adds blocks)
                    conn.execute(update(t.experiment).where(t.experiment.c.id == experiment_id,
                                                            or_(t.experiment.c.design.is_(None),
                                                                t.experiment.c.design != self.design))
                                 .values(design=self.design))
            run_id, inserted = _get_or_create(
                conn, t.run, {"uid": self.run_uid, "content_hash": self.content_hash},
                {
                    "experiment_id": experiment_id,
                    "document": compact_json(doc),
                    "design_point": _int_or_none(point.get("index")),
                    "repetition": _int_or_none(point.get("repetition")),
                    "seed": _int_or_none(doc.get("seed")),
                    "levels": point.get("levels"),
                    "file_sha256": self.file_sha256,
                },
            )
            if self.file_sha256 is not None and not inserted:  # a run recorded before without its file's hash
                conn.execute(update(t.run).where(t.run.c.id == run_id, t.run.c.file_sha256.is_(None))
                             .values(file_sha256=self.file_sha256))
            return _insert_id(conn, t.run_instance, {
                "uuid": self.instance_uuid, "run_id": run_id, "host": socket.gethostname(),
                "pid": os.getpid(), "start": self._start, "status": "running", "heartbeat": self._start,
                "results_dir": str(self.paths.directory) if self.paths else None,
            })

        return self._db.write_again("record a run in", insert)  # a lost store is waited for

    def resume(self, instance: Any) -> bool:
        """Take over the interrupted (or dead ``running``) run instance
        ``instance`` (an :class:`xdoe.store.InstanceInfo` of this run) instead
        of starting a new one: its row goes back to ``running`` with this
        host, pid and a fresh heartbeat (end and error cleared), atomically, so
        of two processes resuming the same instance one wins; a stop request
        left from before (:meth:`store.runs.request_stop <xdoe.store.runs._runs.Runs.request_stop>`) is removed in the
        same transaction, so a stop asked for once it runs again is never lost.
        Then call
        :meth:`reopen` (after the executor dropped what it redoes).

        Returns:
            ``False`` when another process took the instance over first.

        Raises:
            StoreError: already started, or the store cannot be written.
        """
        if self.instance_id is not None:
            raise StoreError(f"run {self.run_uid}: recorder already started")
        now = utcnow()
        i = t.run_instance.c

        def take(conn: Connection) -> int:
            taken = conn.execute(
                update(t.run_instance)
                .where(i.id == instance.id, i.status == instance.status, i.pid == instance.pid,
                       i.host == instance.host)
                .values(status="running", host=socket.gethostname(), pid=os.getpid(),
                        heartbeat=now, end=None, error=None, traceback=None)
            ).rowcount
            if taken == 1:
                conn.execute(delete(t.stop_request).where(t.stop_request.c.instance_id == instance.id))
            return int(taken)

        changed = self._db.write_again("resume a run in", take)  # a lost store is waited for
        if changed != 1:
            return False
        self.instance_id = int(instance.id)
        self.instance_uuid = instance.uuid
        self._start = instance.start
        self.resumed_at = [*getattr(self, "resumed_at", []), now.isoformat()]
        if instance.results_dir:
            self.paths = ResultsPaths(Path(instance.results_dir))
            self.paths.directory.mkdir(parents=True, exist_ok=True)
        else:
            self.paths = ResultsPaths.create(self.results_root, self.run_uid, self._start)
        return True

    def reopen(self) -> None:
        """Open the results files of a resumed instance for appending, with the
        phases and totals the store holds now, and rewrite ``session_metadata.json``."""
        self._require_running()
        assert self.paths is not None
        e, p = t.episode.c, t.phase.c
        with self._db.read("read phases from") as conn:
            counts = dict(conn.execute(
                select(e.phase_id, func.count()).join(t.phase, e.phase_id == p.id)
                .where(p.instance_id == self.instance_id).group_by(e.phase_id)).all())
            steps = conn.execute(
                select(func.coalesce(func.sum(e.steps), 0)).join(t.phase, e.phase_id == p.id)
                .where(p.instance_id == self.instance_id)).scalar_one()
            phases = conn.execute(select(p.id, p.index, p.name, p.mode, p.status, p.start, p.end)
                                  .where(p.instance_id == self.instance_id).order_by(p.index)).all()
            self._phases = [
                {"index": index, "name": name, "mode": mode, "status": status,
                 "start": start.isoformat(), "end": None if end is None else end.isoformat(),
                 "episodes": int(counts.get(id_, 0))}
                for id_, index, name, mode, status, start, end in phases
            ]
        self.total_episodes = sum(p["episodes"] for p in self._phases)
        self.total_steps = int(steps or 0)
        self._files = ResultsWriter(self.paths, self.run_uid, self.policy.enabled, resume=True)
        self._files.write_metadata(self.metadata())

    def phase_resumed(self, phase_id: int, index: int, name: str, mode: str,
                      config: dict[str, Any]) -> None:
        """Continue the recorded phase ``phase_id`` of a resumed instance (its
        row goes back to ``running``), instead of :meth:`phase_started`.

        Raises:
            StoreError: not started, finished, or another phase is still open.
        """
        self._require_running()
        if self._phase_id is not None:
            raise StoreError(f"run {self.run_uid}: phase {index} ({name}) resumed while a phase is open")
        self._db.write_again("record a phase in", lambda conn: conn.execute(
            update(t.phase).where(t.phase.c.id == phase_id).values(status="running", end=None)))
        self._phase_id = int(phase_id)
        workers = config.get("worker", 1) if isinstance(config, dict) else 1
        assert self._files is not None
        self._files.phase_resumed(int(index), str(name), str(mode), int(workers or 1))
        entry = next((p for p in self._phases if p["index"] == int(index)), None)
        if entry is None:
            entry = {"index": int(index), "name": str(name), "mode": str(mode), "episodes": 0,
                     "start": utcnow().isoformat()}
        else:
            self._phases.remove(entry)
        entry.update(status="running", end=None)
        self._phases.append(entry)
        for observer in self.observers:
            observer.phase_started(int(index), str(name), str(mode), config)

    def keep_results(self, keep: Callable[[str, int, int], bool]) -> None:
        """Drop from the instance's ``episodes.jsonl`` and
        ``all_transactions.csv`` every row whose ``keep(phase name, worker,
        episode)`` is false (what a resumed instance runs again; unparsable
        lines, a killed process's half-written last line, go too)."""
        assert self.paths is not None
        filter_results(self.paths, keep)

    # -- the row buffer ---------------------------------------------------------

    def step_writer(self, worker: int, agent: str, sensor_id: str | None = None,
                    actuator_id: str | None = None) -> Callable[..., None] | None:
        """The writer of the step rows of ``agent`` in worker ``worker``:
        ``write(episode, step, sensors, actions, rewards, objective, done,
        terminated=False, truncated=False, cut_by=None)`` stores the step when
        ``store_steps`` asks for it (:class:`StepPolicy`) and does nothing
        otherwise; ``None`` with ``store_steps="none"``.

        ``sensors`` is the value of sensor ``sensor_id`` (its cell
        ``{sensor_id: value}``) or, without ``sensor_id``, the dict ``uid ->
        value`` (its cell is the dict); ``actions`` the same with
        ``actuator_id``; ``rewards`` the dict ``uid -> value``. What is the
        same for every row is worked out once: the worker and agent cells,
        the cells' ``{"<id>":`` starts, the policy. One writer is made per
        ``(worker, agent, sensor_id, actuator_id)`` and kept: the executor
        takes its agents' writers at the phase start, :meth:`step` writes
        through the dict-form writer of ``(worker, agent)``, so every stored
        step is one function's row.

        ``write`` raises :class:`StoreError` when no phase is open, or a
        flush to the store failed; ``TypeError``/``ValueError`` for a
        ``worker``, ``episode``, ``step`` or ``objective`` that is no number
        (``worker`` here, at once).
        """
        key = (worker, agent, sensor_id, actuator_id)
        made = self._writers.get(key)
        if made is not None or self.policy.every == 0:
            return made
        every, wants = self.policy.every, self.policy.wants
        worker_cell, agent_cell = int(worker), str(agent)
        sensor_cell = _dict_cells() if sensor_id is None else _key_cells(sensor_id)
        action_cell = _dict_cells() if actuator_id is None else _key_cells(actuator_id)
        reward_cell = _dict_cells()
        append = self._steps.append  # the buffer is cleared in place (_clear_buffers), never replaced

        def write(episode: int, step: int, sensors: Any, actions: Any, rewards: Any, objective: float | None,
                  done: bool, terminated: bool = False, truncated: bool = False, cut_by: str | None = None) -> None:
            if type(step) is not int:
                step = int(step)
            if every != 1 and not wants(step, done):  # "all" (every 1) wants every step
                return
            phase_id = self._phase_id  # None between phases and after finish()
            if phase_id is None:
                phase_id = self._require_phase()
            if type(episode) is not int:
                episode = int(episode)
            if objective is not None and type(objective) is not float:
                objective = float(objective)
            # a tuple, not a dict: see insert_rows
            append((phase_id, worker_cell, episode, step, agent_cell, sensor_cell(sensors), action_cell(actions),
                    reward_cell(rewards), objective, 1 if done else 0, 1 if terminated else 0,
                    1 if truncated else 0, None if cut_by is None else str(cut_by)))
            if len(self._steps) + len(self._episodes) >= self.flush_rows:
                self.flush()

        self._writers[key] = write
        return write

    def _require_running(self) -> None:
        if self.instance_id is None:
            raise StoreError(f"run {self.run_uid}: recorder used before start()")
        if self.status is not None:
            raise StoreError(f"run {self.run_uid}: recorder used after finish()")

    def _require_phase(self) -> int:
        if self._phase_id is not None and self.status is None:  # the usual case, checked cheaply
            return self._phase_id
        self._require_running()
        if self._phase_id is None:
            raise StoreError(f"run {self.run_uid}: no phase is open (call phase_started first)")
        return self._phase_id

    def _buffered_row(self) -> None:
        if len(self._episodes) + len(self._steps) >= self.flush_rows:
            self.flush()

    def _write_buffers(self, connection: Connection) -> None:
        # the results files first: they then hold at least the rows the store
        # keeps (a resumed instance filters them down to those, see filter_results)
        assert self._files is not None
        if self._steps:
            self._files.steps(self._steps)  # written through (episodes.jsonl's lines were, as recorded)
        if self._episodes:
            insert_rows(connection, t.episode, _EPISODE_COLUMNS, self._episodes, self._insert_sql)
        if self._steps:
            insert_rows(connection, t.step, _STEP_COLUMNS, self._steps, self._insert_sql)

    def _commit_raw(self) -> bool:
        """:meth:`flush`'s SQLite path (:class:`DriverRows`); ``False`` where
        it does not apply (another backend, a statement not compiled yet: the
        Core path then)."""
        if not self._sqlite:
            return False
        episodes, steps = self._episodes, self._steps
        episode_sql, step_sql = self._insert_sql.get("episode"), self._insert_sql.get("step")
        if (episodes and not episode_sql) or (steps and not step_sql):
            return False
        if steps:  # the results files first, as _write_buffers
            assert self._files is not None
            self._files.steps(steps)
        self._driver.write(episode_sql, episodes, step_sql, steps)
        return True

    def _clear_buffers(self) -> None:
        """Empty the row buffers, in place (the step writers hold the step
        buffer's ``append``), counting what they held."""
        self._stored += len(self._steps)
        self._peak = max(self._peak, len(self._episodes) + len(self._steps))
        self._episodes.clear()
        self._steps.clear()

    def _write_phase_end(self, connection: Connection, status: str) -> None:
        self._write_buffers(connection)
        update_row(connection, t.phase, self._phase_id, {"status": status, "end": utcnow()})

    def _close_phase(self, status: str) -> None:
        with self._db.write("record the end of a phase in") as connection:
            self._write_phase_end(connection, status)
        self._clear_buffers()
        self._phase_closed(status)

    def _phase_closed(self, status: str, end: Any = None) -> None:
        self._phase_id = None
        self._phases[-1].update(status=status, end=(end or utcnow()).isoformat())
        assert self._files is not None
        self._files.phase_finished()
