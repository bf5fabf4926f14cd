"""The state a :class:`~xdoe.store.RunRecorder` keeps, shared by the modules
of its responsibilities (:mod:`~xdoe.store.recorder._recorder_start` starts an
instance, :mod:`~xdoe.store.recorder._recorder_rows` buffers rows,
:mod:`~xdoe.store.recorder._recorder_resume` resumes one, :mod:`~xdoe.store.recorder._recorder`
records phases and the end), and the row helpers of their writes."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Protocol

from sqlalchemy import Connection, Table, insert, select
from sqlalchemy.exc import IntegrityError

from xdoe.store.recorder._results import ResultsPaths, ResultsWriter
from xdoe.store.recorder._steps import StepPolicy

if TYPE_CHECKING:
    from xdoe.store.schema._database import Database

__all__ = ["RecorderState", "RecorderObserver"]


class RecorderObserver(Protocol):
    """What a :class:`~xdoe.store.RunRecorder` tells the observers in its
    ``observers`` list, in the run's process and order, as it records them
    (:mod:`xdoe.tracking` logs them to TensorBoard and MLflow). Values are
    as stored: a non-finite ``reward``/``objective`` arrives as ``None``.
    An observer must not raise: the recorder does not catch for it."""

    def phase_started(self, index: int, name: str, mode: str, config: dict[str, Any]) -> None:
        """A phase started, or a resumed instance continues it."""

    def episode_finished(self, worker: int, episode: int, agent: str, steps: int,
                         reward: float | None, objective: float | None) -> None:
        """One worker's episode ended for one agent (recorded in the open phase)."""

    def run_finished(self, status: str) -> None:
        """The instance ended with ``status`` (``finished``, ``failed``, ``interrupted``)."""


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _insert_id(conn: Connection, table: Table, values: dict[str, Any]) -> int:
    """Insert one row into ``table``; its new id."""
    key = conn.execute(insert(table).values(**values)).inserted_primary_key
    assert key is not None
    return int(key[0])


def _get_or_create(conn: Connection, table: Table, lookup: dict[str, Any], values: dict[str, Any]) -> int:
    """Id of the row of ``table`` matching ``lookup`` (a unique key), inserted
    with ``values`` when missing. Safe against a concurrent insert of the same key."""
    stmt = select(table.c.id).filter_by(**lookup)
    found = conn.execute(stmt).scalar_one_or_none()
    if found is not None:
        return int(found)
    try:
        with conn.begin_nested():
            return _insert_id(conn, table, {**lookup, **values})
    except IntegrityError:  # another process inserted it meanwhile
        return int(conn.execute(stmt).scalar_one())


class RecorderState:
    """The attributes :class:`~xdoe.store.RunRecorder` sets, for its mixins."""

    # set by RunRecorder.__init__ / start
    store: Any
    _db: "Database"
    run_uid: str
    document: dict[str, Any]
    content_hash: str
    file_sha256: str | None
    instance_id: int | None
    instance_uuid: str
    status: str | None
    paths: ResultsPaths | None
    results_root: Path
    policy: StepPolicy
    flush_rows: int
    peak_buffered: int
    total_episodes: int
    total_steps: int
    _lock: threading.RLock
    _phase_id: int | None
    _phases: list[dict[str, Any]]
    _files: ResultsWriter | None
    _start: Any
    _episodes: list[tuple[Any, ...]]
    _steps: list[tuple[Any, ...]]
    _insert_sql: dict[str, str]
    _raw: Any
    _writers: dict[tuple[Any, ...], Callable[..., None]]
    stored_steps: int
    observers: list[RecorderObserver]
