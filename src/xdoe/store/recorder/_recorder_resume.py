"""Taking over an interrupted run instance (a mixin of
:class:`~xdoe.store.RunRecorder`): :meth:`RecorderResume.resume`,
:meth:`~RecorderResume.reopen` and :meth:`~RecorderResume.phase_resumed`."""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any, Callable

from sqlalchemy import Connection, delete, func, select, update

from xdoe.errors import StoreError
from xdoe.store.schema import _tables as t
from xdoe.store.schema._tables import utcnow
from xdoe.store.recorder._recorder_state import RecorderState
from xdoe.store.recorder._results import ResultsPaths, ResultsWriter, filter_results

__all__ = ["RecorderResume"]


class RecorderResume(RecorderState):
    """Resuming methods of :class:`~xdoe.store.RunRecorder` (which, with
    :class:`~xdoe.store.recorder._recorder_rows.RowBuffer`, provides ``metadata()`` and
    ``_require_running()``)."""

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
        with self._lock:
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
        with self._lock:
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
        with self._lock:
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
