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

from sqlalchemy.engine import URL
from sqlalchemy.exc import SQLAlchemyError

from xdoe.errors import StoreError
from xdoe.store._engine import WRITE, make_engine, mask_url, require_sqlite_file, resolve_url
from xdoe.store._instance_rows import InstanceInfo, RunInfo, RunState
from xdoe.store._recorder import RunRecorder
from xdoe.store._run_rows import IN_CHUNK
from xdoe.store._session_rows import SessionRows
from xdoe.store import _tables as t
from xdoe.store._schema import open_for_reading, open_for_writing
from xdoe.store._tables import SCHEMA_VERSION
from xdoe.store._views import StoreViews

__all__ = ["Store", "RunInfo", "RunState", "InstanceInfo", "IN_CHUNK", "StoreError"]


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

    def __init__(self, url: str | URL | None = None, *, create: bool = True, read_only: bool = False,
                 wait: float = 0.0) -> None:
        self._url = resolve_url(url)
        self.wait = max(float(wait), 0.0)
        """Seconds to wait, with back-off, for a store that went away (its
        server stopped or restarting) before a :class:`~xdoe.errors.StoreLostError`
        (``xrun experiment-start --store-wait``); 0: at once."""
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
        do not upgrade; see :mod:`xdoe.store._schema`)."""
        try:
            if self.wait > 0:  # a campaign's worker opening the store while its server restarts
                try:
                    self._reach("open", lambda: self.engine.connect().close())
                except SQLAlchemyError:
                    pass  # not a lost store: opening it names the error
            self._create_schema() if create else self._check_schema()
        except Exception:
            self.engine.dispose()
            raise

    # -- life cycle -------------------------------------------------------
    def _check_schema(self) -> None:
        """Raise :class:`NoStoreError` when the xdoe tables are missing, and
        :class:`StoreError` when the schema is newer than this xdoe's."""
        self.schema_version = open_for_reading(self)

    @property
    def has_end_columns(self) -> bool:
        """Whether episode and step rows have ``terminated``, ``truncated``,
        ``cut_by`` (schema version 2; a store only read keeps its version)."""
        return self.schema_version >= 2

    def _create_schema(self) -> None:
        """Create the tables, or upgrade an older schema (:mod:`xdoe.store._schema`)."""
        self.schema_version = open_for_writing(self)

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
        content_hash: str | None = None,
        design: dict[str, Any] | None = None,
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
            content_hash: :func:`document_hash` of ``document``, when the caller has it.
            design: the design of the run's experiment as xgen's manifest
                records it (:func:`xdoe._files.manifest_design`), recorded on
                the experiment (:meth:`experiment_design`) when it differs.

        Raises:
            StoreStepsError: ``store_steps`` is invalid.
            DocumentError: the document has no string ``uid``.
        """
        return RunRecorder(self, document, results_root=results_root, store_steps=store_steps,
                           flush_rows=flush_rows, file_sha256=file_sha256, content_hash=content_hash,
                           design=design)

    def experiment_design(self, experiment: str) -> dict[str, Any] | None:
        """The design ``experiment``'s runs come from, as the manifest of its
        latest recorded run recorded it (method, every factor's coding,
        blocks...; :func:`xdoe._files.manifest_design`); ``None`` when no run
        was started with a manifest, or the store predates schema version 4."""
        from sqlalchemy import inspect as sa_inspect, select

        with self._core_read("read the design of an experiment from") as conn:
            if "design" not in {c["name"] for c in sa_inspect(conn).get_columns("experiment")}:
                return None
            value = conn.execute(select(t.experiment.c.design).where(t.experiment.c.uid == experiment)
                                 ).scalar_one_or_none()
        return value if isinstance(value, dict) else None
