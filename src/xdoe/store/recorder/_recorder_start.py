"""Starting a run instance (a mixin of :class:`~xdoe.store.RunRecorder`):
the experiment and run rows (when new), the ``running`` instance row, and
the results folder with its files."""

from __future__ import annotations

import os
import socket

from sqlalchemy import Connection, or_, update

from xdoe.errors import DiskFullError, StoreError, no_space_cause
from xdoe.store.schema import _tables as t
from xdoe.store._json import compact_json
from xdoe.store.recorder._recorder_state import RecorderState, _get_or_create, _insert_id, _int_or_none
from xdoe.store.recorder._results import ResultsPaths, ResultsWriter
from xdoe.store.schema._tables import utcnow

__all__ = ["RecorderStart"]


class RecorderStart(RecorderState):
    """:meth:`start` of :class:`~xdoe.store.RunRecorder` (which provides
    ``document``, ``content_hash``, ``file_sha256`` and ``metadata()``)."""

    def start(self) -> int:
        """Record the experiment and run (if new) and a new ``running`` run
        instance (host, pid, start); create the results folder and its files.

        Returns:
            the instance id.

        Raises:
            StoreError: already started, the store cannot be written or the
                results folder cannot be created.
        """
        with self._lock:
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
                experiment_id = _get_or_create(conn, t.experiment, {"uid": experiment_uid}, {})
                if self.design is not None:  # the latest manifest's design (an augmentation adds blocks)
                    conn.execute(update(t.experiment).where(t.experiment.c.id == experiment_id,
                                                            or_(t.experiment.c.design.is_(None),
                                                                t.experiment.c.design != self.design))
                                 .values(design=self.design))
            run_id = _get_or_create(
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
            if self.file_sha256 is not None:  # a run recorded before without its file's hash
                conn.execute(update(t.run).where(t.run.c.id == run_id, t.run.c.file_sha256.is_(None))
                             .values(file_sha256=self.file_sha256))
            return _insert_id(conn, t.run_instance, {
                "uuid": self.instance_uuid, "run_id": run_id, "host": socket.gethostname(),
                "pid": os.getpid(), "start": self._start, "status": "running", "heartbeat": self._start,
                "results_dir": str(self.paths.directory) if self.paths else None,
            })

        return self._db.write_again("record a run in", insert)  # a lost store is waited for
