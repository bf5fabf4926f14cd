"""The store facade: open a store by URL, record runs, answer every query
of the executor, the command line and the dashboard.

:class:`Store` is put together from mixins, one per responsibility, each in
its own module (none imports this one): :class:`~xdoe.store._run_rows.RunRows`
(runs, instances, episodes, the "finished" rule),
:class:`~xdoe.store._instance_rows.InstanceRows` (resume),
:class:`~xdoe.store._checkpoint_rows.CheckpointRows`,
:class:`~xdoe.store._claims.ClaimRows`, :class:`~xdoe.store._stop.StopRows`,
:class:`~xdoe.store._views.StoreViews` (status, export, lineage, dashboard)
and :class:`~xdoe.store._session_rows.SessionRows` (session trees).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy import inspect as sa_inspect
from sqlalchemy.engine import URL
from sqlalchemy.exc import SQLAlchemyError

from xdoe.errors import NoStoreError, StoreError
from xdoe.store import _tables as t
from xdoe.store._base import SCHEMA_LOCK as _SCHEMA_LOCK
from xdoe.store._engine import WRITE, make_engine, mask_url, require_sqlite_file, resolve_url, store_error
from xdoe.store._instance_rows import InstanceInfo, RunInfo
from xdoe.store._recorder import RunRecorder
from xdoe.store._run_rows import IN_CHUNK
from xdoe.store._session_rows import SessionRows
from xdoe.store._tables import METADATA, SCHEMA_VERSION
from xdoe.store._upgrade import schema_number
from xdoe.store._views import StoreViews

__all__ = ["Store", "RunInfo", "InstanceInfo", "IN_CHUNK", "StoreError"]


class Store(StoreViews, SessionRows):
    """The results store, chosen by a SQLAlchemy URL.

    ``Store()`` opens ``$XRUN_STORE`` or ``sqlite:///_outputs/xrun.sqlite``
    (creating the folder); ``Store("postgresql+psycopg://user:pw@host:5432/db")``
    a PostgreSQL database. Tables are created when missing; several processes
    may open and write the same store at once.

    ``create=False`` opens only a store that exists (nothing is created, not
    even the SQLite file's folder). ``read_only=True`` (implies
    ``create=False``; the commands that only read) also never writes it: a
    SQLite file is opened ``mode=ro`` with no journal-mode change, and can be
    read on read-only media (:func:`xdoe.store._engine.make_engine`).

    Raises:
        StoreError: the URL is malformed, the server cannot be reached, the
            file cannot be opened or was written by a newer schema. The
            message names the URL with its password masked.
        NoStoreError: ``create`` is false and there is no store at the URL.
    """

    def __init__(self, url: str | URL | None = None, *, create: bool = True, read_only: bool = False) -> None:
        self._url = resolve_url(url)
        self.url = mask_url(self._url)
        """The store's URL with the password masked."""
        create = create and not read_only
        self.read_only = read_only
        """Opened only to read (``read_only=True``)."""
        if not create:
            require_sqlite_file(self._url, self.url)
        self.engine = make_engine(self._url, read_only=read_only)
        """The SQLAlchemy engine (reading transactions)."""
        self._writer = self.engine.execution_options(**{WRITE: True})
        self._sessions: dict[bool, Any] = {}  # write -> sessionmaker, made on first use (the ORM)
        self.schema_version = SCHEMA_VERSION
        """The schema version of the store as opened (older than
        :data:`SCHEMA_VERSION` only when opened with ``create=False``: reads
        do not upgrade; see :mod:`xdoe.store._upgrade`)."""
        try:
            self._create_schema() if create else self._check_schema()
        except Exception:
            self.engine.dispose()
            raise

    # -- life cycle -------------------------------------------------------
    def _check_schema(self) -> None:
        """Raise :class:`NoStoreError` when the xdoe tables are missing, and
        :class:`StoreError` when the schema is newer than this xdoe's."""
        try:
            with self.engine.connect() as conn:
                if not sa_inspect(conn).has_table(t.store_meta.name):
                    raise NoStoreError(f"no store at {self.url} (no xdoe tables)")
                row = _schema_version(conn)
        except SQLAlchemyError as exc:
            raise store_error(self._url, "open", exc) from None
        schema_number(self.url, row)
        if row is not None:
            self.schema_version = int(row)

    @property
    def has_end_columns(self) -> bool:
        """Whether episode and step rows have ``terminated``, ``truncated``,
        ``cut_by`` (schema version 2; a store only read keeps its version)."""
        return self.schema_version >= 2

    def _sqlite_schema(self) -> tuple[bool, set[str] | None]:
        """SQLite: ``(complete, tables)``: whether every table and index of
        this xdoe exists and the schema version is recorded, and the names of
        the tables there, from one read of ``sqlite_master`` (no write lock,
        none of ``create_all``'s per-table and per-index reflection queries);
        ``(False, None)`` on other backends (they take the full path).
        Raises :class:`StoreError` for a newer schema."""
        if self.engine.dialect.name != "sqlite":
            return False, None
        needed = {("table", table.name) for table in METADATA.sorted_tables}
        needed |= {("index", str(i.name)) for table in METADATA.sorted_tables for i in table.indexes}
        with self.engine.connect() as conn:
            present = set(conn.exec_driver_sql(
                "SELECT type, name FROM sqlite_master WHERE type IN ('table', 'index')").all())
            tables = {name for kind, name in present if kind == "table"}
            if not needed <= present:
                return False, tables
            row = _schema_version(conn)
        schema_number(self.url, row)
        return row is not None and int(row) == SCHEMA_VERSION, tables

    def _create_schema(self) -> None:
        try:
            complete, tables = self._sqlite_schema()
            if complete:  # the usual case: an existing store (issue 16)
                return
            with self._writer.begin() as conn:
                if conn.dialect.name == "postgresql":
                    conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({_SCHEMA_LOCK})")
                if tables is not None:  # SQLite, under the write lock: the tables there now are final
                    now = {name for (name,) in conn.exec_driver_sql(
                        "SELECT name FROM sqlite_master WHERE type = 'table'")}
                    # one read instead of create_all's two PRAGMA table_info per table
                    METADATA.create_all(conn, tables=[table for table in METADATA.sorted_tables
                                                      if table.name not in now], checkfirst=False)
                else:
                    METADATA.create_all(conn)
                # create_all adds missing tables only: an index added to an
                # existing table is created here (no migrations yet); a table
                # that was not there before came with its indexes (from
                # create_all, or from another process opening the store at once)
                for table in METADATA.sorted_tables:
                    if tables is not None and table.name not in tables:
                        continue
                    for index in table.indexes:
                        index.create(conn, checkfirst=True)
                row = _schema_version(conn)
                if row is None:
                    conn.execute(
                        t.store_meta.insert(),
                        [{"key": "schema_version", "value": str(SCHEMA_VERSION)}],
                    )
                else:
                    schema_number(self.url, row)
                    if int(row) < SCHEMA_VERSION:  # an older store opened for writing
                        from xdoe.store._upgrade import upgrade

                        upgrade(conn, int(row))
        except SQLAlchemyError as exc:
            raise store_error(self._url, "open", exc) from None

    def close(self) -> None:
        """Release every pooled connection (the store may still be used afterwards)."""
        self.engine.dispose()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Store({self.url!r})"

    # -- recording --------------------------------------------------------
    def recorder(
        self,
        document: dict[str, Any],
        *,
        results_root: Path | str | None = None,
        store_steps: str = "none",
        flush_rows: int = 1000,
        file_sha256: str | None = None,
    ) -> RunRecorder:
        """A :class:`RunRecorder` for one execution of ``document``.

        Args:
            document: the resolved run document (needs a string ``uid``).
            results_root: where results folders go; ``None`` means ``_outputs/results``.
            store_steps: ``none``, ``all`` or ``every:N``.
            flush_rows: buffered episode and step rows written per transaction.
            file_sha256: sha256 (hex) of the bytes of the file ``document``
                was read from; recorded with the run (see
                :meth:`finished_file_hashes`). Give it only when those bytes
                alone determine the document (not when its uid came from the
                file name).

        Raises:
            StoreStepsError: ``store_steps`` is invalid.
            DocumentError: the document has no string ``uid``.
        """
        return RunRecorder(self, document, results_root=results_root, store_steps=store_steps,
                           flush_rows=flush_rows, file_sha256=file_sha256)


def _schema_version(conn: Any) -> str | None:
    """The schema version the store records (``None``: not recorded yet)."""
    meta = t.store_meta.c
    return conn.execute(select(meta.value).where(meta.key == "schema_version")).scalar_one_or_none()
